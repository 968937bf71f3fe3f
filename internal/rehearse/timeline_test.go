package rehearse

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/timeline"
)

// The recorder only reads: a rehearsal with a timeline reports exactly
// what one without reports.
func TestTimelineLeavesTheReportUnchanged(t *testing.T) {
	for _, name := range []string{"workshop", "karpenter-drift", "pdb-deadlock"} {
		t.Run(name, func(t *testing.T) {
			plain, err := Run(loadBuiltin(t, name), Options{})
			if err != nil {
				t.Fatal(err)
			}
			withTimeline, tl, err := RunTimeline(loadBuiltin(t, name), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tl == nil {
				t.Fatal("no timeline")
			}
			var a, b bytes.Buffer
			if err := plain.WriteJSON(&a); err != nil {
				t.Fatal(err)
			}
			if err := withTimeline.WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Errorf("the report changed when the timeline was recorded")
			}
		})
	}
}

// The workshop's timeline tells what its report tells: every node of the
// end is alive in it, every replaced node is gone, the versions move from
// 1.30 to 1.31, and the probe's outages show as workloads at zero.
func TestWorkshopTimeline(t *testing.T) {
	rep, tl, err := RunTimeline(loadBuiltin(t, "workshop"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tl.End != rep.MakespanSeconds {
		t.Errorf("end = %v, want the makespan %v", tl.End, rep.MakespanSeconds)
	}
	alive := map[string]timeline.NodeLife{}
	gone := 0
	for _, n := range tl.Nodes {
		if n.Gone == nil {
			alive[n.Name] = n
		} else {
			gone++
			if n.Draining != nil && *n.Draining > *n.Gone {
				t.Errorf("node %s drained at %v after it was gone at %v", n.Name, *n.Draining, *n.Gone)
			}
		}
	}
	if len(alive) != len(rep.Nodes) {
		t.Errorf("%d nodes alive at the end, the report has %d", len(alive), len(rep.Nodes))
	}
	for _, n := range rep.Nodes {
		life, ok := alive[n.Name]
		switch {
		case !ok:
			t.Errorf("node %s of the report is not alive in the timeline", n.Name)
		case life.Version != n.Version || life.Group != n.Group:
			t.Errorf("node %s: timeline %s %s, report %s %s", n.Name, life.Group, life.Version, n.Group, n.Version)
		case life.Ready == nil:
			t.Errorf("node %s never Ready in the timeline", n.Name)
		}
	}
	// Every node of the start was replaced: gone, its drain begun first
	// (but the Fargate pod's node, which goes with its pod).
	for _, n := range tl.Nodes {
		if !n.Initial {
			continue
		}
		if n.Gone == nil {
			t.Errorf("node %s of the start is still there", n.Name)
		} else if n.Draining == nil && n.Group != "fp-profile" {
			t.Errorf("node %s (%s) went without a drain", n.Name, n.Group)
		}
	}
	if len(tl.Versions) != 2 || tl.Versions[0][:5] != "v1.30" || tl.Versions[1][:5] != "v1.31" {
		t.Errorf("versions = %v, want one 1.30 and one 1.31 kubelet", tl.Versions)
	}
	if len(tl.NodePools) != 1 || tl.NodePools[0].Name != "default" || maxOf(tl.NodePools[0].Disrupting) != 1 {
		t.Errorf("nodePools = %+v, want default disrupting at most 1 node", tl.NodePools)
	}
	if maxOf(tl.Availability.Zero) == 0 {
		t.Errorf("no workload ever at zero Ready, but the probe failed %v s", rep.Probe.FailedSeconds)
	}
	pdbs := map[string]report.PDB{}
	for _, p := range rep.PDBs {
		pdbs[p.Namespace+"/"+p.Name] = p
	}
	floors := 0
	for _, w := range tl.Workloads {
		// orders-pdb (minAvailable 1) selects the pods of orders and of
		// orders-mysql: one floor for both, drawn as neither's.
		if w.Namespace == "orders" && (w.Name == "orders" || w.Name == "orders-mysql") &&
			(w.Floor != nil || !slices.Equal(w.PDBs, []string{"orders/orders-pdb"}) || !slices.Equal(w.SharedPDBs, w.PDBs)) {
			t.Errorf("%s: floor %v PDBs %v shared %v, want no floor of its own and orders/orders-pdb shared", w.Name, w.Floor, w.PDBs, w.SharedPDBs)
		}
		// A floor of its own is its PDB's desiredHealthy then.
		for k, f := range w.Floor {
			floors++
			p := pdbs[w.PDBs[0]]
			i := 0
			for i+1 < len(p.Series.T) && p.Series.T[i+1] <= w.T[k] {
				i++
			}
			if len(w.PDBs) != 1 || int32(f) != p.Series.Desired[i] {
				t.Errorf("%s/%s at %v: floor %d, its PDB %s has desiredHealthy %d", w.Namespace, w.Name, w.T[k], f, w.PDBs[0], p.Series.Desired[i])
			}
		}
	}
	if floors == 0 {
		t.Errorf("no workload has a floor of its own: coredns has a PDB of its own")
	}
	if len(tl.PDBs) != len(rep.PDBs) || tl.PDBsOmitted != 0 {
		t.Errorf("%d PDBs plotted (%d omitted), the report has %d", len(tl.PDBs), tl.PDBsOmitted, len(rep.PDBs))
	}
	for _, p := range tl.PDBs {
		if want := pdbs[p.Namespace+"/"+p.Name]; !slices.Equal(p.T, want.Series.T) || !slices.Equal(p.Workloads, want.Workloads) {
			t.Errorf("PDB %s/%s: t %v workloads %v, the report has %v %v", p.Namespace, p.Name, p.T, p.Workloads, want.Series.T, want.Workloads)
		}
	}
	if len(tl.Workloads) != len(rep.Workloads) || tl.WorkloadsOmitted != 0 {
		t.Errorf("%d workloads plotted (%d omitted), the report has %d", len(tl.Workloads), tl.WorkloadsOmitted, len(rep.Workloads))
	}
	if len(tl.Blocked) != len(rep.Blocked) {
		t.Errorf("%d blocked, the report has %d", len(tl.Blocked), len(rep.Blocked))
	}
	for i, b := range tl.Blocked {
		if got, want := b.To-b.From, rep.Blocked[i].Seconds; got-want > 0.001 || want-got > 0.001 {
			t.Errorf("blocked %d lasts %v, the report says %v", i, got, want)
		}
	}
	js, _ := json.Marshal(tl)
	t.Logf("workshop timeline: %d bytes of JSON", len(js))
}

func maxOf(s []int) int {
	m := 0
	for _, v := range s {
		m = max(m, v)
	}
	return m
}
