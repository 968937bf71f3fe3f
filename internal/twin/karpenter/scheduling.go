package karpenter

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.uber.org/multierr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// This file is Karpenter's scheduling simulation, used by the provisioner
// (pending pods → new NodeClaims) and by disruption (can a candidate's pods
// go elsewhere, and onto what replacement?). Pods are packed largest first
// (CPU, then memory) onto existing capacity — nodes and in-flight
// NodeClaims — then onto NodeClaims opened in this simulation, then onto new
// NodeClaims from the heaviest compatible NodePool. Requirement and taint
// compatibility use Karpenter's own scheduling package.

// simNode is existing capacity.
type simNode struct {
	name        string
	labels      *corev1.Node // labels and taints used for feasibility
	free        kube.Resources
	initialized bool
	excluded    bool    // the candidate being simulated away
	fit         *fitRow // the node's cached taint and affinity results
}

// fitRow caches, per pod signature (kube.PodSignature), whether one node
// passes the taint and node-affinity checks: 0 not known yet, 1 yes, 2 no.
// Those depend only on the pod's signature and the node's labels and
// taints, so a row lives across simulations and disruption passes until the
// node changes (Karpenter.fitRows).
type fitRow struct{ v []uint8 }

// linkNode records the node a NodeClaim launched.
func (k *Karpenter) linkNode(claim *NodeClaim) {
	if old := k.byNode[claim.Node]; old != nil && old != claim {
		k.nodeGone[old] = true // its node's name now leads to claim
	}
	k.byNode[claim.Node] = claim
	k.nodes.changed(claim.Node, false)
}

// fitRowFor returns the cached row of a node ("nodeclaim/NAME" for an
// in-flight NodeClaim, whose prototype never changes).
func (k *Karpenter) fitRowFor(name string) *fitRow {
	row := k.fitRows[name]
	if row == nil {
		row = &fitRow{}
		k.fitRows[name] = row
	}
	return row
}

// sortCapacity orders existing capacity as Karpenter's scheduler tries it:
// initialized nodes first, then those still initializing, each by name
// (scheduler.go NewScheduler).
func sortCapacity(nodes []simNode) {
	sort.SliceStable(nodes, func(i, j int) bool {
		if nodes[i].initialized != nodes[j].initialized {
			return nodes[i].initialized
		}
		return nodes[i].name < nodes[j].name
	})
}

// simClaim is a NodeClaim being planned.
type simClaim struct {
	pool         *pool
	requirements scheduling.Requirements
	options      []catalog.InstanceType
	overhead     kube.Resources
	used         kube.Resources // pods, without overhead
	pods         []*corev1.Pod
	// verdictKey and verdict remember the claim's last requirements check
	// for a pod template (podRequirements' cacheKey): the pods of one
	// template come one after another in packing order. Valid until the
	// requirements change.
	verdictKey any
	verdict    claimVerdict
}

// claimVerdict is how a pod template's requirements meet a claim's.
type claimVerdict uint8

const (
	verdictAbsorbed     claimVerdict = iota + 1 // compatible, narrows nothing
	verdictNarrows                              // compatible, to be merged
	verdictIncompatible                         // Compatible failed
)

type packResult struct {
	existing map[string][]*corev1.Pod
	claims   []*simClaim
	failed   map[*corev1.Pod]string
	// pending marks pods that were pending before the simulation: their
	// failures do not block a disruption (AllNonPendingPodsScheduled).
	pending map[*corev1.Pod]bool
}

// allScheduled is Results.AllNonPendingPodsScheduled.
func (r packResult) allScheduled() bool {
	for p := range r.failed {
		if !r.pending[p] {
			return false
		}
	}
	return true
}

