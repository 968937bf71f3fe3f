package timeline

import (
	"cmp"
	"maps"
	"slices"
)

// Builder collects what a recorder sees while a rehearsal runs, in time
// order, and makes the Timeline at the end. Samples at the same instant
// replace each other: a series keeps what held when the instant was over.
type Builder struct {
	nodes     map[string]*nodeTrack
	groups    map[string]*groupTrack
	workloads map[string]*workloadTrack
	pools     map[string]*poolTrack
	avail     availTrack
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{
		nodes:     map[string]*nodeTrack{},
		groups:    map[string]*groupTrack{},
		workloads: map[string]*workloadTrack{},
		pools:     map[string]*poolTrack{},
	}
}

// NodeSample is what a node is at one instant.
type NodeSample struct {
	Name, Group, GroupType, Version string
	// InstanceType is the node's node.kubernetes.io/instance-type, for a
	// live view; the timeline does not keep it.
	InstanceType string
	// Initial marks a node of the starting cluster.
	Initial bool
	// Gone: the node object was deleted. Cordoned: unschedulable or
	// tainted for disruption. Draining: its drain began (it stays draining
	// until gone).
	Gone, Ready, Cordoned, Draining bool
}

type nodeTrack struct {
	life NodeLife
	// group counts the node under counted (state "" when it does not).
	group   *groupTrack
	counted countKey
}

// Node records a node's state at t; a node seen for the first time
// launched then.
func (b *Builder) Node(t float64, s NodeSample) {
	n := b.nodes[s.Name]
	if n == nil {
		if s.Gone {
			return
		}
		n = &nodeTrack{life: NodeLife{Name: s.Name, Initial: s.Initial, Launched: t}}
		b.nodes[s.Name] = n
	}
	if n.life.Gone != nil {
		return
	}
	if n.life.Group == "" && s.Group != "" {
		n.life.Group = s.Group
	}
	if s.Version != "" {
		n.life.Version = s.Version
	}
	at := func(p **float64, cond bool) {
		if cond && *p == nil {
			*p = &t
		}
	}
	at(&n.life.Ready, s.Ready)
	at(&n.life.Cordoned, s.Cordoned)
	at(&n.life.Draining, s.Draining)
	at(&n.life.Gone, s.Gone)
	var state string
	switch {
	case s.Gone:
	case n.life.Draining != nil:
		state = Draining
	case s.Cordoned:
		state = Cordoned
	case s.Ready:
		state = Ready
	case n.life.Ready != nil:
		state = NotReady
	default:
		state = Launching
	}
	if n.group == nil && n.life.Group != "" {
		n.group = b.group(n.life.Group, s.GroupType)
	}
	if g := n.group; g != nil {
		to := countKey{n.life.Version, state}
		g.move(t, n.counted, to)
		n.counted = to
	}
}

func (b *Builder) group(name, typ string) *groupTrack {
	g := b.groups[name]
	if g == nil {
		g = &groupTrack{name: name, typ: typ, index: map[countKey]int{}}
		b.groups[name] = g
	}
	if g.typ == "" {
		g.typ = typ
	}
	return g
}

type countKey struct{ version, state string }

// groupTrack counts a group's nodes by version and state; samples[i] holds
// the counts at t[i] by key index.
type groupTrack struct {
	name, typ string
	keys      []countKey
	index     map[countKey]int
	current   []int
	t         []float64
	samples   [][]int
}

func (g *groupTrack) move(t float64, from, to countKey) {
	if from == to {
		return
	}
	if from.state != "" {
		g.current[g.key(from)]--
	}
	if to.state != "" {
		g.current[g.key(to)]++
	}
	snap := slices.Clone(g.current)
	if n := len(g.t); n > 0 && g.t[n-1] == t {
		g.samples[n-1] = snap
		return
	}
	g.t = append(g.t, t)
	g.samples = append(g.samples, snap)
}

