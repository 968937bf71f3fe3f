package timeline

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

func ptr(f float64) *float64 { return &f }

// A managed node group's in-place update as the recorder sees it: the old
// node cordoned, drained and gone; its replacement launching, then Ready.
func TestNodeLivesAndGroupCounts(t *testing.T) {
	b := NewBuilder()
	old := NodeSample{Name: "old", Group: "initial", GroupType: "managed", Version: "v1.30.14", Initial: true, Ready: true}
	b.Node(0, old)
	b.Node(10, NodeSample{Name: "new", Group: "initial", Version: "v1.31.14"})
	b.Node(40, NodeSample{Name: "new", Group: "initial", Version: "v1.31.14", Ready: true})
	old.Cordoned = true
	b.Node(40, old) // same instant as new Ready: one sample
	old.Draining = true
	b.Node(50, old)
	old.Draining = false // draining is sticky until gone
	b.Node(60, old)
	b.Node(90, NodeSample{Name: "old", Gone: true})
	b.Node(95, NodeSample{Name: "old", Gone: true}) // a gone node stays gone
	tl := b.Build(100, nil, nil)

	wantLives := []NodeLife{
		{Name: "old", Group: "initial", Version: "v1.30.14", Initial: true, Launched: 0, Ready: ptr(0), Cordoned: ptr(40), Draining: ptr(50), Gone: ptr(90)},
		{Name: "new", Group: "initial", Version: "v1.31.14", Launched: 10, Ready: ptr(40)},
	}
	if !reflect.DeepEqual(tl.Nodes, wantLives) {
		t.Errorf("nodes:\n got %s\nwant %s", lives(tl.Nodes), lives(wantLives))
	}
	if !reflect.DeepEqual(tl.Versions, []string{"v1.30.14", "v1.31.14"}) {
		t.Errorf("versions = %v", tl.Versions)
	}
	if len(tl.Groups) != 1 || tl.Groups[0].Type != "managed" {
		t.Fatalf("groups = %+v", tl.Groups)
	}
	g := tl.Groups[0]
	if want := []float64{0, 10, 40, 50, 90}; !reflect.DeepEqual(g.T, want) {
		t.Errorf("group t = %v, want %v", g.T, want)
	}
	want := map[string][]int{
		"v1.30.14 ready":     {1, 1, 0, 0, 0},
		"v1.30.14 cordoned":  {0, 0, 1, 0, 0},
		"v1.30.14 draining":  {0, 0, 0, 1, 0},
		"v1.31.14 launching": {0, 1, 0, 0, 0},
		"v1.31.14 ready":     {0, 0, 1, 1, 1},
	}
	got := map[string][]int{}
	var order []string
	for _, s := range g.Series {
		got[s.Version+" "+s.State] = s.Counts
		order = append(order, s.Version+" "+s.State)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("series = %v, want %v", got, want)
	}
	if wantOrder := []string{"v1.30.14 ready", "v1.30.14 cordoned", "v1.30.14 draining", "v1.31.14 launching", "v1.31.14 ready"}; !reflect.DeepEqual(order, wantOrder) {
		t.Errorf("series order = %v, want versions sorted, states in lifecycle order %v", order, wantOrder)
	}
}

// A node whose group is known only later is counted from then on, and a
// node that was Ready and is not any more is not-ready, not launching.
func TestNodeGroupLearnedLateAndNotReady(t *testing.T) {
	b := NewBuilder()
	b.Node(5, NodeSample{Name: "n", Version: "v1"})
	b.Node(6, NodeSample{Name: "n", Group: "g", Version: "v1", Ready: true})
	b.Node(7, NodeSample{Name: "n", Group: "g", Version: "v1"})
	tl := b.Build(10, nil, nil)
	g := tl.Groups[0]
	if !reflect.DeepEqual(g.T, []float64{6, 7}) {
		t.Fatalf("t = %v", g.T)
	}
	for _, s := range g.Series {
		switch s.State {
		case Ready:
			if !reflect.DeepEqual(s.Counts, []int{1, 0}) {
				t.Errorf("ready = %v", s.Counts)
			}
		case NotReady:
			if !reflect.DeepEqual(s.Counts, []int{0, 1}) {
				t.Errorf("not-ready = %v", s.Counts)
			}
		default:
			t.Errorf("unexpected series %s %v (a negative count means a node left a group it was never counted in)", s.State, s.Counts)
		}
	}
	if tl.Nodes[0].Launched != 5 {
		t.Errorf("launched = %v, want 5 (first seen)", tl.Nodes[0].Launched)
	}
}

