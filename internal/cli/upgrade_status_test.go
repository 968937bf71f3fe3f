package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/journal"
	"github.com/ladder-eks/ladder/internal/rehearse"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// TestUpgradeStatusJSON: `ladder upgrade status --journal FILE -o json`
// on the journal the executor wrote while it upgraded pdb-deadlock on the
// twin reads the paused node group — its nodes, the pod and PDB holding
// its drain — and --entries lists the records themselves.
func TestUpgradeStatusJSON(t *testing.T) {
	sc, err := scenario.Resolve("pdb-deadlock")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "journal.json")
	j, err := journal.OpenFile(path, sc.Spec.Cluster.Name, "1.31")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rehearse.Run(sc, rehearse.Options{To: "1.31", Journal: j}); err != nil {
		t.Fatal(err)
	}
	j.Close()

	var out, errb bytes.Buffer
	if code := Main([]string{"upgrade", "status", "--journal", path, "-o", "json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var st journal.Status
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if st.RemainingSeconds != nil {
		t.Errorf("remaining %v without a rehearsal in the journal", *st.RemainingSeconds)
	}
	var blocked *journal.BlockedBy
	for _, h := range st.Hops {
		for _, s := range h.Steps {
			if s.Key == "1.31/node-group/blue-mng" {
				blocked = s.BlockedBy
			}
		}
	}
	if blocked == nil || blocked.PDB != "orders/orders-pdb" || !strings.HasPrefix(blocked.Pod, "orders/orders-") {
		t.Errorf("blue-mng blocked by %+v", blocked)
	}

	out.Reset()
	if code := Main([]string{"upgrade", "status", "--journal", path, "--entries"}, &out, &errb); code != 0 {
		t.Fatalf("--entries: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "KEY") || !strings.Contains(out.String(), "1.31/node-group/blue-mng/UpdateNodegroupVersion") {
		t.Errorf("--entries:\n%s", out.String())
	}
	if code := Main([]string{"upgrade", "status", "--journal", path, "-o", "yaml"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), `-o "yaml": use text or json`) {
		t.Errorf("-o yaml: exit %d, %q", code, errb.String())
	}
}
