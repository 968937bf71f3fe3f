package karpenter

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	podutil "sigs.k8s.io/karpenter/pkg/utils/pod"

	"github.com/ladder-eks/ladder/internal/disruption"
	"github.com/ladder-eks/ladder/internal/drain"
)

// The disruption controller (semantics.md §A.4): every 10 s, and again at
// once after a command starts, it tries its methods in order — Emptiness,
// then Drift — and stops at the first that produces a command. Budgets come
// from BuildDisruptionBudgetMapping (§A.1b). Underutilized consolidation is
// not modelled: a rehearsal never consolidates non-empty nodes.

// Disruption classes (§A.4): graceful methods are always blocked by PDBs and
// do-not-disrupt pods; the eventual class (Drift) ignores them when the
// NodeClaim has a terminationGracePeriod.
const (
	gracefulClass = "graceful"
	eventualClass = "eventual"
)

type candidate struct {
	claim *NodeClaim
	pool  *pool
	pods  []*corev1.Pod // reschedulable pods
}

func (k *Karpenter) disrupt() {
	if k.validating || len(k.pools) == 0 {
		return
	}
	for _, method := range []func() bool{k.emptiness, k.drift} {
		if method() {
			k.disrupting.Fire() // singleton.RequeueImmediately
			return
		}
	}
}

// budgetMapping is BuildDisruptionBudgetMapping: per NodePool, the allowed
// disruptions for reason minus the nodes already disrupting. The total
// counts initialized Karpenter nodes without InstanceTerminating; NotReady
// and marked-for-deletion nodes count and are subtracted.
func (k *Karpenter) budgetMapping(reason karpv1.DisruptionReason) map[string]int {
	numNodes, disrupting := map[string]int{}, map[string]int{}
	for _, c := range k.NodeClaims() {
		if c.Initialized.IsZero() || c.terminating {
			continue
		}
		// Initialized is when the twin set karpenter.sh/initialized=true on
		// the node; it never removes it.
		node := k.nodeOf(c)
		if node == nil {
			continue
		}
		numNodes[c.NodePool]++
		if !c.handle.Ready() || c.markedForDeletion || c.deleting { // IsNodeReady(node)
			disrupting[c.NodePool]++
		}
	}
	out := map[string]int{}
	for name, p := range k.pools {
		allowed, err := disruption.AllowedByReason(p.obj, k.eng.Now(), numNodes[name])
		if err != nil {
			k.noteBudgetBlock(name, reason, fmt.Sprintf("NodePool %s has an invalid budget (%v): Karpenter fails closed and disrupts nothing", name, err))
		}
		a := allowed[reason]
		if numNodes[name] != 0 && a == 0 && err == nil {
			k.noteBudgetBlock(name, reason, fmt.Sprintf("NodePool %s's budgets allow 0 %s disruptions now", name, reason))
		}
		out[name] = disruption.Available(a, disrupting[name])
	}
	return out
}

func (k *Karpenter) noteBudgetBlock(pool string, reason karpv1.DisruptionReason, msg string) {
	key := pool + "/" + string(reason)
	if k.budgetBlocks[key] == msg {
		return
	}
	k.budgetBlocks[key] = msg
	k.log(Event{Type: "Warning", Code: "DisruptionBlocked", Message: msg, NodePool: pool, Reason: lower(reason)})
}

// BudgetBlocks lists NodePools whose budgets stopped a disruption reason.
func (k *Karpenter) BudgetBlocks() []string {
	out := make([]string, 0, len(k.budgetBlocks))
	for _, key := range sortedNames(k.budgetBlocks) {
		out = append(out, k.budgetBlocks[key])
	}
	return out
}

// eligible lists the NodeClaims that pass the node-level candidate checks
// (types.go NewCandidate, statenode.go ValidateNodeDisruptable) and the
// method's own test, in name order. Pod-level blockers are checked later,
// only for the candidates a method reaches (podsBlock).
func (k *Karpenter) eligible(should func(*NodeClaim) bool) []*NodeClaim {
	return k.eligibleAmong(k.NodeClaims(), should)
}

// eligibleAmong is eligible over claims, a name-ordered list that holds
// every NodeClaim should might accept.
func (k *Karpenter) eligibleAmong(claims []*NodeClaim, should func(*NodeClaim) bool) []*NodeClaim {
	var out []*NodeClaim
	for _, c := range claims {
		if c.command != nil || c.deleting || c.markedForDeletion || c.Initialized.IsZero() || !should(c) {
			continue
		}
		node := k.nodeOf(c)
		if node == nil || k.pools[c.NodePool] == nil {
			continue
		}
		if node.Annotations[DoNotDisrupt] == "true" {
			k.noteCandidateBlocked(c, "", "", fmt.Sprintf("node has %q annotation", DoNotDisrupt))
			continue
		}
		out = append(out, c)
	}
	return out
}

