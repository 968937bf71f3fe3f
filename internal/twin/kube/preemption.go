package kube

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// Preemption: kube-scheduler's DefaultPreemption PostFilter plugin
// (k8s.io/kubernetes pkg/scheduler/framework/plugins/defaultpreemption and
// framework/preemption, v1.37). When a pod fits no node, lower-priority pods
// may be removed to make room for it:
//
//  1. The pod must be eligible (PodEligibleToPreemptOthers): its
//     preemptionPolicy is not Never, and no lower-priority pod is still
//     terminating, preempted, on the node it was nominated to before.
//  2. Candidate nodes are those where only resources were short
//     (findCandidates: NodesForStatusCode Unschedulable). Nodes that fail
//     NodeUnschedulable, TaintToleration, NodeAffinity or the volume
//     filters answer UnschedulableAndUnresolvable: removing pods cannot
//     help there. A daemon pod's only node is the one its matchFields
//     affinity names.
//  3. On each candidate, SelectVictimsOnNode removes every pod of lower
//     priority; if the pod still does not fit, the node is no candidate.
//     Otherwise the removed pods are added back, most important first
//     (MoreImportantVictim: higher priority, then earlier start), those
//     whose PDBs would be violated first, each one staying only if the pod
//     still fits: the rest are the victims.
//  4. DryRunPreemption stops once it has at least one candidate without a
//     PDB violation and max(10% of the candidates, 100) in all
//     (MinCandidateNodesPercentage, MinCandidateNodesAbsolute). Upstream
//     starts at a random offset; the twin walks nodes in name order, so
//     the same input always picks the same node.
//  5. pickOneNodeForPreemption takes the node with the fewest PDB
//     violations, then the lowest highest victim priority, the lowest sum
//     of victim priorities, the fewest victims, the latest start among the
//     highest-priority victims, and then the first in walk order.
//  6. The victims get the DisruptionTarget condition (reason
//     PreemptionByScheduler) and are deleted with their own grace period —
//     not evicted: PDBs only steer the choice above — and the pod gets
//     status.nominatedNodeName. It is scheduled by a later pass, once the
//     victims are gone: the queue is in priority order, and until then the
//     room is held against pods of no higher priority, which the filters
//     see beside the nominated pods (RunFilterPluginsWithNominatedPods).

// preemptionCandidate is one node's answer to SelectVictimsOnNode.
type preemptionCandidate struct {
	node *nodeState
	// victims are most important first.
	victims       []*podState
	pdbViolations int
}

// preempt runs DefaultPreemption for a pod the scheduling pass found no
// node for, and reports whether it preempted pods (the pod is then
// nominated to a node and waits for the victims to go).
func (c *Cluster) preempt(ps *podState) bool {
	// The cheap answers first: nothing bound has a lower priority, or the
	// pod may not preempt.
	if !c.boundBelow(ps.priority) || !c.eligibleToPreempt(ps) {
		return false
	}
	// A search that found no node stays futile until a pod frees room, a
	// node changes or a nomination goes: binding a lower-priority pod takes
	// room and adds as much to the victims, binding another pod only takes
	// room.
	gens := [3]uint64{c.capacityGen, c.nodeGen, c.nominationGen}
	if last, ok := c.noVictims[ps]; ok && last == gens {
		return false
	}
	futile := func() bool {
		if c.noVictims == nil {
			c.noVictims = map[*podState][3]uint64{}
		}
		c.noVictims[ps] = gens
		return false
	}
	potential := c.preemptionNodes(ps)
	if len(potential) == 0 {
		return futile()
	}
	want := max(len(potential)*10/100, 100)
	var nonViolating, violating []preemptionCandidate
	for _, ns := range potential {
		cand, ok := c.selectVictimsOnNode(ps, ns)
		if !ok {
			continue
		}
		if cand.pdbViolations == 0 {
			nonViolating = append(nonViolating, cand)
		} else {
			violating = append(violating, cand)
		}
		if len(nonViolating) > 0 && len(nonViolating)+len(violating) >= want {
			break
		}
	}
	candidates := append(nonViolating, violating...)
	if len(candidates) == 0 {
		return futile()
	}
	c.actuatePreemption(ps, pickOneNodeForPreemption(candidates))
	return true
}

// forgetNoVictims drops a pod's futile search once it is bound or gone.
func (c *Cluster) forgetNoVictims(ps *podState) {
	if len(c.noVictims) > 0 {
		delete(c.noVictims, ps)
	}
}

// boundBelow reports whether any bound pod has a priority below p: a
// handful of distinct priorities, counted as pods are bound and removed.
func (c *Cluster) boundBelow(p int32) bool {
	for _, pc := range c.boundPriorities {
		if pc.priority < p && pc.pods > 0 {
			return true
		}
	}
	return false
}

// priorityCount is how many bound pods have one priority.
type priorityCount struct {
	priority int32
	pods     int
}

// countBound adds d bound pods of priority p.
func (c *Cluster) countBound(p int32, d int) {
	for i := range c.boundPriorities {
		if c.boundPriorities[i].priority == p {
			c.boundPriorities[i].pods += d
			return
		}
	}
	c.boundPriorities = append(c.boundPriorities, priorityCount{p, d})
}