// existingCapacity lists nodes and in-flight NodeClaims that can take pods,
// leaving out the excluded ones and any node being disrupted or deleted.
func (k *Karpenter) existingCapacity(exclude map[string]bool) []*simNode {
	// The simulation's nodes live in buffers reused from call to call: a
	// disruption wave simulates once per command.
	k.simNodes = k.simNodes[:0]
	add := func(n simNode) { k.simNodes = append(k.simNodes, n) }
	for e, free := range k.eachNode {
		node := e.node
		if e.disrupted || (len(exclude) > 0 && exclude[node.Name]) {
			continue
		}
		// A node is initialized capacity unless its NodeClaim is still
		// initializing; in-flight NodeClaims (below) never are.
		key, initialized := node.Name, true
		if c := e.claim; c != nil {
			if c.deleting || c.markedForDeletion {
				continue
			}
			key, initialized = c.simName(), !c.Initialized.IsZero()
		}
		if len(k.reservedOn) > 0 {
			if r, ok := k.reservedOn[key]; ok {
				free = free.Sub(r)
			}
		}
		add(simNode{name: node.Name, labels: node, free: free, initialized: initialized, fit: e.fit})
	}
	// In-flight NodeClaims: launched or not, not yet a node.
	for _, c := range k.NodeClaims() {
		if c.deleting || c.markedForDeletion || (c.Node != "" && k.kube.Node(c.Node) != nil) || exclude[c.Node] {
			continue
		}
		p := k.pools[c.NodePool]
		if p == nil || len(c.options) == 0 {
			continue
		}
		if c.proto == nil {
			c.proto = k.prototypeNode(p, c.labels)
		}
		proto := c.proto
		free := k.smallestAllocatable(c.options).Sub(k.daemonOverhead(p, proto)).Sub(k.reservedOn[c.simName()])
		add(simNode{name: c.simName(), labels: proto, free: free, fit: k.fitRowFor(c.simName())})
	}
	k.simPtrs = k.simPtrs[:0]
	for i := range k.simNodes {
		k.simPtrs = append(k.simPtrs, &k.simNodes[i])
	}
	return k.simPtrs
}

// daemonOverhead is what the DaemonSets would request on a node of the
// pool, cached per pool until the DaemonSets change.
func (k *Karpenter) daemonOverhead(p *pool, proto *corev1.Node) kube.Resources {
	gen := k.kube.DaemonSetGeneration()
	if p.overheadGen != gen || !p.overheadSet {
		p.overhead, p.overheadGen, p.overheadSet = k.kube.DaemonSetOverhead(proto), gen, true
	}
	return p.overhead
}

// prototypeNode is what a NodePool's node will look like, for taint and
// label checks (daemonset overhead, pod placement).
func (k *Karpenter) prototypeNode(p *pool, extra map[string]string) *corev1.Node {
	labels := map[string]string{karpv1.NodePoolLabelKey: p.obj.Name}
	for key, v := range p.obj.Spec.Template.Labels {
		labels[key] = v
	}
	for key, v := range extra {
		labels[key] = v
	}
	n := &corev1.Node{}
	n.Labels = labels
	n.Spec.Taints = append(append([]corev1.Taint(nil), p.taints...), p.startup...)
	return n
}

func (k *Karpenter) smallestAllocatable(its []catalog.InstanceType) kube.Resources {
	var out kube.Resources
	for i, it := range its {
		a := k.facts(it).allocatable
		if i == 0 {
			out = a
			continue
		}
		if a.MilliCPU < out.MilliCPU {
			out.MilliCPU = a.MilliCPU
		}
		if a.Memory < out.Memory {
			out.Memory = a.Memory
		}
		if a.Pods < out.Pods {
			out.Pods = a.Pods
		}
	}
	return out
}

// pack simulates scheduling pods onto existing capacity and new NodeClaims.
// podItem is a pod with its requests, in the order pods are packed.
type podItem struct {
	pod      *corev1.Pod
	req      kube.Resources
	ns, name string // the pod's, beside it: sorting compares them often
}

// less is the packing order: CPU, then memory, descending
// (byCPUAndMemoryDescending), then namespace/name for determinism.
func (a podItem) less(b podItem) bool { return comparePodItems(a, b) < 0 }

func comparePodItems(a, b podItem) int {
	if a.req.MilliCPU != b.req.MilliCPU {
		return cmp.Compare(b.req.MilliCPU, a.req.MilliCPU)
	}
	if a.req.Memory != b.req.Memory {
		return cmp.Compare(b.req.Memory, a.req.Memory)
	}
	if a.ns != b.ns {
		return strings.Compare(a.ns, b.ns)
	}
	return strings.Compare(a.name, b.name)
}

// podItems returns pods with their requests, in packing order.
func (k *Karpenter) podItems(pods []*corev1.Pod) []podItem {
	items := make([]podItem, len(pods))
	for i, p := range pods {
		items[i] = podItem{p, k.kube.RequestsOf(p), p.Namespace, p.Name}
	}
	slices.SortFunc(items, comparePodItems)
	return items
}

