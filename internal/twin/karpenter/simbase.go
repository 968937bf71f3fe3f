package karpenter

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	podutil "sigs.k8s.io/karpenter/pkg/utils/pod"
)

// simBase is what every scheduling simulation of one disruption pass
// shares: the existing capacity (nodes being deleted left out), the pending
// pods, and the pods of deleting nodes nobody planned a place for. A pass
// simulates candidate after candidate against it; it is rebuilt only after a
// command starts, the one thing in a pass that changes the cluster.
//
// Packing is greedy and in a fixed order, so a pod's place depends only on
// the pods packed before it. The base pods are packed once on their own; a
// candidate's simulation replays that run up to the first point where it
// can differ — the candidate's first pod, or the first base pod that went to
// the candidate's own node — and packs the rest. The result is the same as
// packing everything from scratch.
type simBase struct {
	capacity []simNode
	index    map[string]int // node name → position in capacity
	items    []podItem      // base pods in packing order
	pending  map[*corev1.Pod]bool
	deleting map[*corev1.Pod]bool
	// assign[i] is the capacity index base item i took when the base was
	// packed alone; it is valid for items[:placed].
	assign []int
	placed int
	// static lists the nodes each pod signature may use; it follows the
	// capacity's order.
	static *staticFit
	// version counts the changes to capacity (updateSimBase).
	version int
	// fit is the first-fit index the pass's simulations share: every
	// simulation puts the trees back with the nodes (simulate), so they
	// hold the base's room between simulations; a base update drops it.
	fit *firstFit
	// limits is what the NodePools' limits leave with the candidate still
	// counted; each simulation adds its candidate back (simulate).
	limits solveLimits
}

// fitIndex returns the simulations' shared first-fit index.
func (b *simBase) fitIndex(k *Karpenter) *firstFit {
	if b.fit == nil {
		b.fit = k.newFirstFit(b.capacity, b.static)
	}
	return b.fit
}

// dropFit gives the shared index's storage back.
func (b *simBase) dropFit(k *Karpenter) {
	if b.fit != nil {
		k.releaseFirstFit(b.fit)
		b.fit = nil
	}
}

// newSimBase gathers a pass's shared simulation state.
//
// Pods of deleting nodes that an earlier command already planned a place
// for are nominated there (see nominations.go): the capacity they will take
// is reserved and they are not packed again, as Karpenter's cluster state
// keeps nominated pods on their target nodes.
func (k *Karpenter) newSimBase() *simBase {
	b := &simBase{index: map[string]int{}, pending: map[*corev1.Pod]bool{}, deleting: map[*corev1.Pod]bool{}}
	exclude := map[string]bool{}
	var pods []*corev1.Pod
	for _, p := range k.kube.PendingPods() {
		if podutil.IsProvisionable(p) {
			pods = append(pods, p)
			b.pending[p] = true
		}
	}
	for _, other := range k.NodeClaims() {
		if (other.deleting || other.markedForDeletion) && other.Node != "" {
			exclude[other.Node] = true
			if k.nominatedOn[other.Node] >= k.kube.ActivePods(other.Node) {
				continue // every pod there already has a planned place
			}
			for _, p := range k.reschedulablePods(other.Node) {
				if _, ok := k.nominations[p.Namespace+"/"+p.Name]; !ok {
					pods = append(pods, p)
					b.deleting[p] = true
				}
			}
		}
	}
	for _, n := range k.existingCapacity(exclude) {
		b.capacity = append(b.capacity, *n)
	}
	sortCapacity(b.capacity)
	for i := range b.capacity {
		b.index[b.capacity[i].name] = i
	}
	b.items = k.podItems(pods)
	b.static = newStaticFit()
	b.limits = k.limitsAtStart()
	k.packBase(b)
	return b
}

// packBase packs the base pods alone onto the capacity and records where
// each went, up to the first that needs a new NodeClaim.
func (k *Karpenter) packBase(b *simBase) {
	nodes := b.capacity // packed in place and put back (undoNodes)
	mark := len(k.packTouched)
	defer k.undoNodes(nodes, mark)
	idx := k.newFirstFit(nodes, b.static)
	defer k.releaseFirstFit(idx)
	b.assign = b.assign[:0]
	b.placed = len(b.items)
	for i, it := range b.items {
		j := k.placeExisting(it.pod, it.req, nodes, idx)
		if j < 0 {
			b.placed = i // from here on the run opens NodeClaims: not replayed
			break
		}
		k.packTouched = append(k.packTouched, nodeUndo{j, nodes[j].free, nodes[j].excluded})
		nodes[j].free = nodes[j].free.Sub(it.req)
		idx.update(nodes, j)
		b.assign = append(b.assign, j)
	}
}