func TestNodeLivesDroppedAboveMaxNodeLives(t *testing.T) {
	b := NewBuilder()
	for i := range MaxNodeLives + 1 {
		b.Node(0, NodeSample{Name: fmt.Sprintf("n%04d", i), Group: "g", Version: "v1", Ready: true})
	}
	tl := b.Build(1, nil, nil)
	if len(tl.Nodes) != 0 || tl.NodesSeen != MaxNodeLives+1 {
		t.Fatalf("nodes = %d, seen %d; want none listed and %d seen", len(tl.Nodes), tl.NodesSeen, MaxNodeLives+1)
	}
	if got := tl.Groups[0].Series[0].Counts; !reflect.DeepEqual(got, []int{MaxNodeLives + 1}) {
		t.Errorf("the group still counts them: %v", got)
	}
}

// A workload's floor is its own PDB's desiredHealthy from the PDB's
// series (not the sample's Floor), at the workload's samples and at the
// PDB's changes; the availability counts PDBs below their floor.
func TestWorkloadSeriesAndAvailability(t *testing.T) {
	b := NewBuilder()
	web := WorkloadSample{Namespace: "ns", Name: "web", Kind: "Deployment", Ready: 3, Desired: 3, Floor: 99, PDBs: []string{"ns/web"}}
	db := WorkloadSample{Namespace: "ns", Name: "db", Kind: "StatefulSet", Ready: 1, Desired: 1, Floor: -1}
	b.Workload(0, web)
	b.Workload(0, db)
	b.Workload(5, web) // unchanged: no sample
	web.Ready = 1
	b.Workload(10, web)
	db.Ready = 0
	b.Workload(12, db)
	web.Ready = 2
	b.Workload(20, web)
	web.Ready = 3
	b.Workload(20, web) // same instant: replaces
	db.Ready = 1
	b.Workload(30, db)
	// web's PDB: floor 2, healthy as web's Ready, its floor raised to 3 at 25.
	pdb := PDB{Namespace: "ns", Name: "web", Workloads: []string{"Deployment/web"},
		T: []float64{0, 10, 10, 20, 25}, Healthy: []int{3, 2, 1, 3, 3}, Desired: []int{2, 2, 2, 2, 3}, Allowed: []int{1, 0, 0, 1, 0}}
	tl := b.Build(40, nil, []PDB{pdb})

	want := []Workload{
		{Namespace: "ns", Name: "db", Kind: "StatefulSet", T: []float64{0, 12, 30}, Ready: []int{1, 0, 1}, Desired: []int{1, 1, 1}},
		{Namespace: "ns", Name: "web", Kind: "Deployment", T: []float64{0, 10, 20, 25}, Ready: []int{3, 1, 3, 3}, Desired: []int{3, 3, 3, 3},
			Floor: []int{2, 2, 2, 3}, PDBs: []string{"ns/web"}},
	}
	if !reflect.DeepEqual(tl.Workloads, want) {
		t.Errorf("workloads:\n got %+v\nwant %+v", tl.Workloads, want)
	}
	// web's PDB below its floor from 10 (1 healthy of 2) to 20.
	wantAvail := Availability{
		T:            []float64{10, 12, 20, 30},
		Zero:         []int{0, 1, 1, 0},
		BelowFloor:   []int{1, 1, 0, 0},
		BelowDesired: []int{1, 2, 1, 0},
	}
	if !reflect.DeepEqual(tl.Availability, wantAvail) {
		t.Errorf("availability:\n got %+v\nwant %+v", tl.Availability, wantAvail)
	}
	if len(tl.PDBs) != 1 || !reflect.DeepEqual(tl.PDBs[0].T, pdb.T) || tl.PDBsOmitted != 0 {
		t.Errorf("pdbs = %+v (%d omitted), want ns/web whole", tl.PDBs, tl.PDBsOmitted)
	}
}

