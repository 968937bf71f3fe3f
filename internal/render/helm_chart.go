package render

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart"
	"helm.sh/helm/v4/pkg/chart/loader"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	c2 "helm.sh/helm/v4/pkg/chart/v2"
	c2load "helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/ignore"
	"sigs.k8s.io/yaml"
)

// chartTree is what ladder learns from a chart directory before Helm loads
// it: the files Helm will read and, among them, the templates.
type chartTree struct {
	consumed  consumedSet
	templates []string // template files, in walk (lexical) order
	// files are the chart's files as Helm's directory loader would collect
	// them (names relative to the chart, "/"-separated), read by ladder:
	// Helm loads the chart from them and never opens a file itself.
	files []*archive.BufferedFile
	// decide settles a template's {{ if }} on .Capabilities for the
	// target (capabilityDecider); nil when there is no target.
	decide func(cond string) (taken, ok bool)
}

// templatePath matches a template of the chart or of a subchart, relative to
// the chart root: Helm renders templates/**, and partials (_*.tpl) and
// NOTES.txt produce no objects.
var templatePath = regexp.MustCompile(`^(charts/[^/]+/)*templates/(.+/)?[^_/][^/]*\.ya?ml$`)

// crdPath matches files in a chart's crds/ directory: Helm installs them
// verbatim, without templating, so they are plain manifests for the walk to
// judge, not files the render consumed.
var crdPath = regexp.MustCompile(`^(charts/[^/]+/)*crds/`)

// utf8bom is trimmed from each file as Helm's loader trims it
// (chart/v2/loader.loadDir).
var utf8bom = []byte{0xEF, 0xBB, 0xBF}

// scanChart walks the chart directory as Helm's loader does
// (chart/v2/loader.loadDir: the chart's .helmignore plus Helm's default
// rules, symbolic links followed) and reads the files Helm would load,
// with kustomize's root-only rule (api/internal/loader.RestrictionRootOnly)
// for symbolic links: a link may lead anywhere inside the chart's own
// directory, and one that leads outside it — to /etc/passwd, or to a
// subchart elsewhere in the repository — is a Problem, since Helm would
// read it into .Files and the chart could print it. It checks that no file
// is over MaxFileBytes, the whole under MaxChartBytes, that nothing is a
// device or a FIFO (Helm refuses those too), and that no symbolic link
// leads back into a directory it is in — Helm's own walk
// (internal/sympath) follows such a loop until the path is too long.
func scanChart(dir string) (chartTree, *Problem) {
	tree := chartTree{consumed: consumedSet{}}
	root, err := filepath.EvalSymlinks(dir)
	if err == nil {
		root, err = filepath.Abs(root)
	}
	if err != nil {
		return tree, &Problem{File: dir, Line: 1, Message: "helm cannot read the chart: " + err.Error()}
	}
	rules := ignore.Empty()
	if data, ok := readInChart(root, filepath.Join(root, ignore.HelmIgnore)); ok {
		if r, err := ignore.Parse(bytes.NewReader(data)); err == nil {
			rules = r
		}
	}
	rules.AddDefaults()

	var total int64
	var walk func(real, shown string, ancestors []string) *Problem
	walk = func(real, shown string, ancestors []string) *Problem {
		entries, err := os.ReadDir(real)
		if err != nil {
			return &Problem{File: shown, Line: 1, Message: "helm cannot read the chart: " + err.Error()}
		}
		for _, e := range entries {
			path, name := filepath.Join(real, e.Name()), filepath.Join(shown, e.Name())
			rel := filepath.ToSlash(strings.TrimPrefix(name, dir+string(filepath.Separator)))
			fi, err := os.Lstat(path)
			if err != nil {
				return &Problem{File: name, Line: 1, Message: "helm cannot read the chart: " + err.Error()}
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				target, err := filepath.EvalSymlinks(path)
				if err == nil {
					fi, err = os.Stat(target)
				}
				if err != nil {
					return &Problem{File: name, Line: 1, Message: "helm cannot read the chart: " + err.Error(),
						Fix: "remove the broken or looping symbolic link"}
				}
				if rules.Ignore(rel, fi) {
					continue
				}
				if !within(root, target) {
					return &Problem{File: name, Line: 1,
						Message: fmt.Sprintf("symbolic link leads outside the chart, to %s; ladder reads a chart only from its own directory", target),
						Fix:     "copy what it points to into the chart (a subchart into charts/, as `helm dependency build` does), or add the link to .helmignore"}
				}
				path = target
			} else if rules.Ignore(rel, fi) {
				continue
			}
			if fi.IsDir() {
				if slices.Contains(ancestors, path) {
					return &Problem{File: name, Line: 1,
						Message: fmt.Sprintf("symbolic link loop: %s leads back to %s, which Helm would walk forever", name, path),
						Fix:     "remove the symbolic link or point it outside the chart"}
				}
				if p := walk(path, name, append(ancestors, path)); p != nil {
					return p
				}
				continue
			}
			if !fi.Mode().IsRegular() {
				return &Problem{File: name, Line: 1,
					Message: "helm cannot load the chart: " + name + " is not a regular file (a device, a FIFO or a socket)",
					Fix:     "remove it from the chart, or add it to .helmignore"}
			}
			if fi.Size() > MaxFileBytes {
				return &Problem{File: name, Line: 1, Message: errTooLarge{name, fi.Size()}.Error(),
					Fix: "keep large data out of the chart (or add it to .helmignore)"}
			}
			if total += fi.Size(); total > MaxChartBytes {
				return &Problem{File: dir, Line: 1,
					Message: fmt.Sprintf("chart files add up to more than ladder's %d MiB limit", MaxChartBytes>>20),
					Fix:     "add large files that are not part of the chart to .helmignore"}
			}
			data, err := readCapped(path)
			if err != nil {
				return &Problem{File: name, Line: 1, Message: "helm cannot read the chart: " + err.Error()}
			}
			tree.files = append(tree.files, &archive.BufferedFile{Name: rel, ModTime: fi.ModTime(), Data: bytes.TrimPrefix(data, utf8bom)})
			if !crdPath.MatchString(rel) {
				tree.consumed.add(name)
			}
			if templatePath.MatchString(rel) {
				tree.templates = append(tree.templates, name)
			}
		}
		return nil
	}
	if p := walk(root, dir, []string{root}); p != nil {
		return tree, p
	}
	return tree, nil
}

