package timeline

import (
	"fmt"
	"reflect"
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
	tl := b.Build(100, nil)

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
	tl := b.Build(10, nil)
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
	tl := b.Build(1, nil)
	if len(tl.Nodes) != 0 || tl.NodesSeen != MaxNodeLives+1 {
		t.Fatalf("nodes = %d, seen %d; want none listed and %d seen", len(tl.Nodes), tl.NodesSeen, MaxNodeLives+1)
	}
	if got := tl.Groups[0].Series[0].Counts; !reflect.DeepEqual(got, []int{MaxNodeLives + 1}) {
		t.Errorf("the group still counts them: %v", got)
	}
}

func TestWorkloadSeriesAndAvailability(t *testing.T) {
	b := NewBuilder()
	web := WorkloadSample{Namespace: "ns", Name: "web", Kind: "Deployment", Ready: 3, Desired: 3, Floor: 2, PDBs: []string{"ns/web"}}
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
	tl := b.Build(40, nil)

	want := []Workload{
		{Namespace: "ns", Name: "db", Kind: "StatefulSet", T: []float64{0, 12, 30}, Ready: []int{1, 0, 1}, Desired: []int{1, 1, 1}},
		{Namespace: "ns", Name: "web", Kind: "Deployment", T: []float64{0, 10, 20}, Ready: []int{3, 1, 3}, Desired: []int{3, 3, 3},
			Floor: []int{2, 2, 2}, PDBs: []string{"ns/web"}},
	}
	if !reflect.DeepEqual(tl.Workloads, want) {
		t.Errorf("workloads:\n got %+v\nwant %+v", tl.Workloads, want)
	}
	wantAvail := Availability{
		T:            []float64{10, 12, 20, 30},
		Zero:         []int{0, 1, 1, 0},
		BelowFloor:   []int{1, 1, 0, 0},
		BelowDesired: []int{1, 2, 1, 0},
	}
	if !reflect.DeepEqual(tl.Availability, wantAvail) {
		t.Errorf("availability:\n got %+v\nwant %+v", tl.Availability, wantAvail)
	}
}

func TestNodePoolSeries(t *testing.T) {
	b := NewBuilder()
	b.NodePool(0, "default", "default", 0, 1)
	b.NodePool(0, "default", "default", 0, 1)
	b.NodePool(100, "default", "default", 1, 1)
	b.NodePool(130, "default", "default", 0, 2)
	b.NodePool(130, "default", "default", 0, 1)
	tl := b.Build(200, nil)
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
	tl := b.Build(3*MaxPoints, nil)
	w := tl.Workloads[0]
	if len(w.T) > MaxPoints {
		t.Fatalf("%d points, want at most %d", len(w.T), MaxPoints)
	}
	if !containsInt(w.Ready, 0) {
		t.Errorf("the one-second outage at t=1001 was thinned away")
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