// podSeq yields pods in packing order.
type podSeq interface {
	next() (podItem, bool)
}

// sliceItems is a podSeq over a slice.
type sliceItems []podItem

func (s *sliceItems) next() (podItem, bool) {
	if len(*s) == 0 {
		return podItem{}, false
	}
	it := (*s)[0]
	*s = (*s)[1:]
	return it, true
}

// mergedItems yields two lists already in packing order as one, without
// building it (a simulation usually stops long before the end).
type mergedItems struct{ a, b []podItem }

func (m *mergedItems) next() (podItem, bool) {
	switch {
	case len(m.a) == 0 && len(m.b) == 0:
		return podItem{}, false
	case len(m.a) == 0 || (len(m.b) > 0 && m.b[0].less(m.a[0])):
		it := m.b[0]
		m.b = m.b[1:]
		return it, true
	}
	it := m.a[0]
	m.a = m.a[1:]
	return it, true
}

// The NodePools' limits are what their active NodeClaims leave (limits.go).
func (k *Karpenter) pack(pods []*corev1.Pod, existing []simNode) packResult {
	return k.packItems(k.podItems(pods), existing, k.limitsAtStart())
}

// packItems packs pods already in packing order, into existing, which
// keeps the result (nothing is put back), opening NodeClaims within lim.
func (k *Karpenter) packItems(sorted []podItem, existing []simNode, lim solveLimits) packResult {
	res := packResult{existing: map[string][]*corev1.Pod{}, failed: map[*corev1.Pod]string{}}
	seq := sliceItems(sorted)
	mark := len(k.packTouched)
	k.packInto(&res, &seq, existing, nil, lim)
	k.packTouched = k.packTouched[:mark]
	return res
}

// packInto packs pods in order into res. With a disruption's simBase it
// applies SimulateScheduling's rule that a decision may not rely on
// capacity still initializing, and stops at the first pod that blocks the
// decision (a pod neither pending nor from a deleting node that fits nowhere
// or lands on such capacity). Each NodeClaim it opens counts against lim.
func (k *Karpenter) packInto(res *packResult, sorted podSeq, existing []simNode, decide *simBase, lim solveLimits) {
	blocks := func(p *corev1.Pod) bool { return decide != nil && !decide.pending[p] && !decide.deleting[p] }
	// fail records why a pod fits nowhere and reports whether that blocks
	// the decision. A disruption never reads why a pending pod failed
	// (allScheduled passes over them): those are not recorded.
	fail := func(p *corev1.Pod, why string) bool {
		if decide == nil || !decide.pending[p] {
			res.failed[p] = why
		}
		return blocks(p)
	}
	// existing is in the scheduler's order (sortCapacity); a pod takes the
	// first node that fits (scheduler.go addToExistingNode). Blocks of nodes
	// remember their largest free CPU so the search skips full stretches.
	var idx *firstFit
	if decide != nil {
		idx = decide.fitIndex(k) // existing is the base's capacity
	} else {
		idx = k.newFirstFit(existing, nil)
		defer k.releaseFirstFit(idx)
	}
	// A pod that fits nowhere changes nothing, so the next pod, if it is
	// of the same template (no volume zones of its own) with the same
	// requests, fits nowhere for the same reason: thousands of pending
	// replicas of one Deployment cost one search, not one each.
	var unplaced struct {
		key any
		req kube.Resources
		why string
	}
	for {
		it, ok := sorted.next()
		if !ok {
			break
		}
		pod, req := it.pod, it.req
		if unplaced.key != nil && req == unplaced.req && k.kube.TemplateKey(pod) == unplaced.key && len(k.kube.VolumeZones(pod)) == 0 {
			if fail(pod, unplaced.why) {
				return
			}
			continue
		}
		unplaced.key = nil
		if i := k.placeExisting(pod, req, existing, idx); i >= 0 {
			n := &existing[i]
			k.packTouched = append(k.packTouched, nodeUndo{i, n.free, n.excluded})
			n.free = n.free.Sub(req)
			idx.update(existing, i)
			res.existing[n.name] = append(res.existing[n.name], pod)
			if !n.initialized && blocks(pod) {
				res.failed[pod] = fmt.Sprintf("would schedule against uninitialized nodeclaim %s", strings.TrimPrefix(n.name, "nodeclaim/"))
				return
			}
			continue
		}
		if k.placeOpenClaim(pod, req, res.claims) {
			continue
		}
		claim, why := k.newSimClaim(pod, req, lim)
		if claim == nil {
			if fail(pod, why) {
				return
			}
			if len(k.kube.VolumeZones(pod)) == 0 {
				unplaced.key, unplaced.req, unplaced.why = k.kube.TemplateKey(pod), req, why
			}
			continue
		}
		res.claims = append(res.claims, claim)
	}
}

