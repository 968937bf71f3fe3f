package htmlreport_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/htmlreport"
	"github.com/ladder-eks/ladder/internal/journal"
	"github.com/ladder-eks/ladder/internal/rehearse"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// upgraded is a built-in scenario upgraded to 1.31 by the executor on the
// twin with a journal, as `ladder upgrade --approve` keeps it: the
// rehearsal made first, each step, and the end state.
func upgraded(t *testing.T, name string) *journal.Record {
	t.Helper()
	sc, err := scenario.Resolve(name)
	if err != nil {
		t.Fatal(err)
	}
	predicted := journal.NewMemory(sc.Spec.Cluster.Name, "1.31")
	first, err := rehearse.Run(sc, rehearse.Options{To: "1.31", Journal: predicted})
	if err != nil {
		t.Fatal(err)
	}
	j := journal.NewMemory(sc.Spec.Cluster.Name, "1.31")
	if err := j.SetRehearsal(journal.RehearsedSteps(first), journal.Predict(first, predicted.Record())); err != nil {
		t.Fatal(err)
	}
	if sc, err = scenario.Resolve(name); err != nil {
		t.Fatal(err)
	}
	run, err := rehearse.Run(sc, rehearse.Options{To: "1.31", Journal: j})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status == "succeeded" {
		if err := j.SetOutcome(journal.StateOf(run)); err != nil {
			t.Fatal(err)
		}
	}
	return j.Record()
}

// TestUpgradeReport: the page of a finished upgrade lists every step the
// journal recorded with its rehearsed time, the comparison's verdict and
// tables; a paused one says paused and names the pod and PDB its drain
// waits on, and that there is nothing to compare yet. The same journal
// gives the same bytes.
func TestUpgradeReport(t *testing.T) {
	rec := upgraded(t, "workshop")
	var a, b bytes.Buffer
	if err := htmlreport.WriteUpgrade(&a, rec, "journal.json", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := htmlreport.WriteUpgrade(&b, rec, "journal.json", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two pages of one journal differ")
	}
	page := a.String()
	for _, want := range []string{
		"<h1>Upgrade of <span id=\"scenario\">eksworkshop-eksctl</span> to 1.31</h1>",
		"<strong>succeeded</strong>",
		"prediction vs reality: agreed on every step",
		"<tr><td>1.31</td><td>node-group/initial</td><td>done</td><td>3/3</td>",
		"<tr><td>initial</td><td>3</td><td>3</td></tr>",
		"No drain paused the upgrade.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}

	paused := upgraded(t, "pdb-deadlock")
	a.Reset()
	if err := htmlreport.WriteUpgrade(&a, paused, "journal.json", time.Time{}); err != nil {
		t.Fatal(err)
	}
	page = a.String()
	for _, want := range []string{"<strong>paused</strong>", "orders/orders-pdb", "no final state recorded"} {
		if !strings.Contains(page, want) {
			t.Errorf("the paused upgrade's page lacks %q", want)
		}
	}
}
