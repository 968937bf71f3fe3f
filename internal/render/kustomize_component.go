package render

import (
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/types"
)

// componentFiles reports whether the kustomization file of dir is a
// kustomize Component (kind: Component, kustomize.config.k8s.io/v1alpha1).
// A component is a reusable piece of overlays: kustomize refuses to build
// one on its own ("expected kind 'Kustomization'"), and its resources and
// patches reach the cluster only as the kustomizations that list it under
// `components` build them — their objects are checked there, at the
// component's files. So a component is not built: the Result only names
// every file it holds as consumed (its kustomization file, its patches,
// generator inputs and resources, local bases and all), so that the walk
// neither builds nor judges them on their own.
func componentFiles(dir, kfile string) (Result, bool) {
	data, err := readCapped(kfile)
	if err != nil {
		return Result{}, false
	}
	var k types.Kustomization
	if k.Unmarshal(data) != nil || k.Kind != types.ComponentKind {
		return Result{}, false
	}
	k.FixKustomization()
	consumed := consumedSet{}
	consumed.add(kfile)
	for _, f := range kustomizationPaths(&k) {
		if isRemoteReference(f.ref) {
			continue
		}
		p := filepath.Join(dir, f.ref)
		if _, err := os.Stat(p); err == nil {
			consumed.add(p)
		}
	}
	return Result{Consumed: consumed.sorted()}, true
}