// firstFit finds, for a pod, the first node in capacity order that admits
// it and has room: per pod signature it walks the nodes whose taints and
// labels admit the signature (staticFit), through a tree of their largest
// free CPU that skips full stretches in O(log n).
type firstFit struct {
	static *staticFit
	trees  map[int]*fitTree
	order  []*fitTree // trees in creation order, for update
	spare  []*fitTree // released trees, whose storage is reused
}

// fitTree is a max segment tree of free CPU and of free memory over one
// signature's node list; an excluded node counts as -1. A search enters
// only stretches where some node has the CPU and some node the memory:
// nodes with CPU to spare but not the memory are the common case of a
// packed cluster.
type fitTree struct {
	pos    []int32 // positions in the simulation's nodes, ascending
	size   int     // leaves: a power of two ≥ len(pos)
	max    []int64 // CPU
	maxMem []int64
}

// staticFit lists, per pod signature, the positions of the simulation's
// nodes that pass the taint and node-affinity checks, in capacity order. It
// holds while the capacity's order and the nodes' labels and taints do: a
// disruption pass shares one across its simulations (simBase.static), and
// when new capacity joins at the end and moves only the tail, it forgets
// the tail alone (truncate).
type staticFit struct {
	lists map[int]*staticList
}

// staticList is one signature's list, which covers the capacity positions
// below upto.
type staticList struct {
	pos  []int32
	upto int
}

func newStaticFit() *staticFit { return &staticFit{lists: map[int]*staticList{}} }

// list returns the positions of nodes that admit pod's signature sig.
func (s *staticFit) list(pod *corev1.Pod, sig int, nodes []simNode) []int32 {
	sl := s.lists[sig]
	if sl == nil {
		sl = &staticList{pos: []int32{}}
		s.lists[sig] = sl
	}
	if sl.upto == len(nodes) {
		return sl.pos
	}
	var affinity *nodeaffinity.RequiredNodeAffinity
	for i := sl.upto; i < len(nodes); i++ {
		row := nodes[i].fit
		if sig >= len(row.v) {
			row.v = append(row.v, make([]uint8, sig+1-len(row.v))...)
		}
		if row.v[sig] == 0 {
			if affinity == nil {
				a := nodeaffinity.GetRequiredNodeAffinity(pod)
				affinity = &a
			}
			row.v[sig] = 2
			if toleratesForScheduling(pod, nodes[i].labels.Spec.Taints) {
				if ok, _ := affinity.Match(nodes[i].labels); ok {
					row.v[sig] = 1
				}
			}
		}
		if row.v[sig] == 1 {
			sl.pos = append(sl.pos, int32(i))
		}
	}
	sl.upto = len(nodes)
	return sl.pos
}

// truncate forgets the capacity from position from on, whose nodes moved
// or joined; the lists are extended over it when next asked for. No fit
// tree may hold the lists meanwhile: updateSimBase drops the pass's shared
// trees (simBase.fit) before it moves the capacity.
func (s *staticFit) truncate(from int) {
	for _, sl := range s.lists {
		if sl.upto > from {
			n := sort.Search(len(sl.pos), func(i int) bool { return int(sl.pos[i]) >= from })
			sl.pos, sl.upto = sl.pos[:n], from
		}
	}
}

func (k *Karpenter) newFirstFit(nodes []simNode, static *staticFit) *firstFit {
	if static == nil {
		static = newStaticFit()
	}
	f := k.firstFits
	if f == nil {
		f = &firstFit{trees: map[int]*fitTree{}}
	}
	k.firstFits = nil
	f.static = static
	return f
}

// releaseFirstFit keeps f's storage for the next packing: a disruption pass
// packs thousands of times.
func (k *Karpenter) releaseFirstFit(f *firstFit) {
	clear(f.trees)
	f.spare = append(f.spare, f.order...)
	f.order = f.order[:0]
	f.static = nil
	k.firstFits = f
}

