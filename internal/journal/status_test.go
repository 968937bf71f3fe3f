package journal

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/rehearse"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// rehearseInto rehearses a built-in scenario to `to` with its journal in a
// file, after keeping a first rehearsal's steps in it as `ladder upgrade
// --approve` does, and returns the record the executor left and the
// second rehearsal's report (the cluster the journaled run ended with).
func rehearseInto(t *testing.T, name, to string) (*Record, *report.Report) {
	t.Helper()
	sc, err := scenario.Resolve(name)
	if err != nil {
		t.Fatal(err)
	}
	predicted := NewMemory(sc.Spec.Cluster.Name, to)
	first, err := rehearse.Run(sc, rehearse.Options{To: to, Journal: predicted})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "journal.json")
	j, err := OpenFile(path, sc.Spec.Cluster.Name, to)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.SetRehearsal(RehearsedSteps(first), Predict(first, predicted.Record())); err != nil {
		t.Fatal(err)
	}
	if sc, err = scenario.Resolve(name); err != nil {
		t.Fatal(err)
	}
	run, err := rehearse.Run(sc, rehearse.Options{To: to, Journal: j})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return rec, run
}

func stepOf(t *testing.T, s *Status, key string) StepStatus {
	t.Helper()
	for _, h := range s.Hops {
		for _, st := range h.Steps {
			if st.Key == key {
				return st
			}
		}
	}
	t.Fatalf("no step %s in %+v", key, s)
	return StepStatus{}
}

// TestStatusOfAFinishedUpgrade: the workshop upgraded to 1.31 by the
// executor on the twin — every step done, the managed group's four nodes
// all at 1.31, nothing left, and the elapsed time the journal's own.
func TestStatusOfAFinishedUpgrade(t *testing.T) {
	rec, _ := rehearseInto(t, "workshop", "1.31")
	s := rec.Status("journal.json", time.Time{})
	if len(s.Hops) != 1 || s.Hops[0].To != "1.31" {
		t.Fatalf("hops %+v", s.Hops)
	}
	for _, st := range s.Hops[0].Steps {
		if st.State != "done" || st.RemainingSeconds != 0 || st.RehearsedSeconds == nil {
			t.Errorf("step %+v", st)
		}
	}
	ng := stepOf(t, s, "1.31/node-group/initial")
	if ng.Nodes == 0 || ng.NodesAtVersion != ng.Nodes || ng.BlockedBy != nil {
		t.Errorf("node group: %+v", ng)
	}
	// The executor's virtual time is the rehearsal's: the node group took
	// what the rehearsal measured.
	if ng.ElapsedSeconds != *ng.RehearsedSeconds {
		t.Errorf("node group took %vs, rehearsed %vs", ng.ElapsedSeconds, *ng.RehearsedSeconds)
	}
	if s.RemainingSeconds == nil || *s.RemainingSeconds != 0 || s.ElapsedSeconds <= ng.ElapsedSeconds {
		t.Errorf("elapsed %v, remaining %v", s.ElapsedSeconds, s.RemainingSeconds)
	}
}

// TestStatusOfAPausedDrain: pdb-deadlock's managed group fails its update
// with PodEvictionFailure; the journal's status names the pod and the
// PodDisruptionBudget that hold its drain, its nodes not yet at 1.31, and
// the rehearsed time still to go.
func TestStatusOfAPausedDrain(t *testing.T) {
	rec, _ := rehearseInto(t, "pdb-deadlock", "1.31")
	s := rec.Status("journal.json", time.Time{})
	var failed []StepStatus
	for _, h := range s.Hops {
		for _, st := range h.Steps {
			if st.State == "failed" {
				failed = append(failed, st)
			}
		}
	}
	if len(failed) != 1 {
		t.Fatalf("failed steps %+v", failed)
	}
	f := failed[0]
	if f.BlockedBy == nil || f.BlockedBy.Pod == "" || f.BlockedBy.PDB == "" || f.BlockedBy.Node == "" {
		t.Fatalf("blocked by %+v (%s)", f.BlockedBy, f.Message)
	}
	if f.NodesAtVersion >= f.Nodes {
		t.Errorf("%d/%d nodes at 1.31 in a failed update", f.NodesAtVersion, f.Nodes)
	}
	var text bytes.Buffer
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	want := `Upgrade of eksworkshop-eksctl to 1.31 (journal: journal.json)
HOP    STEP                  STATE    REPLACED   ELAPSED   REMAINING   BLOCKED BY
1.31   pre-checks            done     -          0s        -           -
1.31   control-plane         done     -          10m       -           -
1.31   node-group/blue-mng   failed   5/6        17m       0s          pod orders/orders-56775fc849-dflz7 (PDB orders/orders-pdb) on ip-10-0-18-142.us-west-2.compute.internal
Elapsed 27m; rehearsed remaining 0s.
`
	if text.String() != want {
		t.Errorf("status:\n%s\nwant:\n%s", text.String(), want)
	}
}
