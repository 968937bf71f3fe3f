package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/scenario"
)

// The user's path: the workshop copied out, orders-pdb set to
// maxUnavailable 0, rehearsed. Both orders pods die with blue-mng, so the
// rehearsal is violated and exits 2, naming the pods, the PDB and the step.
func TestRehearseViolatedExitsTwo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, stderr := runLadder("scenario", "show", scenario.Default, "--to", dir); code != 0 {
		t.Fatalf("show: exit %d: %s", code, stderr)
	}
	orders := filepath.Join(dir, "manifests", "orders.yaml")
	b, err := os.ReadFile(orders)
	if err != nil {
		t.Fatal(err)
	}
	pdb := "  name: orders-pdb\n  namespace: orders\nspec:\n  minAvailable: 1\n"
	if !strings.Contains(string(b), pdb) {
		t.Fatalf("%s has no orders-pdb with minAvailable 1", orders)
	}
	b = []byte(strings.Replace(string(b), pdb, strings.Replace(pdb, "minAvailable: 1", "maxUnavailable: 0", 1), 1))
	if err := os.WriteFile(orders, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runLadder("rehearse", "--scenario", filepath.Join(dir, "scenario.yaml"))
	if code != 2 || stderr != "error: rehearsal violated\n" {
		t.Fatalf("exit %d, stderr %q; want 2 and the rehearsal violated", code, stderr)
	}
	lines := strings.Split(stdout, "\n")
	if !strings.Contains(lines[0], ": violated after ") || strings.Count(stdout, "  violated: ") != 2 ||
		!strings.Contains(lines[1], "PodDisruptionBudget orders/orders-pdb allowed no disruption") ||
		!strings.Contains(lines[1], "step 1.31 node-group blue-mng") {
		t.Errorf("summary does not name the violations:\n%s", strings.Join(lines[:4], "\n"))
	}
}