// tree returns signature sig's tree, built from the nodes' current room.
func (f *firstFit) tree(pod *corev1.Pod, sig int, nodes []simNode) *fitTree {
	if t := f.trees[sig]; t != nil {
		return t
	}
	pos := f.static.list(pod, sig, nodes)
	var t *fitTree
	if n := len(f.spare); n > 0 {
		t, f.spare = f.spare[n-1], f.spare[:n-1]
	} else {
		t = &fitTree{}
	}
	t.pos, t.size = pos, 1
	for t.size < len(pos) {
		t.size *= 2
	}
	if cap(t.max) < 2*t.size {
		t.max, t.maxMem = make([]int64, 2*t.size), make([]int64, 2*t.size)
	}
	t.max, t.maxMem = t.max[:2*t.size], t.maxMem[:2*t.size]
	for k := range t.size {
		t.max[t.size+k], t.maxMem[t.size+k] = -1, -1
		if k < len(pos) {
			t.max[t.size+k], t.maxMem[t.size+k] = room(&nodes[pos[k]])
		}
	}
	for n := t.size - 1; n >= 1; n-- {
		t.max[n] = max(t.max[2*n], t.max[2*n+1])
		t.maxMem[n] = max(t.maxMem[2*n], t.maxMem[2*n+1])
	}
	f.trees[sig] = t
	f.order = append(f.order, t)
	return t
}

// nodeUndo is a simulation node's state before a packing changed it.
type nodeUndo struct {
	i        int
	free     kube.Resources
	excluded bool
}

// undoNodes puts back what a packing changed since packTouched had mark
// entries, latest first, and forgets it.
func (k *Karpenter) undoNodes(nodes []simNode, mark int) {
	for j := len(k.packTouched) - 1; j >= mark; j-- {
		u := k.packTouched[j]
		nodes[u.i].free, nodes[u.i].excluded = u.free, u.excluded
	}
	k.packTouched = k.packTouched[:mark]
}

// room is a node's free CPU and memory, -1 when it is excluded.
func room(n *simNode) (cpu, mem int64) {
	if n.excluded {
		return -1, -1
	}
	return n.free.MilliCPU, n.free.Memory
}

// update records that node i's room changed.
func (f *firstFit) update(nodes []simNode, i int) {
	for _, t := range f.order {
		k, found := slices.BinarySearch(t.pos, int32(i))
		if !found {
			continue
		}
		n := t.size + k
		t.max[n], t.maxMem[n] = room(&nodes[i])
		for n /= 2; n >= 1; n /= 2 {
			t.max[n] = max(t.max[2*n], t.max[2*n+1])
			t.maxMem[n] = max(t.maxMem[2*n], t.maxMem[2*n+1])
		}
	}
}

// verify reports a tree that does not hold its nodes' room (simBase.verify).
func (f *firstFit) verify(nodes []simNode) error {
	for _, t := range f.order {
		for k := range t.size {
			cpu, mem := int64(-1), int64(-1)
			if k < len(t.pos) {
				cpu, mem = room(&nodes[t.pos[k]])
			}
			if t.max[t.size+k] != cpu || t.maxMem[t.size+k] != mem {
				return fmt.Errorf("fit tree: leaf %d holds %d/%d, its node has %d/%d", k, t.max[t.size+k], t.maxMem[t.size+k], cpu, mem)
			}
		}
		for n := t.size - 1; n >= 1; n-- {
			if t.max[n] != max(t.max[2*n], t.max[2*n+1]) || t.maxMem[n] != max(t.maxMem[2*n], t.maxMem[2*n+1]) {
				return fmt.Errorf("fit tree: inner %d is not its children's max", n)
			}
		}
	}
	return nil
}

// first returns the first list index at or after from whose node has at
// least cpu and mem free, or -1.
func (t *fitTree) first(from int, cpu, mem int64) int {
	return t.find(1, 0, t.size, from, cpu, mem)
}

func (t *fitTree) find(n, lo, hi, from int, cpu, mem int64) int {
	if hi <= from || t.max[n] < cpu || t.maxMem[n] < mem {
		return -1
	}
	if hi-lo == 1 {
		return lo
	}
	mid := (lo + hi) / 2
	if r := t.find(2*n, lo, mid, from, cpu, mem); r >= 0 {
		return r
	}
	return t.find(2*n+1, mid, hi, from, cpu, mem)
}