// eligibleToPreempt is PodEligibleToPreemptOthers.
func (c *Cluster) eligibleToPreempt(ps *podState) bool {
	if p := ps.pod.Spec.PreemptionPolicy; p != nil && *p == corev1.PreemptNever {
		return false
	}
	if ns := ps.nominatedNode; ns != nil && ns.pos >= 0 {
		for _, other := range ns.pods.all() {
			if other.priority < ps.priority && terminatingByPreemption(other.pod) {
				return false
			}
		}
	}
	return true
}

// terminatingByPreemption is preemption.PodTerminatingByPreemption.
func terminatingByPreemption(p *corev1.Pod) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.DisruptionTarget {
			return cond.Status == corev1.ConditionTrue && cond.Reason == corev1.PodReasonPreemptionByScheduler
		}
	}
	return false
}

// preemptionNodes are the nodes where only resources stopped the pod, in
// name order.
func (c *Cluster) preemptionNodes(ps *podState) []*nodeState {
	affinity := nodeaffinity.GetRequiredNodeAffinity(ps.pod)
	workloadPod := ps.owner != nil && ps.owner.kind != "Pod" && ps.owner.kind != "DaemonSet"
	resolvable := func(ns *nodeState) bool {
		static := false
		if workloadPod {
			static = c.staticFits(ps, ns, affinity) // cached per signature, as the scheduler's walk
		} else {
			static = c.staticFilter(ps, ns, affinity) == ""
		}
		return static && (!ps.hasClaims || c.volumeFits(ps.pod, ns) == "")
	}
	if target := daemonPodNode(ps.pod); target != "" {
		if ns, ok := c.nodes[target]; ok && resolvable(ns) {
			return []*nodeState{ns}
		}
		return nil
	}
	var out []*nodeState
	for _, ns := range c.nodeList {
		if resolvable(ns) {
			out = append(out, ns)
		}
	}
	return out
}

// selectVictimsOnNode is DefaultPreemption.SelectVictimsOnNode for one node.
func (c *Cluster) selectVictimsOnNode(ps *podState, ns *nodeState) (preemptionCandidate, bool) {
	var potential []*podState
	free := ns.free().Sub(c.nominatedRequests(ps, ns))
	for _, other := range ns.pods.all() {
		if other.priority < ps.priority {
			potential = append(potential, other)
			free = free.Add(other.req)
		}
	}
	if len(potential) == 0 || !ps.req.FitsIn(free) {
		return preemptionCandidate{}, false
	}
	slices.SortStableFunc(potential, moreImportantVictim)
	violating, nonViolating := c.splitByPDBViolation(potential)
	cand := preemptionCandidate{node: ns}
	reprieve := func(v *podState) bool {
		if ps.req.FitsIn(free.Sub(v.req)) {
			free = free.Sub(v.req)
			return true
		}
		cand.victims = append(cand.victims, v)
		return false
	}
	for _, v := range violating {
		if !reprieve(v) {
			cand.pdbViolations++
		}
	}
	for _, v := range nonViolating {
		reprieve(v)
	}
	if len(cand.victims) == 0 {
		// The pod fits without removing anything: DryRunPreemption treats
		// this as an error ("expected at least one victim pod"), not a
		// candidate.
		return preemptionCandidate{}, false
	}
	if len(violating) > 0 && len(nonViolating) > 0 {
		slices.SortStableFunc(cand.victims, moreImportantVictim)
	}
	return cand, true
}

// moreImportantVictim orders victims as MoreImportantVictim does for
// single pods: higher priority first, then the one that started earlier
// (util.GetPodStartTime: a pod not started yet counts as starting now),
// then, where upstream's order is the node's, the older pod.
func moreImportantVictim(a, b *podState) int {
	if a.priority != b.priority {
		return cmp.Compare(b.priority, a.priority)
	}
	if sa, sb := podStartNanos(a.pod, math.MaxInt64), podStartNanos(b.pod, math.MaxInt64); sa != sb {
		return cmp.Compare(sa, sb)
	}
	return cmp.Compare(a.seq, b.seq)
}

// podStartNanos is status.startTime, or notStarted when the pod has none.
func podStartNanos(p *corev1.Pod, notStarted int64) int64 {
	if p.Status.StartTime == nil {
		return notStarted
	}
	return p.Status.StartTime.UnixNano()
}

// splitByPDBViolation is preemption.FilterVictimsWithPDBViolation: walking
// the victims in order, each takes one from the disruptionsAllowed of every
// PDB that selects it (unless the PDB already lists it as disrupted); a
// victim that takes a PDB below zero would violate it.
func (c *Cluster) splitByPDBViolation(victims []*podState) (violating, nonViolating []*podState) {
	var allowed map[*pdbState]int32
	for _, v := range victims {
		violates := false
		for _, st := range c.pdbsFor(v) {
			status := c.sync(st).Status
			if _, disrupted := status.DisruptedPods[v.name]; disrupted {
				continue
			}
			if allowed == nil {
				allowed = map[*pdbState]int32{}
			}
			left, seen := allowed[st]
			if !seen {
				left = status.DisruptionsAllowed
			}
			left--
			allowed[st] = left
			if left < 0 {
				violates = true
				break
			}
		}
		if violates {
			violating = append(violating, v)
		} else {
			nonViolating = append(nonViolating, v)
		}
	}
	return violating, nonViolating
}

