package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/scenario"
)

// The user's path: the workshop copied out, a PDB of maxUnavailable 0
// added over catalog, rehearsed. The catalog pod runs on default-selfmng,
// whose instance refresh terminates its node once the lifecycle hook's
// heartbeat times out, the pod still on it, so the rehearsal is violated
// and exits 2, naming the pod, the PDB and the step. (orders-pdb at
// maxUnavailable 0 no longer does: Ladder drains blue-mng itself and waits
// on the PDB, so that rehearsal is stuck.)
func TestRehearseViolatedExitsTwo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, stderr := runLadder("scenario", "show", scenario.Default, "--to", dir); code != 0 {
		t.Fatalf("show: exit %d: %s", code, stderr)
	}
	catalog := filepath.Join(dir, "manifests", "catalog.yaml")
	b, err := os.ReadFile(catalog)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, `---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: catalog-pdb
  namespace: catalog
spec:
  maxUnavailable: 0
  selector:
    matchLabels:
      app.kubernetes.io/name: catalog
      app.kubernetes.io/component: service
`...)
	if err := os.WriteFile(catalog, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runLadder("rehearse", "--scenario", filepath.Join(dir, "scenario.yaml"))
	if code != 2 || stderr != "error: rehearsal violated\n" {
		t.Fatalf("exit %d, stderr %q; want 2 and the rehearsal violated", code, stderr)
	}
	lines := strings.Split(stdout, "\n")
	if !strings.Contains(lines[0], ": violated after ") || strings.Count(stdout, "  violated: ") != 1 ||
		!strings.Contains(lines[1], "PodDisruptionBudget catalog/catalog-pdb allowed no disruption") ||
		!strings.Contains(lines[1], "step 1.31 node-group default-selfmng") {
		t.Errorf("summary does not name the violation:\n%s", strings.Join(lines[:4], "\n"))
	}
}