// placeExisting returns the first node in capacity order that admits the
// pod and has room for it, or -1.
func (k *Karpenter) placeExisting(pod *corev1.Pod, req kube.Resources, nodes []simNode, idx *firstFit) int {
	var zones []string
	zonesKnown := false
	t := idx.tree(pod, k.kube.PodSignature(pod), nodes)
	for at := t.first(0, req.MilliCPU, req.Memory); at >= 0; at = t.first(at+1, req.MilliCPU, req.Memory) {
		i := int(t.pos[at])
		n := &nodes[i]
		if n.excluded || !req.FitsIn(n.free) {
			continue
		}
		if !zonesKnown {
			zones, zonesKnown = k.kube.VolumeZones(pod), true
		}
		if !zoneAllowed(zones, n.labels.Labels[corev1.LabelTopologyZone]) {
			continue
		}
		return i
	}
	return -1
}

// toleratesForScheduling ignores the taints Karpenter knows to be transient
// on new nodes (not-ready, unreachable, unregistered).
func toleratesForScheduling(pod *corev1.Pod, taints []corev1.Taint) bool {
	var keep []corev1.Taint
	for i := range taints {
		if !scheduling.IsKnownEphemeralTaint(&taints[i]) {
			keep = append(keep, taints[i])
		}
	}
	_, ok := kube.Tolerates(pod, keep)
	return ok
}

func zoneAllowed(volumeZones []string, zone string) bool {
	for _, z := range volumeZones {
		if z != zone {
			return false
		}
	}
	return true
}

// Pods of one template without volume zones share their requirements
// (cacheKey is then the template's key, else nil); callers only read them.
func (k *Karpenter) podRequirements(pod *corev1.Pod) (r scheduling.Requirements, cacheKey any) {
	zones := k.kube.VolumeZones(pod)
	if len(zones) == 0 {
		if cacheKey = k.kube.TemplateKey(pod); cacheKey != nil {
			if r, ok := k.podReqs[cacheKey]; ok {
				return r, cacheKey
			}
		}
	}
	r = scheduling.NewPodRequirements(pod)
	if len(zones) > 0 {
		r.Add(scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zones...))
	}
	if cacheKey != nil {
		k.podReqs[cacheKey] = r
	}
	return r, cacheKey
}

func (k *Karpenter) placeOpenClaim(pod *corev1.Pod, req kube.Resources, claims []*simClaim) bool {
	podReqs, key := k.podRequirements(pod)
	for _, c := range claims {
		if scheduling.Taints(c.pool.taints).ToleratesPod(pod) != nil {
			continue
		}
		v := c.verdict
		if key == nil || c.verdictKey != key {
			switch {
			case absorbs(c.requirements, podReqs):
				v = verdictAbsorbed
			case c.requirements.Compatible(podReqs, scheduling.AllowUndefinedWellKnownLabels) != nil:
				v = verdictIncompatible
			default:
				v = verdictNarrows
			}
			if key != nil {
				c.verdictKey, c.verdict = key, v
			}
		}
		merged := c.requirements
		var opts []catalog.InstanceType
		switch v {
		case verdictAbsorbed:
			// The pod narrows nothing: only resources decide.
			opts = k.fittingResources(c.options, c.overhead, c.used.Add(req))
		case verdictIncompatible:
			continue
		default:
			merged = scheduling.NewRequirements(c.requirements.Values()...)
			merged.Add(podReqs.Values()...)
			opts = k.fittingTypes(c.options, merged, c.overhead, c.used.Add(req))
		}
		if len(opts) == 0 {
			continue
		}
		if v != verdictAbsorbed {
			c.verdictKey = nil // the requirements change
		}
		c.requirements, c.options = merged, opts
		c.used = c.used.Add(req)
		c.pods = append(c.pods, pod)
		return true
	}
	return false
}