// candidate checks a NodeClaim's pods (ValidatePodsDisruptable) and returns
// it as a candidate, or nil when a pod blocks it. Graceful methods are
// always blocked by PDBs and do-not-disrupt pods; the eventual class (Drift)
// is not when the NodeClaim has a terminationGracePeriod (semantics.md §A.4).
func (k *Karpenter) candidate(c *NodeClaim, class string) *candidate {
	if (class == gracefulClass || c.TerminationGracePeriod == nil) && k.podsBlock(c) {
		return nil
	}
	k.clearCandidateBlocks(c)
	return &candidate{claim: c, pool: k.pools[c.NodePool], pods: k.reschedulablePods(c.Node)}
}

// reschedulablePods are the pods that would need a new home: not
// terminating, not DaemonSet or mirror pods, not terminal.
func (k *Karpenter) reschedulablePods(node string) []*corev1.Pod {
	return drain.Select(k.kube.PodsOnNode(node), drain.SkipTerminating, drain.SkipDaemonSet, drain.SkipMirror, drain.SkipTerminal)
}

// drift is the Drift method (drift.go): drifted candidates ordered by when
// they drifted, empty ones first; the first within budget whose pods can be
// rescheduled becomes a one-candidate command.
//
// Upstream returns after one command and requeues the controller at once;
// the next pass finds the same candidates minus the one just taken, with one
// more node disrupting. The twin runs those passes in one loop at the same
// virtual instant: each further command sees the budget lowered by the
// commands before it and simulates against the cluster they left.
func (k *Karpenter) drift() bool {
	if k.drifted == 0 {
		// No candidate: the controller moves on before it builds the
		// budget mapping (disrupt in controller.go, semantics.md §A.4:
		// GetCandidates → BuildDisruptionBudgetMapping → ComputeCommands).
		return false
	}
	mapping := k.budgetMapping(karpv1.DisruptionReasonDrifted)
	if !anyAllowed(mapping) {
		return false
	}
	claims := k.eligible(func(c *NodeClaim) bool { return c.Drifted != "" })
	sort.SliceStable(claims, func(i, j int) bool { return claims[i].DriftedSince.Before(claims[j].DriftedSince) })
	var empty, nonEmpty []*NodeClaim
	for _, c := range claims {
		if k.kube.ActivePods(c.Node) == 0 {
			empty = append(empty, c)
		} else {
			nonEmpty = append(nonEmpty, c)
		}
	}
	claims = append(empty, nonEmpty...)
	started := false
	var base *simBase
	defer func() {
		if base != nil {
			base.dropFit(k)
		}
	}()
	for _, claim := range claims {
		if mapping[claim.NodePool] == 0 {
			continue
		}
		// The pod-level checks (PDBs, do-not-disrupt) come first, as in
		// Karpenter, where GetCandidates drops such nodes before any
		// command is computed; only then the scheduling simulation.
		c := k.candidate(claim, eventualClass)
		if c == nil {
			continue
		}
		if base == nil {
			base = k.newSimBase()
		}
		res := k.simulate(base, c)
		if !res.allScheduled() {
			var blocked []*corev1.Pod
			for p := range res.failed {
				if !res.pending[p] {
					blocked = append(blocked, p)
				}
			}
			sortPods(blocked)
			k.noteCandidateBlocked(c.claim, blocked[0].Namespace+"/"+blocked[0].Name, "", "pod cannot be rescheduled: "+res.failed[blocked[0]])
			continue
		}
		cmd := &command{reason: "drifted", candidates: []*candidate{c}, replacements: res.claims, plan: res}
		k.startCommand(cmd)
		mapping[claim.NodePool]-- // the candidate is now marked for deletion: one more disrupting
		started = true
		if !k.updateSimBase(base, cmd) {
			base.dropFit(k)
			base = nil // rebuilt for the next candidate
		}
	}
	return started
}

func anyAllowed(mapping map[string]int) bool {
	for _, v := range mapping {
		if v > 0 {
			return true
		}
	}
	return false
}

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
	if checkSimBase {
		b.checkStatic()
	}
	return true
}

// checkSimBase is set by the package's tests: every base update then checks
// that the static lists it kept are the ones a new base would build, and
// every simulation that the shared fit trees it put back are exact.
var checkSimBase = false

