package cli

import (
	"bytes"
	"encoding/json"
	"os"
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
	path := pausedJournal(t, t.TempDir())

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

// TestUpgradeStatusCompareAndReport: on a journal without a rehearsal,
// --compare says why it cannot compare and exits non-zero; --report writes
// the page (steps, the paused drain) and refuses a directory that does not
// exist before reading anything; --entries with --compare is refused.
func TestUpgradeStatusCompareAndReport(t *testing.T) {
	dir := t.TempDir()
	path := pausedJournal(t, dir)

	var out, errb bytes.Buffer
	if code := Main([]string{"upgrade", "status", "--journal", path, "--compare"}, &out, &errb); code == 0 || !strings.Contains(errb.String(), path+": the journal holds no rehearsal to compare with") {
		t.Errorf("--compare without a rehearsal: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := Main([]string{"upgrade", "status", "--journal", path, "--compare", "--entries"}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "choose one") {
		t.Errorf("--compare --entries: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	page := filepath.Join(dir, "upgrade.html")
	if code := Main([]string{"upgrade", "status", "--journal", path, "--report", page}, &out, &errb); code != 0 {
		t.Fatalf("--report: exit %d: %s", code, errb.String())
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<strong>paused</strong>", "orders/orders-pdb", "data-chart=\"steps\""} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if code := Main([]string{"upgrade", "status", "--journal", path, "--report", dir}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "--report "+dir+": is a directory: name the file to write") {
		t.Errorf("--report naming a directory: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	missing := filepath.Join(dir, "nope", "upgrade.html")
	if code := Main([]string{"upgrade", "status", "--journal", path, "--report", missing}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "--report "+missing+": no such directory") {
		t.Errorf("--report into a missing directory: exit %d, %q", code, errb.String())
	}
}

// pausedJournal is the journal file in dir the executor wrote while it
// upgraded pdb-deadlock on the twin (without a rehearsal kept in it): its
// blue-mng step failed on orders-pdb.
func pausedJournal(t *testing.T, dir string) string {
	t.Helper()
	sc, err := scenario.Resolve("pdb-deadlock")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "journal.json")
	j, err := journal.OpenFile(path, sc.Spec.Cluster.Name, "1.31")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if _, err := rehearse.Run(sc, rehearse.Options{To: "1.31", Journal: j}); err != nil {
		t.Fatal(err)
	}
	return path
}
