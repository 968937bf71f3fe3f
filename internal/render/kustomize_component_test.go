package render

import (
	"path/filepath"
	"slices"
	"testing"
)

// A kustomize Component is not built on its own (kustomize refuses to):
// no objects, no problem, and its files are consumed, so the walk does
// not judge its patches as objects.
func TestKustomizeDoesNotBuildAComponent(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "kustomization.yaml"), "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n- extra.yaml\npatches:\n- path: replicas.yaml\n")
	write(t, filepath.Join(dir, "extra.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n")
	write(t, filepath.Join(dir, "replicas.yaml"), "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 4\n")
	res, err := Kustomize(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Docs) != 0 || len(res.Problems) != 0 {
		t.Fatalf("docs %d problems %v, want neither", len(res.Docs), res.Problems)
	}
	for _, f := range []string{"kustomization.yaml", "extra.yaml", "replicas.yaml"} {
		if !slices.Contains(res.Consumed, filepath.Join(dir, f)) {
			t.Errorf("consumed %q lacks %s", res.Consumed, f)
		}
	}
}