// pickOneNodeForPreemption applies upstream's criteria in order, each
// keeping the candidates with the best score, until one is left; then the
// first.
func pickOneNodeForPreemption(candidates []preemptionCandidate) preemptionCandidate {
	scores := []func(preemptionCandidate) int64{
		// Fewest PDB violations.
		func(c preemptionCandidate) int64 { return -int64(c.pdbViolations) },
		// The lowest highest-priority victim.
		func(c preemptionCandidate) int64 { return -int64(c.victims[0].priority) },
		// The lowest sum of priorities, each shifted to be non-negative.
		func(c preemptionCandidate) int64 {
			var sum int64
			for _, v := range c.victims {
				sum += int64(v.priority) + math.MaxInt32 + 1
			}
			return -sum
		},
		// The fewest victims.
		func(c preemptionCandidate) int64 { return -int64(len(c.victims)) },
		// The latest start among the highest-priority victims
		// (GetEarliestPodStartTime over those victims).
		func(c preemptionCandidate) int64 {
			earliest := int64(math.MaxInt64)
			for _, v := range c.victims {
				if v.priority != c.victims[0].priority {
					break
				}
				earliest = min(earliest, podStartNanos(v.pod, math.MaxInt64))
			}
			return earliest
		},
	}
	for _, score := range scores {
		if len(candidates) == 1 {
			break
		}
		best := int64(math.MinInt64)
		var kept []preemptionCandidate
		for _, cand := range candidates {
			s := score(cand)
			if s > best {
				best, kept = s, kept[:0]
			}
			if s == best {
				kept = append(kept, cand)
			}
		}
		candidates = kept
	}
	return candidates[0]
}

// actuatePreemption is the Executor's prepareCandidate: each victim not
// already terminating gets the DisruptionTarget condition and is deleted
// with its own grace period; the preemptor is nominated to the node.
func (c *Cluster) actuatePreemption(ps *podState, cand preemptionCandidate) {
	node := cand.node.node.Name
	for _, v := range cand.victims {
		if v.deleting {
			continue // its deletion has started: no second call
		}
		setPodCondition(v.pod, corev1.DisruptionTarget, corev1.ConditionTrue, corev1.PodReasonPreemptionByScheduler,
			fmt.Sprintf("%s: preempting to accommodate a higher priority pod", ps.pod.Spec.SchedulerName), c.now())
		c.log(Event{Type: "Normal", Reason: "Preempted", Node: node, Object: v.key,
			Message: fmt.Sprintf("pod %s preempted by pod %s (priority %d) on node %s", v.key, ps.key, ps.priority, node)})
		// A deletion, not an eviction: a Ready pod whose PDB could not
		// afford it is a breach, as DeletePod's are.
		c.takeDown(v, DropDeleted, fmt.Sprintf("preempted by pod %s", ps.key))
		c.deletePod(v, *v.pod.Spec.TerminationGracePeriodSeconds)
	}
	c.clearNomination(ps)
	ps.nominatedNode = cand.node
	ps.pod.Status.NominatedNodeName = node
	if c.nominated == nil {
		c.nominated = map[*nodeState][]*podState{}
	}
	c.nominated[cand.node] = append(c.nominated[cand.node], ps)
}

// clearNomination forgets a pod's nominated node: it was bound (the API
// server clears status.nominatedNodeName on binding,
// ClearingNominatedNodeNameAfterBinding), removed, or nominated elsewhere.
func (c *Cluster) clearNomination(ps *podState) {
	ns := ps.nominatedNode
	if ns == nil {
		return
	}
	ps.nominatedNode = nil
	ps.pod.Status.NominatedNodeName = ""
	c.nominationGen++
	rest := slices.DeleteFunc(c.nominated[ns], func(p *podState) bool { return p == ps })
	if len(rest) == 0 {
		delete(c.nominated, ns)
	} else {
		c.nominated[ns] = rest
	}
}

// fitsBesideNominated reports whether the pod fits on the node beside
// the pods nominated to it with at least its priority.
func (c *Cluster) fitsBesideNominated(ps *podState, ns *nodeState) bool {
	r := c.nominatedRequests(ps, ns)
	return r == (Resources{}) || ps.req.FitsIn(ns.free().Sub(r))
}

// nominatedRequests is what the pods nominated to a node with a priority
// at least p (other than ps) will take there: RunFilterPluginsWithNominatedPods
// counts them as if they ran.
func (c *Cluster) nominatedRequests(ps *podState, ns *nodeState) Resources {
	var r Resources
	for _, other := range c.nominated[ns] {
		if other != ps && other.priority >= ps.priority {
			r = r.Add(other.req)
		}
	}
	return r
}