// newSimClaim opens a NodeClaim for a pod from the first compatible NodePool
// (highest weight, then name) within what its limits leave, or says why none
// fits. As addToNewNodeClaim, a pool's limits are checked before the pod is
// (scheduler.go): a pool with no room says so whatever the pod asks.
func (k *Karpenter) newSimClaim(pod *corev1.Pod, req kube.Resources, lim solveLimits) (*simClaim, string) {
	podReqs, cacheKey := k.podRequirements(pod)
	var why []string
	for _, p := range k.poolsByWeight() {
		if full := lim.blocked(k, p); full != "" {
			why = append(why, full)
			continue
		}
		v := p.compatible(cacheKey, func() poolVerdict { return poolCompatibility(p, pod, podReqs) })
		if v.why != "" {
			why = append(why, v.why)
			continue
		}
		merged := v.merged
		overhead := k.daemonOverhead(p, k.prototypeNode(p, nil))
		fitting := k.newClaimTypes(p, cacheKey, merged, overhead, req)
		opts := lim.within(k, p, k.launchable(p, fitting[:min(len(fitting), maxInstanceTypes)]))
		if len(opts) == 0 {
			why = append(why, fmt.Sprintf("incompatible with nodepool %q, daemonset overhead={%s}, no instance type satisfied resources {%s} and requirements %s",
				p.obj.Name, overhead, req, requirementsString(merged)))
			continue
		}
		// subtractMax reads the NodeClaim's options before they are cut to
		// MaxInstanceTypes (results.TruncateInstanceTypes comes after Solve).
		lim.open(k, p, lim.within(k, p, k.launchable(p, fitting)))
		return &simClaim{pool: p, requirements: merged, options: opts, overhead: overhead, used: req, pods: []*corev1.Pod{pod}}, ""
	}
	if len(why) == 0 {
		return nil, "no NodePool exists"
	}
	return nil, strings.Join(why, "; ")
}

// poolVerdict is whether a pod can go to a NodePool: why not, or the
// requirements of a NodeClaim made for it there.
type poolVerdict struct {
	why    string
	merged scheduling.Requirements
}

func poolCompatibility(p *pool, pod *corev1.Pod, podReqs scheduling.Requirements) poolVerdict {
	if err := scheduling.Taints(p.taints).ToleratesPod(pod); err != nil {
		return poolVerdict{why: fmt.Sprintf("incompatible with nodepool %q, %s", p.obj.Name, firstError(err))}
	}
	if err := p.requirements.Compatible(podReqs, scheduling.AllowUndefinedWellKnownLabels); err != nil {
		return poolVerdict{why: fmt.Sprintf("incompatible with nodepool %q, %s", p.obj.Name, firstError(err))}
	}
	merged := scheduling.NewRequirements(p.requirements.Values()...)
	merged.Add(podReqs.Values()...)
	return poolVerdict{merged: merged}
}

// compatible returns the pool's verdict for a pod, computed once per
// template when key is not nil (a pool is replaced, not changed, when its
// NodePool is applied again).
func (p *pool) compatible(key any, compute func() poolVerdict) poolVerdict {
	if key == nil {
		return compute()
	}
	if v, ok := p.verdicts[key]; ok {
		return v
	}
	if p.verdicts == nil {
		p.verdicts = map[any]poolVerdict{}
	}
	v := compute()
	p.verdicts[key] = v
	return v
}

// absorbs reports whether intersecting claim with pod would leave claim
// unchanged: every key the pod constrains is already a concrete set on the
// claim, inside what the pod allows. Such a pod is compatible with the claim
// and changes neither its requirements nor its instance-type options, so the
// merge (a copy of every requirement) can be skipped. Anything else, including
// minValues, takes the full path.
func absorbs(claim, pod scheduling.Requirements) bool {
	for key, pr := range pod {
		if pr.MinValues != nil {
			return false
		}
		cr, ok := claim[key]
		if !ok || cr.Operator() != corev1.NodeSelectorOpIn {
			return false
		}
		for _, v := range cr.Values() {
			if !pr.Has(v) {
				return false
			}
		}
	}
	return true
}

// fittingResources keeps the candidates, already filtered by requirements and
// ordered by price, that fit used plus the daemonset overhead: candidates
// itself when they all do (option lists are never changed in place).
func (k *Karpenter) fittingResources(candidates []catalog.InstanceType, overhead, used kube.Resources) []catalog.InstanceType {
	need := used.Add(overhead)
	for i, it := range candidates {
		if need.FitsIn(k.facts(it).allocatable) {
			continue
		}
		out := append([]catalog.InstanceType(nil), candidates[:i]...)
		for _, it := range candidates[i+1:] {
			if need.FitsIn(k.facts(it).allocatable) {
				out = append(out, it)
			}
		}
		return out
	}
	return candidates
}