// A PDB spanning two StatefulSets has one floor for the pods of both:
// neither workload is drawn with it as its own (before, each got the floor
// the PDB would have over its replicas alone), and a PDB whose controller
// fails safe gives no floor either. Both are named in SharedPDBs.
func TestFloorOfAPDBSpanningWorkloadsIsNotAWorkloads(t *testing.T) {
	b := NewBuilder()
	for _, name := range []string{"db-a", "db-b"} {
		b.Workload(0, WorkloadSample{Namespace: "db", Name: name, Kind: "StatefulSet", Ready: 3, Desired: 3, Floor: 2, PDBs: []string{"db/db"}})
	}
	b.Workload(0, WorkloadSample{Namespace: "db", Name: "agent", Kind: "DaemonSet", Ready: 2, Desired: 2, Floor: 1, PDBs: []string{"db/agent"}})
	pdbs := []PDB{
		// maxUnavailable 1 over six pods: floor 5. Two pods of db-a go with a node.
		{Namespace: "db", Name: "db", Workloads: []string{"StatefulSet/db-a", "StatefulSet/db-b"},
			T: []float64{0, 10, 10}, Healthy: []int{6, 5, 4}, Desired: []int{5, 5, 5}, Allowed: []int{1, 0, 0},
			Drops: []Drop{{T: 10, Pod: "db/db-a-0", Node: "n1", Workload: "StatefulSet/db-a", Cause: "node-removed", By: "DeleteNodegroup g"}}},
		{Namespace: "db", Name: "agent", Workloads: []string{"DaemonSet/agent"}, SyncError: "daemonsets.apps does not implement the scale subresource",
			T: []float64{0}, Healthy: []int{2}, Desired: []int{0}, Allowed: []int{0}},
	}
	tl := b.Build(20, nil, pdbs)
	for _, w := range tl.Workloads {
		want := []string{"db/db"}
		if w.Kind == "DaemonSet" {
			want = []string{"db/agent"}
		}
		if w.Floor != nil || !reflect.DeepEqual(w.SharedPDBs, want) {
			t.Errorf("%s %s: floor %v, shared %v; want no floor of its own and shared %v", w.Kind, w.Name, w.Floor, w.SharedPDBs, want)
		}
	}
	if !reflect.DeepEqual(tl.Availability.T, []float64{10}) || !reflect.DeepEqual(tl.Availability.BelowFloor, []int{1}) {
		t.Errorf("availability %+v, want one PDB below its floor from 10", tl.Availability)
	}
	if len(tl.PDBs) != 2 || len(tl.PDBs[0].Drops) != 1 || tl.PDBs[1].SyncError == "" {
		t.Errorf("pdbs = %+v", tl.PDBs)
	}
}

func TestNodePoolSeries(t *testing.T) {
	b := NewBuilder()
	b.NodePool(0, "default", "default", 0, 1)
	b.NodePool(0, "default", "default", 0, 1)
	b.NodePool(100, "default", "default", 1, 1)
	b.NodePool(130, "default", "default", 0, 2)
	b.NodePool(130, "default", "default", 0, 1)
	tl := b.Build(200, nil, nil)
	want := []NodePool{{Name: "default", Group: "default", T: []float64{0, 100, 130}, Disrupting: []int{0, 1, 0}, Allowed: []int{1, 1, 1}}}
	if !reflect.DeepEqual(tl.NodePools, want) {
		t.Errorf("pools = %+v, want %+v", tl.NodePools, want)
	}
}

func TestThin(t *testing.T) {
	cases := []struct {
		name   string
		t      []float64
		end    float64
		max    int
		better func(i, j int) bool
		want   []int
	}{
		{"short series kept whole", []float64{0, 1, 2}, 10, 3, nil, []int{0, 1, 2}},
		// 4 points over [0, 9]: the first, then buckets of 3 s: [0,3) [3,6) [6,9].
		{"last of each bucket", []float64{0, 1, 2, 4, 5, 7, 8, 9}, 9, 4, nil, []int{0, 2, 4, 7}},
		{"the preferred of each bucket", []float64{0, 1, 2, 4, 5, 7, 8, 9}, 9, 4,
			func(i, j int) bool { return i == 5 || (j != 5 && i < j) }, []int{0, 1, 3, 5}},
		{"empty buckets skipped", []float64{0, 0.5, 8, 9}, 9, 3, nil, []int{0, 1, 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Thin(tc.t, tc.end, tc.max, tc.better); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Thin = %v, want %v", got, tc.want)
			}
		})
	}
}

