package render

import (
	"bytes"
	"path/filepath"
	"strings"

	release "helm.sh/helm/v4/pkg/release/v1"
	"sigs.k8s.io/yaml"
)

// renderedDoc is one document of a rendered release and its template.
type renderedDoc struct {
	source string // Helm's "# Source:" path, chart name first
	body   []byte
}

// helmRender is a rendered release as Docs with their origins.
type helmRender struct {
	docs []Doc
	// sources are the template files (under dir) that produced a Doc, with
	// the kinds each produced.
	sources map[string]map[string]bool
}

// add records that file produced an object of kind.
func (r helmRender) add(file, kind string) {
	if r.sources[file] == nil {
		r.sources[file] = map[string]bool{}
	}
	r.sources[file][kind] = true
}

const sourcePrefix = "# Source: "

// helmDocs turns a release into Docs in `helm template`'s order — the
// manifest, then the hooks that are not tests — each with the template file
// and line it came from.
func helmDocs(dir string, r *release.Release) helmRender {
	out := helmRender{sources: map[string]map[string]bool{}}
	var rendered []renderedDoc
	for _, d := range splitRaw([]byte(r.Manifest)) {
		src, body := cutSource(d)
		if hasContent(body) {
			rendered = append(rendered, renderedDoc{source: src, body: body})
		}
	}
	for _, h := range r.Hooks {
		if isTestHook(h) {
			// Rendered, so not a source that "did not render".
			out.add(templateFile(dir, h.Path), h.Kind)
			continue
		}
		if body := []byte(strings.TrimSpace(h.Manifest) + "\n"); hasContent(body) {
			rendered = append(rendered, renderedDoc{source: h.Path, body: body})
		}
	}

	bySource := map[string][]int{}
	for i, d := range rendered {
		bySource[d.source] = append(bySource[d.source], i)
	}
	lines := make([]int, len(rendered))
	for src, idx := range bySource {
		file := templateFile(dir, src)
		data, _ := readCapped(file)
		docs := make([][]byte, len(idx))
		for j, i := range idx {
			docs[j] = rendered[i].body
		}
		for j, l := range templateLines(data, docs) {
			lines[idx[j]] = l
		}
	}
	for i, d := range rendered {
		file := templateFile(dir, d.source)
		var head objectHead
		_ = yaml.Unmarshal(d.body, &head)
		out.add(file, head.Kind)
		out.docs = append(out.docs, Doc{File: file, Line: lines[i], Body: d.body})
	}
	return out
}

// templateFile maps Helm's source path ("mychart/templates/x.yaml",
// "mychart/charts/sub/templates/y.yaml") to the file under dir: Helm names
// the chart first, then the path inside it.
func templateFile(dir, source string) string {
	_, rest, ok := strings.Cut(source, "/")
	if !ok {
		return filepath.Join(dir, source)
	}
	return filepath.Join(dir, filepath.FromSlash(rest))
}

// templateLines finds, for the documents one template rendered (in order),
// the line of the template document each came from. A rendered document
// maps to the template document that writes its kind literally (the n-th of
// its kind to the n-th such document); failing that, documents map in order
// when the counts agree; failing that, to the template's first document.
func templateLines(template []byte, rendered [][]byte) []int {
	src := splitDocuments(template)
	kinds := make([][]string, len(src))
	for i, d := range src {
		for _, l := range scanLiterals(d.body) {
			if l.key == "kind" {
				kinds[i] = append(kinds[i], l.value)
			}
		}
	}
	out := make([]int, len(rendered))
	seen := map[string]int{}
	for j, body := range rendered {
		out[j] = 1
		if len(src) > 0 {
			out[j] = src[0].line
		}
		var h objectHead
		_ = yaml.Unmarshal(body, &h)
		var candidates []int
		for i := range src {
			for _, k := range kinds[i] {
				if k == h.Kind {
					candidates = append(candidates, i)
					break
				}
			}
		}
		n := seen[h.Kind]
		seen[h.Kind]++
		switch {
		case len(candidates) > 0:
			out[j] = src[candidates[min(n, len(candidates)-1)]].line
		case len(src) == len(rendered):
			out[j] = src[j].line
		}
	}
	return out
}

// splitRaw splits a stream at separator lines, keeping every chunk whole.
func splitRaw(data []byte) [][]byte {
	var out [][]byte
	start := 0
	for pos := 0; pos < len(data); {
		next := len(data)
		if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
			next = pos + i + 1
		}
		if isSeparator(data[pos:next]) {
			out = append(out, data[start:pos])
			start = next
		}
		pos = next
	}
	return append(out, data[start:])
}

// cutSource takes Helm's "# Source:" line out of a rendered document.
func cutSource(doc []byte) (string, []byte) {
	for rest := doc; len(rest) > 0; {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		if s, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte(sourcePrefix)); ok {
			body := append(append([]byte{}, doc[:len(doc)-len(rest)]...), after...)
			return string(bytes.TrimSpace(s)), body
		}
		rest = after
	}
	return "", doc
}

// hasContent reports whether a document holds more than blank and comment
// lines.
func hasContent(doc []byte) bool {
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			return true
		}
	}
	return false
}