func (b *simBase) checkStatic() {
	fresh := newStaticFit()
	for sig, sl := range b.static.lists {
		if sl.upto != len(b.capacity) {
			continue // extended when next asked for
		}
		want := fresh.list(nil, sig, b.capacity) // every row already knows sig
		if !slices.Equal(sl.pos, want) {
			panic(fmt.Sprintf("simBase: static list of signature %d is %v, a new base has %v", sig, sl.pos, want))
		}
	}
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
			if checkSimBase {
				b.fit.check(nodes)
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

// emptiness is the Emptiness method: nodes with no reschedulable pods whose
// consolidateAfter has elapsed, under consolidationPolicy WhenEmpty or
// WhenEmptyOrUnderutilized, within the Empty budget; the command is
// re-validated after 15 s.
func (k *Karpenter) emptiness() bool {
	now := k.eng.Now()
	claims := k.eligibleAmong(k.maybeEmpty(), func(c *NodeClaim) bool {
		p := k.pools[c.NodePool]
		if p == nil {
			return false
		}
		after := p.obj.Spec.Disruption.ConsolidateAfter.Duration
		if after == nil || p.obj.Spec.Disruption.ConsolidationPolicy == karpv1.ConsolidationPolicy("") {
			return false
		}
		active, last := k.nodeActivity(c)
		if active > 0 {
			return false
		}
		if c.Initialized.After(last) {
			last = c.Initialized
		}
		return !now.Before(last.Add(*after))
	})
	if len(claims) == 0 {
		return false
	}
	mapping := k.budgetMapping(karpv1.DisruptionReasonEmpty)
	var chosen []*candidate
	for _, claim := range claims {
		if mapping[claim.NodePool] == 0 {
			continue
		}
		if c := k.candidate(claim, gracefulClass); c != nil {
			mapping[claim.NodePool]--
			chosen = append(chosen, c)
		}
	}
	if len(chosen) == 0 {
		return false
	}
	k.validating = true
	k.eng.After(commandValidationDelay, func() {
		k.validating = false
		var valid []*candidate
		mapping := k.budgetMapping(karpv1.DisruptionReasonEmpty)
		for _, c := range chosen {
			if c.claim.deleting || c.claim.markedForDeletion || len(k.reschedulablePods(c.claim.Node)) > 0 || k.kube.Node(c.claim.Node) == nil {
				continue
			}
			if mapping[c.pool.obj.Name] > 0 {
				mapping[c.pool.obj.Name]--
				valid = append(valid, c)
			}
		}
		if len(valid) > 0 {
			k.startCommand(&command{reason: "empty", candidates: valid})
		}
		k.disrupting.Fire()
	})
	return true
}

// maybeEmpty lists, in name order, the NodeClaims whose node may have no
// active pod: those on the cluster's idle nodes and those whose node is
// gone. Every other NodeClaim's node runs a pod Emptiness would have to
// move, so the pass need not read it.
func (k *Karpenter) maybeEmpty() []*NodeClaim {
	out := k.emptyBuf[:0]
	for name := range k.kube.IdleNodes() {
		if c := k.byNode[name]; c != nil && k.claims[c.Name] == c {
			out = append(out, c)
		}
	}
	for c := range k.nodeGone {
		if k.claims[c.Name] != c || (k.kube.Node(c.Node) != nil && k.byNode[c.Node] == c) {
			delete(k.nodeGone, c) // removed, or found through its node again
			continue
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	k.emptyBuf = out[:0]
	if checkMaybeEmpty {
		k.checkMaybeEmpty(out)
	}
	return out
}

// checkMaybeEmpty is set by the package's tests: every pass then checks that
// maybeEmpty left out no NodeClaim whose node has no active pod.
var checkMaybeEmpty = false

func (k *Karpenter) checkMaybeEmpty(got []*NodeClaim) {
	listed := map[*NodeClaim]bool{}
	for _, c := range got {
		listed[c] = true
	}
	for _, c := range k.NodeClaims() {
		if active, _ := k.nodeActivity(c); active == 0 && !c.Initialized.IsZero() && !listed[c] {
			panic(fmt.Sprintf("maybeEmpty left out NodeClaim %s (node %s) with no active pod", c.Name, c.Node))
		}
	}
}

func (k *Karpenter) noteCandidateBlocked(c *NodeClaim, pod, pdb, msg string) {
	key := c.Node + "|" + pod
	b, ok := k.blocked[key]
	if !ok {
		b = &Blocked{Node: c.Node, Pod: pod, PDB: pdb, Since: k.eng.Now(), Outcome: "disruption-blocked", Message: msg}
		k.addBlocked(key, b)
		k.log(Event{Type: "Warning", Code: "DisruptionBlocked", Message: "cannot disrupt nodeclaim: " + msg, NodePool: c.NodePool, NodeClaim: c.Name, Node: c.Node})
	}
	b.Until, b.Outcome, b.Message = time.Time{}, "disruption-blocked", msg
}

// clearCandidateBlocks closes candidate-level blocks once the node is a
// candidate again.
func (k *Karpenter) clearCandidateBlocks(c *NodeClaim) {
	for _, b := range k.blockedByNode[c.Node] {
		if b.Outcome == "disruption-blocked" && b.Until.IsZero() {
			b.Until = k.eng.Now()
			b.Outcome = "unblocked"
		}
	}
}

func pdbNames(pdbs []*policyv1.PodDisruptionBudget) string {
	s := ""
	for i, p := range pdbs {
		if i > 0 {
			s += ","
		}
		s += p.Namespace + "/" + p.Name
	}
	return s
}

func lower(r karpv1.DisruptionReason) string {
	switch r {
	case karpv1.DisruptionReasonDrifted:
		return "drifted"
	case karpv1.DisruptionReasonEmpty:
		return "empty"
	case karpv1.DisruptionReasonUnderutilized:
		return "underutilized"
	}
	return string(r)
}