// A long series keeps at most MaxPoints points, and its deepest dip.
func TestThinWorkloadKeepsTheDip(t *testing.T) {
	b := NewBuilder()
	for i := range 3 * MaxPoints {
		ready := 2 + i%2
		if i == 1001 {
			ready = 0
		}
		b.Workload(float64(i), WorkloadSample{Namespace: "ns", Name: "w", Kind: "Deployment", Ready: ready, Desired: 3, Floor: -1})
	}
	tl := b.Build(3*MaxPoints, nil, nil)
	w := tl.Workloads[0]
	if len(w.T) > MaxPoints {
		t.Fatalf("%d points, want at most %d", len(w.T), MaxPoints)
	}
	if !containsInt(w.Ready, 0) {
		t.Errorf("the one-second outage at t=1001 was thinned away")
	}
}

// belowSpans are the spans a PDB series has fewer healthy pods than its
// floor, as the page shades them.
func belowSpans(p PDB, end float64) [][2]float64 {
	var out [][2]float64
	for i := range p.T {
		switch {
		case p.Below(i) && (i == 0 || !p.Below(i-1)):
			out = append(out, [2]float64{p.T[i], end})
		case !p.Below(i) && i > 0 && p.Below(i-1):
			out[len(out)-1][1] = p.T[i]
		}
	}
	return out
}

// A long PDB series keeps at most MaxPoints points but for the ones that
// must stay: every crossing of the floor, so the spans below it are
// exactly the unthinned ones, and the point of every marked drop, with
// the healthy count it fell to. Thin alone keeps a dip's bottom but not
// when it recovered.
func TestThinPDBKeepsTheBelowFloorPoints(t *testing.T) {
	p := PDB{Namespace: "ns", Name: "web", Workloads: []string{"Deployment/web"}}
	n := 4 * MaxPoints
	dips := map[int]bool{7: true, 1001: true, 1002: true, 1500: true, 2398: true}
	for i := range n {
		healthy := 4 + i%2 // floor 4: one disruption allowed every other second
		if dips[i] {
			healthy = 3
		}
		p.T = append(p.T, float64(i))
		p.Healthy = append(p.Healthy, healthy)
		p.Desired = append(p.Desired, 4)
		p.Allowed = append(p.Allowed, max(0, healthy-4))
	}
	for i := range p.T {
		for range p.Lost(i) {
			p.Drops = append(p.Drops, Drop{T: p.T[i], Pod: fmt.Sprintf("ns/web-%d", i), Cause: "unready", By: "kubelet"})
		}
	}
	if len(p.Drops) != 4 { // 1002 follows 1001: already below, 3 → 3 takes no pod
		t.Fatalf("%d drops in the fixture, want 4", len(p.Drops))
	}
	end := float64(n)
	tl := NewBuilder().Build(end, nil, []PDB{p})
	got := tl.PDBs[0]
	if len(got.T) > MaxPoints+2*len(dips) {
		t.Errorf("%d points, want at most %d and the kept ones", len(got.T), MaxPoints)
	}
	if len(got.T) >= n/2 {
		t.Errorf("%d points of %d: not thinned", len(got.T), n)
	}
	if a, b := belowSpans(got, end), belowSpans(p, end); !reflect.DeepEqual(a, b) {
		t.Errorf("below the floor, thinned: %v\nunthinned: %v", a, b)
	}
	for _, d := range got.Drops {
		i := slices.Index(got.T, d.T)
		if i < 0 || got.Healthy[i] != 3 {
			t.Errorf("drop at %v: thinned series has no point there (or not at 3 healthy): index %d", d.T, i)
		}
	}
	if got.T[len(got.T)-1] != p.T[n-1] {
		t.Errorf("the last sample was thinned away")
	}
}

// Past MaxDrops a PDB marks its first drops and counts the others, and
// the points kept for drops are the marked ones'.
func TestThinPDBMarksAtMostMaxDrops(t *testing.T) {
	p := PDB{Namespace: "ns", Name: "big"}
	healthy := 2 * MaxPoints
	for i := range 2 * MaxPoints {
		p.T = append(p.T, float64(i))
		p.Healthy = append(p.Healthy, healthy-i)
		p.Desired = append(p.Desired, healthy)
		p.Allowed = append(p.Allowed, 0)
		if i > 0 {
			p.Drops = append(p.Drops, Drop{T: float64(i), Pod: fmt.Sprintf("ns/p-%d", i), Cause: "node-removed"})
		}
	}
	got := thinPDB(p, float64(2*MaxPoints))
	if len(got.Drops) != MaxDrops || got.DropsOmitted != len(p.Drops)-MaxDrops {
		t.Errorf("%d drops marked, %d omitted; want %d and %d", len(got.Drops), got.DropsOmitted, MaxDrops, len(p.Drops)-MaxDrops)
	}
	if len(got.T) > MaxPoints+MaxDrops+2 {
		t.Errorf("%d points", len(got.T))
	}
	for _, d := range got.Drops {
		if !slices.Contains(got.T, d.T) {
			t.Errorf("marked drop at %v has no point", d.T)
		}
	}
}