// updateSimBase brings a pass's base up to date after a command started:
// its candidate leaves the capacity, its pods' nominations reserve room on
// their targets, and its replacements join as capacity still initializing.
// The base pods are packed again against the new capacity: the result is
// the base a fresh pass would build (the command's own pods are nominated,
// so they do not join the base). It reports false when the base must be
// rebuilt instead.
func (k *Karpenter) updateSimBase(b *simBase, cmd *command) bool {
	b.version++
	b.dropFit(k)
	for _, c := range cmd.candidates {
		if i, ok := b.index[c.claim.Node]; ok {
			b.capacity[i].excluded = true
		}
		for _, p := range c.pods {
			n, ok := k.nominations[p.Namespace+"/"+p.Name]
			if !ok || n.cmd != cmd {
				continue
			}
			name := n.target
			if c := k.claims[strings.TrimPrefix(name, "nodeclaim/")]; c != nil && c.Node != "" && k.kube.Node(c.Node) != nil {
				name = c.Node // a registered NodeClaim is simulated as its node
			}
			if i, ok := b.index[name]; ok {
				b.capacity[i].free = b.capacity[i].free.Sub(n.req)
			}
		}
	}
	for _, r := range cmd.launched {
		if _, ok := k.claims[r.Name]; !ok {
			continue
		}
		p := k.pools[r.NodePool]
		if r.proto == nil {
			r.proto = k.prototypeNode(p, r.labels)
		}
		free := k.smallestAllocatable(r.options).Sub(k.daemonOverhead(p, r.proto)).Sub(k.reservedOn[r.simName()])
		b.capacity = append(b.capacity, simNode{name: r.simName(), labels: r.proto, free: free, fit: k.fitRowFor(r.simName())})
	}
	// Keep the uninitialized tail in name order, and the index with it.
	first := len(b.capacity)
	for first > 0 && !b.capacity[first-1].initialized {
		first--
	}
	tail := b.capacity[first:]
	sort.SliceStable(tail, func(i, j int) bool { return tail[i].name < tail[j].name })
	b.static.truncate(first) // positions from first on moved
	for i := first; i < len(b.capacity); i++ {
		b.index[b.capacity[i].name] = i
	}
	// The candidate now counts as marked for deletion, its replacements as
	// NodeClaims not yet launched.
	b.limits = k.limitsAtStart()
	if len(b.items) > 0 {
		k.packBase(b)
	}
	return true
}

// verify reports whether the base is what a new base over its capacity
// would be: the static lists it kept up to date and the shared first-fit
// index (put back by every simulation) are exact. It is too slow for a
// pass; the package's tests call it between the commands of every pass.
func (b *simBase) verify() error {
	fresh := newStaticFit()
	for sig, sl := range b.static.lists {
		if sl.upto != len(b.capacity) {
			continue // extended when next asked for
		}
		want := fresh.list(nil, sig, b.capacity) // every row already knows sig
		if !slices.Equal(sl.pos, want) {
			return fmt.Errorf("simBase: static list of signature %d is %v, a new base has %v", sig, sl.pos, want)
		}
	}
	if b.fit != nil {
		return b.fit.verify(b.capacity)
	}
	return nil
}

// simulate is SimulateScheduling for one candidate: its pods, the pending
// pods and the unplanned pods of deleting nodes, onto every other active
// node and new NodeClaims. It stops early once the candidate cannot be
// disrupted: a pod of its own that fits nowhere, or one that would land on
// capacity still initializing — a decision never relies on it, unless the
// pod comes from a node already being deleted (UninitializedNodeError).
func (k *Karpenter) simulate(b *simBase, c *candidate) packResult {
	cand := k.podItems(c.pods)
	excluded := -1
	if i, ok := b.index[c.claim.Node]; ok {
		excluded = i
	}
	prefix := b.placed
	if len(cand) > 0 {
		// Base items packed before the candidate's first pod.
		if n := sort.Search(len(b.items), func(i int) bool { return cand[0].less(b.items[i]) }); n < prefix {
			prefix = n
		}
	}
	for i := 0; i < prefix; i++ {
		if b.assign[i] == excluded {
			prefix = i
			break
		}
	}
	// The simulation works on the pass's capacity itself and puts back
	// the nodes it changed afterwards.
	nodes := b.capacity
	mark := len(k.packTouched)
	defer func() {
		touched := k.packTouched[mark:]
		k.undoNodes(nodes, mark)
		if b.fit != nil {
			for _, u := range touched {
				b.fit.update(nodes, u.i) // the base's room again
			}
		}
	}()
	if excluded >= 0 {
		k.packTouched = append(k.packTouched, nodeUndo{excluded, nodes[excluded].free, nodes[excluded].excluded})
		nodes[excluded].excluded = true
	}
	res := packResult{existing: map[string][]*corev1.Pod{}, failed: map[*corev1.Pod]string{}, pending: b.pending}
	for i := 0; i < prefix; i++ {
		n := &nodes[b.assign[i]]
		k.packTouched = append(k.packTouched, nodeUndo{b.assign[i], n.free, n.excluded})
		n.free = n.free.Sub(b.items[i].req)
		res.existing[n.name] = append(res.existing[n.name], b.items[i].pod)
	}
	// The candidate is not among the scheduler's state nodes
	// (SimulateScheduling): its capacity does not count against limits.
	lim := b.limits.clone(k, c.claim)
	k.packInto(&res, &mergedItems{a: cand, b: b.items[prefix:]}, nodes, b, lim)
	return res
}