func (g *groupTrack) key(k countKey) int {
	i, ok := g.index[k]
	if !ok {
		i = len(g.keys)
		g.index[k] = i
		g.keys = append(g.keys, k)
		g.current = append(g.current, 0)
	}
	return i
}

// WorkloadSample is a workload's counts at one instant. PDBs names the
// PodDisruptionBudgets selecting its pods; Floor is, for a live watcher,
// the highest floor they would give this workload alone (-1 without one):
// the Timeline does not use it, but takes each budget's floor from its own
// status (Build).
type WorkloadSample struct {
	Namespace, Name, Kind string
	Ready, Desired, Floor int
	PDBs                  []string
}

type workloadTrack struct {
	w     Workload
	short shortfall
}

// shortfall is how a workload stands against what it wants.
type shortfall struct{ zero, belowDesired bool }

func shortfallOf(s WorkloadSample) shortfall {
	return shortfall{zero: s.Ready == 0 && s.Desired > 0, belowDesired: s.Ready < s.Desired}
}

// Workload records a workload's Ready and desired counts at t.
func (b *Builder) Workload(t float64, s WorkloadSample) {
	key := s.Namespace + "/" + s.Name + "/" + s.Kind
	w := b.workloads[key]
	if w == nil {
		w = &workloadTrack{w: Workload{Namespace: s.Namespace, Name: s.Name, Kind: s.Kind}}
		b.workloads[key] = w
	}
	if len(s.PDBs) > 0 {
		w.w.PDBs = s.PDBs
	}
	ww := &w.w
	n := len(ww.T)
	switch {
	case n > 0 && ww.Ready[n-1] == s.Ready && ww.Desired[n-1] == s.Desired:
		return
	case n > 0 && ww.T[n-1] == t:
		ww.Ready[n-1], ww.Desired[n-1] = s.Ready, s.Desired
	default:
		ww.T = append(ww.T, t)
		ww.Ready = append(ww.Ready, s.Ready)
		ww.Desired = append(ww.Desired, s.Desired)
	}
	short := shortfallOf(s)
	if short != w.short {
		b.avail.change(t, w.short, short)
		w.short = short
	}
}

// availTrack counts the workloads short of Ready pods (BelowFloor is
// counted from the PDBs at Build).
type availTrack struct {
	a                  Availability
	zero, belowDesired int
}

func (a *availTrack) change(t float64, from, to shortfall) {
	add := func(n *int, was, is bool) {
		switch {
		case is && !was:
			*n++
		case was && !is:
			*n--
		}
	}
	add(&a.zero, from.zero, to.zero)
	add(&a.belowDesired, from.belowDesired, to.belowDesired)
	av := &a.a
	if n := len(av.T); n > 0 && av.T[n-1] == t {
		av.Zero[n-1], av.BelowDesired[n-1] = a.zero, a.belowDesired
		return
	}
	av.T = append(av.T, t)
	av.Zero = append(av.Zero, a.zero)
	av.BelowDesired = append(av.BelowDesired, a.belowDesired)
}

type poolTrack struct{ p NodePool }

// NodePool records a NodePool's disrupting nodes and drift budget at t.
func (b *Builder) NodePool(t float64, name, group string, disrupting, allowed int) {
	p := b.pools[name]
	if p == nil {
		p = &poolTrack{p: NodePool{Name: name, Group: group}}
		b.pools[name] = p
	}
	np := &p.p
	n := len(np.T)
	if n > 0 && np.Disrupting[n-1] == disrupting && np.Allowed[n-1] == allowed {
		return
	}
	if n > 0 && np.T[n-1] == t {
		np.Disrupting[n-1], np.Allowed[n-1] = disrupting, allowed
		return
	}
	np.T = append(np.T, t)
	np.Disrupting = append(np.Disrupting, disrupting)
	np.Allowed = append(np.Allowed, allowed)
}

