package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRehearsePDBV1beta1: the twin enforces a policy/v1beta1
// PodDisruptionBudget as kube-apiserver does, like its policy/v1 form: the
// pdb-deadlock scenario with its budget written in v1beta1 rehearses
// byte-identically (before, the budget was ignored and the update passed).
func TestRehearsePDBV1beta1(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("..", "scenario", "builtin", "pdb-deadlock")
	for _, name := range []string{"scenario.yaml", filepath.Join("manifests", "orders.yaml"), filepath.Join("manifests", "kube-system.yaml")} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == filepath.Join("manifests", "orders.yaml") {
			if !strings.Contains(string(data), "apiVersion: policy/v1\n") {
				t.Fatal("orders.yaml has no policy/v1 budget")
			}
			data = []byte(strings.ReplaceAll(string(data), "apiVersion: policy/v1\n", "apiVersion: policy/v1beta1\n"))
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(src, "manifests"))
	if len(entries) != 2 {
		t.Fatalf("pdb-deadlock has %d manifest files; copy them all", len(entries))
	}
	codeV1, outV1, _ := runLadder("rehearse", "--scenario", "pdb-deadlock", "-o", "json")
	code, out, stderr := runLadder("rehearse", "--scenario", filepath.Join(dir, "scenario.yaml"), "-o", "json")
	if code != codeV1 || out != outV1 || codeV1 != 2 {
		t.Errorf("v1beta1 budget: exit %d (v1: %d), same report %v\n%s", code, codeV1, out == outV1, stderr)
	}
}
