package render

import (
	"fmt"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// buildKustomization builds the kustomization in dir as `kubectl apply -k dir` does:
// kustomize's krusty API with the options kubectl passes
// (k8s.io/cli-runtime/pkg/resource/kustomizevisitor.go:
// krusty.MakeDefaultOptions with ReorderOptionLegacy — files only from under
// the root, plugins and exec off). A build that fails is one Problem naming
// the kustomization file and kustomize's error; Docs is then empty.
func buildKustomization(dir string) (Result, error) {
	kfile := kustomizationFile(dir)
	if kfile == "" {
		return Result{}, fmt.Errorf("%s: no kustomization.yaml, kustomization.yml or Kustomization file", dir)
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return Result{}, err
	}
	tree := scanKustomizations(dir)
	if component, ok := componentFiles(dir, kfile); ok {
		return component, nil
	}
	if tree.remote != nil {
		return Result{Consumed: tree.consumed.sorted(), Problems: []Problem{tree.remote.problem()}}, nil
	}

	disk := newReadOnlyDisk()
	rootFile, err := filepath.Abs(kfile)
	if err != nil {
		return Result{}, err
	}
	disk.rewrite = func(path string, data []byte) ([]byte, error) {
		if path != rootFile {
			return data, nil
		}
		return withOriginAnnotations(data), nil
	}
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionLegacy
	m, err := krusty.MakeKustomizer(opts).Run(disk, absDir)
	if err != nil {
		return Result{Consumed: tree.consumed.sorted(), Problems: []Problem{{
			File:    kfile,
			Line:    1,
			Message: "kustomize build failed: " + shortKustomizeError(err, absDir, dir),
			Fix:     fmt.Sprintf("make `kubectl kustomize %s` succeed (a missing base or patch target is the usual cause)", dir),
		}}}, nil
	}

	res := m.Resources()
	origins := make([]*resource.Origin, len(res))
	for i, r := range res {
		origins[i], _ = r.GetOrigin()
	}
	// The origin and transformer annotations are kustomize's bookkeeping,
	// which `kubectl apply -k` never sends (krusty strips them unless the
	// kustomization asks for them in buildMetadata).
	if err := m.RemoveOriginAnnotations(); err != nil {
		return Result{}, err
	}
	if err := m.RemoveTransformerAnnotations(); err != nil {
		return Result{}, err
	}

	out := Result{}
	consumed := consumedSet{}
	for p := range tree.consumed {
		consumed.add(p)
	}
	for abs := range disk.read {
		consumed.add(underDir(dir, absDir, abs))
	}
	sources := map[string][]byte{}
	for i, r := range res {
		body, err := r.AsYAML()
		if err != nil {
			return Result{}, err
		}
		file, line := kfile, 1
		if o := origins[i]; o != nil && o.Repo == "" {
			switch {
			case o.Path != "":
				file = filepath.Join(dir, o.Path)
				if _, ok := sources[file]; !ok {
					sources[file], _ = readCapped(file)
				}
				line = lineOfObject(sources[file], r.GetKind(), r.GetName())
			case o.ConfiguredIn != "":
				file = filepath.Join(dir, o.ConfiguredIn)
				line = lineOfGeneratorEntry(file, r.GetName())
			}
		}
		out.Docs = append(out.Docs, Doc{File: file, Line: line, Body: body})
	}
	out.Consumed = consumed.sorted()
	return out, nil
}

// withOriginAnnotations adds "originAnnotations" to a kustomization's
// buildMetadata. krusty records each resource's origin only when the root
// kustomization asks for it (internal/target.KustTarget.makeCustomizedResMap)
// and offers no option to ask; kustomize's own origin path is the most
// exact source ladder can get, so the root kustomization asks as it is read.
// A file that is not a YAML mapping is left alone for kustomize to reject.
func withOriginAnnotations(data []byte) []byte {
	node, err := kyaml.Parse(string(data))
	if err != nil || node.YNode().Kind != kyaml.MappingNode {
		return data
	}
	list, err := node.Pipe(kyaml.LookupCreate(kyaml.SequenceNode, "buildMetadata"))
	if err != nil || list == nil || list.YNode().Kind != kyaml.SequenceNode {
		return data
	}
	for _, e := range list.Content() {
		if e.Value == types.OriginAnnotations {
			return data
		}
	}
	list.YNode().Content = append(list.YNode().Content, kyaml.NewStringRNode(types.OriginAnnotations).YNode())
	s, err := node.String()
	if err != nil {
		return data
	}
	return []byte(s)
}

// underDir expresses an absolute path read during a build relative to the
// directory the caller named, so Consumed and Doc.File share the caller's
// form of paths.
func underDir(dir, absDir, abs string) string {
	rel, err := filepath.Rel(absDir, abs)
	if err != nil {
		return abs
	}
	return filepath.Join(dir, rel)
}

// shortKustomizeError makes kustomize's error chain one line and names
// paths as the caller did rather than absolutely.
func shortKustomizeError(err error, absDir, dir string) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	s = strings.ReplaceAll(s, absDir+string(filepath.Separator), strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
	s = strings.ReplaceAll(s, absDir, dir)
	const maxLen = 400
	if len(s) > maxLen {
		s = s[:maxLen] + "…"
	}
	return s
}

// lineOfGeneratorEntry is the line of the generator entry ("- name: extra")
// in a kustomization whose name is part of the generated object's name
// (kustomize adds the name prefix, suffix and content hash), or 1.
func lineOfGeneratorEntry(file, generated string) int {
	data, err := readCapped(file)
	if err != nil {
		return 1
	}
	best, bestLen := 1, 0
	for i, l := range strings.Split(string(data), "\n") {
		t := strings.TrimPrefix(strings.TrimSpace(l), "- ")
		v, ok := strings.CutPrefix(t, "name:")
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		if ok && v != "" && strings.Contains(generated, v) && len(v) > bestLen {
			best, bestLen = i+1, len(v)
		}
	}
	return best
}