// within reports whether path (absolute, symbolic links resolved) is root
// or under it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// readInChart reads file when it is a regular file inside root, following
// a symbolic link only within root.
func readInChart(root, file string) ([]byte, bool) {
	target, err := filepath.EvalSymlinks(file)
	if err != nil || !within(root, target) {
		return nil, false
	}
	data, err := readCapped(target)
	return data, err == nil
}

// loadChart loads a chart from the files scanChart read, as Helm's
// directory loader does (chart/loader.LoadDir: the chart API version from
// Chart.yaml picks the loader) but from memory: Helm never opens a file.
func loadChart(files []*archive.BufferedFile) (chart.Charter, error) {
	var base struct {
		APIVersion string `json:"apiVersion,omitempty"`
	}
	for _, f := range files {
		if f.Name == "Chart.yaml" {
			if err := yaml.Unmarshal(f.Data, &base); err != nil {
				return nil, fmt.Errorf("cannot load Chart.yaml: %w", err)
			}
		}
	}
	switch base.APIVersion {
	case c2.APIVersionV1, c2.APIVersionV2, "":
		return c2load.LoadFiles(files)
	}
	// Other versions (Helm 4's v3 charts) load through Helm's archive
	// loader, which dispatches on the version itself; its loader for them
	// is internal to Helm.
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: "chart/" + f.Name, Mode: 0o644, Size: int64(len(f.Data)), ModTime: f.ModTime, Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return loader.LoadArchive(&buf)
}

// literals scans the templates for literal apiVersion/kind pairs of kinds
// the template did not render (rendered maps each template to the kinds it
// rendered; all of them when rendered is nil): a template switched off by
// the values, and an object inside a template that rendered others but
// whose `{{ if .Values.x }}` was not taken. A kind the template did render
// is judged from its rendered object, so the other branch of a version
// check on .Capabilities (the one the target does not take) stays quiet;
// in a template that rendered nothing of the kind, a branch of a
// .Capabilities check the target does not take (t.decide) is left out.
func (t chartTree) literals(rendered map[string]map[string]bool) []Literal {
	var out []Literal
	for _, f := range t.templates {
		data, err := readCapped(f)
		if err != nil {
			continue
		}
		for _, l := range templateLiterals(f, data, t.decide) {
			if !rendered[f][l.Kind] {
				out = append(out, l)
			}
		}
	}
	return out
}