// Past MaxPDBs the budgets that went below their floor or lost pods come
// first, then those that fail safe, then the longest at their floor; the
// input's order is kept.
func TestSelectPDBsKeepsTheWorst(t *testing.T) {
	mk := func(name string, healthy, desired, allowed int) PDB {
		return PDB{Name: name, T: []float64{0}, Healthy: []int{healthy}, Desired: []int{desired}, Allowed: []int{allowed}}
	}
	failSafe := mk("c-fails-safe", 2, 0, 0)
	failSafe.SyncError = "no scale"
	dropped := mk("e-dropped", 3, 3, 0)
	dropped.Drops = []Drop{{T: 0, Pod: "p", Cause: "rollout"}}
	all := []PDB{mk("a-fine", 3, 2, 1), mk("b-below", 1, 2, 0), failSafe, mk("d-at-floor", 2, 2, 0), dropped}
	var got []string
	for _, p := range SelectPDBs(all, 10, 3) {
		got = append(got, p.Name)
	}
	if want := []string{"b-below", "c-fails-safe", "e-dropped"}; !reflect.DeepEqual(got, want) {
		t.Errorf("SelectPDBs = %v, want %v", got, want)
	}
	if len(SelectPDBs(all, 10, 10)) != len(all) {
		t.Errorf("under the limit every PDB is kept")
	}
}

func TestThinKeep(t *testing.T) {
	ts := []float64{0, 1, 2, 4, 5, 7, 8, 9}
	// 4 points over [0, 9]: buckets [0,3) [3,6) [6,9]; 4 and 5 kept: the
	// second bucket keeps both and nothing else.
	keep := []bool{false, false, false, true, true, false, false, false}
	if got, want := ThinKeep(ts, 9, 4, keep, nil), []int{0, 2, 3, 4, 7}; !reflect.DeepEqual(got, want) {
		t.Errorf("ThinKeep = %v, want %v", got, want)
	}
	if got := ThinKeep(ts, 9, 4, make([]bool, len(ts)), nil); !reflect.DeepEqual(got, Thin(ts, 9, 4, nil)) {
		t.Errorf("ThinKeep with nothing kept = %v, want Thin's %v", got, Thin(ts, 9, 4, nil))
	}
}

func TestSelectKeepsTheWorstWorkloads(t *testing.T) {
	mk := func(name string, ready ...int) *Workload {
		w := &Workload{Namespace: "ns", Name: name, Kind: "Deployment"}
		for i, r := range ready {
			w.T = append(w.T, float64(10*i))
			w.Ready = append(w.Ready, r)
			w.Desired = append(w.Desired, 4)
		}
		return w
	}
	all := []*Workload{
		mk("a-fine", 4, 4),
		mk("b-zero-long", 4, 0, 0, 4),
		mk("c-half", 4, 2, 4),
		mk("d-zero-short", 4, 0, 4),
		mk("e-three-quarters", 4, 3, 4),
	}
	var got []string
	for _, w := range Select(all, 40, 3) {
		got = append(got, w.Name)
	}
	if want := []string{"b-zero-long", "c-half", "d-zero-short"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Select = %v, want %v", got, want)
	}
	if len(Select(all, 40, 10)) != len(all) {
		t.Errorf("under the limit every workload is kept")
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func lives(ns []NodeLife) string {
	s := ""
	for _, n := range ns {
		f := func(p *float64) string {
			if p == nil {
				return "-"
			}
			return fmt.Sprint(*p)
		}
		s += fmt.Sprintf("{%s %s %s init=%v %v %s %s %s %s} ", n.Name, n.Group, n.Version, n.Initial, n.Launched, f(n.Ready), f(n.Cordoned), f(n.Draining), f(n.Gone))
	}
	return s
}