// newClaimTypeKey is what a new NodeClaim's instance types depend on, for a
// pod of a template: the pool, the template (its requirements), the pod's
// requests and the daemonset overhead.
type newClaimTypeKey struct {
	pool          *pool
	template      any
	req, overhead kube.Resources
}

// newClaimTypes is fittingTypes over the whole catalog for a pod's new
// NodeClaim in pool p (merged: the pool's and the pod's requirements),
// computed once per template, requests and overhead when cacheKey is not
// nil: every pending replica of a Deployment that opens a NodeClaim, in
// every simulation, asks the same. Callers do not modify the result.
func (k *Karpenter) newClaimTypes(p *pool, cacheKey any, merged scheduling.Requirements, overhead, req kube.Resources) []catalog.InstanceType {
	if cacheKey == nil {
		return k.fittingTypes(k.opts.InstanceTypes, merged, overhead, req)
	}
	key := newClaimTypeKey{pool: p, template: cacheKey, req: req, overhead: overhead}
	its, ok := k.claimTypes[key]
	if !ok {
		its = k.fittingTypes(k.opts.InstanceTypes, merged, overhead, req)
		k.claimTypes[key] = its
	}
	return its
}

// fittingTypes are the instance types compatible with reqs that fit used
// plus the daemonset overhead, cheapest first. A new NodeClaim keeps at most
// maxInstanceTypes of them (newSimClaim).
func (k *Karpenter) fittingTypes(candidates []catalog.InstanceType, reqs scheduling.Requirements, overhead, used kube.Resources) []catalog.InstanceType {
	var out []catalog.InstanceType
	need := used.Add(overhead)
	for _, it := range candidates {
		f := k.facts(it)
		if !need.FitsIn(f.allocatable) {
			continue
		}
		if f.requirements.Intersects(reqs) != nil {
			continue
		}
		out = append(out, it)
	}
	caps := []string{karpv1.CapacityTypeSpot, karpv1.CapacityTypeOnDemand}
	if r := reqs.Get(karpv1.CapacityTypeLabelKey); r != nil {
		caps = caps[:0]
		for _, ct := range []string{karpv1.CapacityTypeSpot, karpv1.CapacityTypeOnDemand} {
			if r.Has(ct) {
				caps = append(caps, ct)
			}
		}
	}
	if len(caps) == 0 {
		return nil
	}
	sortByPrice(out, caps)
	return out
}

// launchable keeps the instance types a pool can actually launch now: its
// EC2NodeClass has an AMI for their architecture (the AWS provider only
// offers types amifamily.MapToInstanceTypes maps to an image). An open
// NodeClaim's options need neither this nor a limits check again: they only
// narrow from those allowed when it was opened (addToInflightNode).
func (k *Karpenter) launchable(p *pool, its []catalog.InstanceType) []catalog.InstanceType {
	class := k.classes[p.obj.Spec.Template.Spec.NodeClassRef.Name]
	out := its[:0:0]
	for _, it := range its {
		if canLaunch(class, it) {
			out = append(out, it)
		}
	}
	return out
}

// canLaunch reports whether a pool of the class can launch the type.
func canLaunch(class *nodeClass, it catalog.InstanceType) bool {
	if class == nil {
		return false
	}
	_, ok := class.amiFor(it.Arch)
	return ok
}

// poolsByWeight lists the pools by weight, then name; the list is kept
// until a NodePool is applied.
func (k *Karpenter) poolsByWeight() []*pool {
	if k.byWeight != nil {
		return k.byWeight
	}
	out := make([]*pool, 0, len(k.pools))
	for _, name := range sortedNames(k.pools) {
		out = append(out, k.pools[name])
	}
	sort.SliceStable(out, func(i, j int) bool { return weight(out[i]) > weight(out[j]) })
	k.byWeight = out
	return out
}

func weight(p *pool) int32 {
	if p.obj.Spec.Weight != nil {
		return *p.obj.Spec.Weight
	}
	return 0
}

// firstError returns the alphabetically first of a multierr's messages, so
// reports do not depend on map order.
func firstError(err error) string {
	errs := multierr.Errors(err)
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	sort.Strings(msgs)
	if len(msgs) == 0 {
		return ""
	}
	return msgs[0]
}

func requirementsString(r scheduling.Requirements) string {
	keys := make([]string, 0, len(r))
	for key := range r {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, key := range keys {
		parts[i] = r.Get(key).String()
	}
	return strings.Join(parts, ", ")
}