// Build makes the Timeline of a rehearsal that ended at end, with the
// blocked drains it reported and its PodDisruptionBudgets (the report's
// pdbs[], every drop included): they give the workloads their floors and
// the availability its count below the floor, and the budgets that
// suffered most are plotted.
func (b *Builder) Build(end float64, blocked []Blocked, pdbs []PDB) *Timeline {
	tl := &Timeline{End: end, Versions: []string{}, Groups: []Group{}, Nodes: []NodeLife{}, Workloads: []Workload{},
		PDBs: []PDB{}, NodePools: []NodePool{}, Blocked: blocked, NodesSeen: len(b.nodes)}
	if tl.Blocked == nil {
		tl.Blocked = []Blocked{}
	}
	versions := map[string]bool{}
	for _, n := range b.nodes {
		if n.life.Version != "" {
			versions[n.life.Version] = true
		}
	}
	tl.Versions = append(tl.Versions, slices.Sorted(maps.Keys(versions))...)
	for _, name := range slices.Sorted(maps.Keys(b.groups)) {
		tl.Groups = append(tl.Groups, b.groups[name].build(end))
	}
	if len(b.nodes) <= MaxNodeLives {
		for _, name := range slices.Sorted(maps.Keys(b.nodes)) {
			tl.Nodes = append(tl.Nodes, b.nodes[name].life)
		}
		slices.SortStableFunc(tl.Nodes, func(x, y NodeLife) int {
			return cmp.Or(cmp.Compare(x.Group, y.Group), cmp.Compare(x.Launched, y.Launched))
		})
	}
	byName := map[string]*PDB{}
	for i := range pdbs {
		byName[pdbs[i].Namespace+"/"+pdbs[i].Name] = &pdbs[i]
	}
	all := make([]*Workload, 0, len(b.workloads))
	for _, key := range slices.Sorted(maps.Keys(b.workloads)) {
		w := withFloor(b.workloads[key].w, byName)
		all = append(all, &w)
	}
	for _, w := range Select(all, end, MaxWorkloads) {
		tl.Workloads = append(tl.Workloads, thinWorkload(*w, end))
	}
	tl.WorkloadsOmitted = len(all) - len(tl.Workloads)
	for _, p := range SelectPDBs(pdbs, end, MaxPDBs) {
		tl.PDBs = append(tl.PDBs, thinPDB(p, end))
	}
	tl.PDBsOmitted = len(pdbs) - len(tl.PDBs)
	tl.Availability = thinAvailability(withBelowFloor(b.avail.a, pdbs), end)
	if tl.Availability.T == nil {
		tl.Availability = Availability{T: []float64{}, Zero: []int{}, BelowFloor: []int{}, BelowDesired: []int{}}
	}
	for _, name := range slices.Sorted(maps.Keys(b.pools)) {
		tl.NodePools = append(tl.NodePools, thinPool(b.pools[name].p, end))
	}
	return tl
}

// build aligns the group's counts into one series per version and state,
// versions sorted, states in lifecycle order.
func (g *groupTrack) build(end float64) Group {
	out := Group{Name: g.name, Type: g.typ, T: []float64{}, Series: []CountSeries{}}
	keys := slices.Clone(g.keys)
	slices.SortFunc(keys, func(x, y countKey) int {
		return cmp.Or(cmp.Compare(x.version, y.version), cmp.Compare(slices.Index(States, x.state), slices.Index(States, y.state)))
	})
	idx := Thin(g.t, end, MaxPoints, nil)
	for _, i := range idx {
		out.T = append(out.T, g.t[i])
	}
	for _, k := range keys {
		col := g.index[k]
		s := CountSeries{Version: k.version, State: k.state, Counts: make([]int, len(idx))}
		for j, i := range idx {
			if col < len(g.samples[i]) {
				s.Counts[j] = g.samples[i][col]
			}
		}
		out.Series = append(out.Series, s)
	}
	return out
}
