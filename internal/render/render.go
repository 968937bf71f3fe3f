package render

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Helm renders the chart in dir as `helm template` does (renderHelm), in a
// process of its own under ladder's render budgets (RenderTime,
// RenderOutputBytes, RenderMemoryBytes, RenderStackBytes). A chart that
// runs out of one is a Problem at its Chart.yaml naming the budget; its
// templates are then still scanned for literal API versions.
func Helm(dir string, opts HelmOptions) (Result, error) {
	chartFile := filepath.Join(dir, "Chart.yaml")
	if !isRegular(chartFile) {
		return Result{}, fmt.Errorf("%s: no Chart.yaml", dir)
	}
	a, over, err := sandboxed(request{Kind: Chart, Dir: dir, Helm: opts})
	if err != nil {
		return Result{}, err
	}
	if over != nil {
		tree := listChart(dir)
		return Result{
			Consumed: tree.consumed.sorted(),
			Problems: []Problem{over.problem(chartFile, dir, "helm template")},
			Literals: tree.literals(nil),
		}, nil
	}
	return a.result()
}

// Kustomize builds the kustomization in dir as `kubectl apply -k dir` does
// (buildKustomization), in a process of its own under ladder's render
// budgets. A build that runs out of one is a Problem at the kustomization
// file naming the budget.
func Kustomize(dir string) (Result, error) {
	kfile := kustomizationFile(dir)
	if kfile == "" {
		return Result{}, fmt.Errorf("%s: no kustomization.yaml, kustomization.yml or Kustomization file", dir)
	}
	a, over, err := sandboxed(request{Kind: Kustomization, Dir: dir})
	if err != nil {
		return Result{}, err
	}
	if over != nil {
		return Result{
			Consumed: scanKustomizations(dir).consumed.sorted(),
			Problems: []Problem{over.problem(kfile, dir, "kubectl kustomize")},
		}, nil
	}
	return a.result()
}

// result is the answer as Helm and Kustomize return it, with the render's
// warnings printed to standard error, where the tool would print them.
func (a answer) result() (Result, error) {
	if len(a.Warnings) > 0 {
		_, _ = os.Stderr.Write(a.Warnings)
	}
	if a.Err != "" {
		return Result{}, errors.New(a.Err)
	}
	return a.Result, nil
}

// maxListedChartEntries bounds listChart.
const maxListedChartEntries = 10000

// listChart is what the parent learns of a chart whose render ran out of
// its budget: its regular files, without following symbolic links or
// opening any but its templates (for their literal API versions). The
// render's own walk (scanChart) is the child's.
func listChart(dir string) chartTree {
	tree := chartTree{consumed: consumedSet{}}
	n := 0
	_ = filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n++; n > maxListedChartEntries {
			return filepath.SkipAll
		}
		if !e.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if !crdPath.MatchString(rel) {
			tree.consumed.add(path)
		}
		if templatePath.MatchString(rel) {
			tree.templates = append(tree.templates, path)
		}
		return nil
	})
	return tree
}
