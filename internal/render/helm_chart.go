package render

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"helm.sh/helm/v4/pkg/ignore"
)

// chartTree is what ladder learns from a chart directory before Helm loads
// it: the files Helm will read and, among them, the templates.
type chartTree struct {
	consumed  consumedSet
	templates []string // template files, in walk (lexical) order
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

// scanChart walks the chart directory as Helm's loader will (the chart's
// .helmignore plus Helm's default rules, symbolic links followed), checking
// that no file is over MaxFileBytes, the whole under MaxChartBytes, and that
// no symbolic link leads back into a directory already walked — Helm's own
// walk (internal/sympath) follows such a loop until the path is too long.
func scanChart(dir string) (chartTree, *Problem) {
	tree := chartTree{consumed: consumedSet{}}
	rules := ignore.Empty()
	if f := filepath.Join(dir, ignore.HelmIgnore); isRegular(f) {
		if r, err := ignore.ParseFile(f); err == nil {
			rules = r
		}
	}
	rules.AddDefaults()

	var total int64
	visited := map[string]bool{}
	var walk func(real, shown string) *Problem
	walk = func(real, shown string) *Problem {
		resolved, err := filepath.EvalSymlinks(real)
		if err != nil {
			return &Problem{File: shown, Line: 1, Message: "helm cannot read the chart: " + err.Error(),
				Fix: "remove the broken or looping symbolic link"}
		}
		if visited[resolved] {
			return &Problem{File: shown, Line: 1,
				Message: fmt.Sprintf("symbolic link loop: %s leads back to %s, which Helm would walk forever", shown, resolved),
				Fix:     "remove the symbolic link or point it outside the chart"}
		}
		visited[resolved] = true
		entries, err := os.ReadDir(real)
		if err != nil {
			return &Problem{File: shown, Line: 1, Message: "helm cannot read the chart: " + err.Error()}
		}
		for _, e := range entries {
			path, name := filepath.Join(real, e.Name()), filepath.Join(shown, e.Name())
			rel := filepath.ToSlash(strings.TrimPrefix(name, dir+string(filepath.Separator)))
			fi, err := os.Stat(path) // follows links, as Helm does
			if err != nil {
				return &Problem{File: name, Line: 1, Message: "helm cannot read the chart: " + err.Error(),
					Fix: "remove the broken or looping symbolic link"}
			}
			if rules.Ignore(rel, fi) {
				continue
			}
			if fi.IsDir() {
				if p := walk(path, name); p != nil {
					return p
				}
				continue
			}
			if !fi.Mode().IsRegular() {
				continue // Helm refuses it and says so
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
			if !crdPath.MatchString(rel) {
				tree.consumed.add(name)
			}
			if templatePath.MatchString(rel) {
				tree.templates = append(tree.templates, name)
			}
		}
		return nil
	}
	if p := walk(dir, dir); p != nil {
		return tree, p
	}
	return tree, nil
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
