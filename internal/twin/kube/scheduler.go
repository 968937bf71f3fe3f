package kube

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedcorev1 "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// The scheduler follows kube-scheduler's default profile for what decides
// feasibility — the filter plugins NodeUnschedulable, TaintToleration,
// NodeAffinity, NodeResourcesFit, VolumeBinding/VolumeZone, in that order,
// the first failing one naming the reason — and its FitError message. Scores
// approximate LeastAllocated, BalancedAllocation and the default topology
// spreading; ties are broken with the run's seeded randomness, as
// kube-scheduler breaks them at random. Pods are taken highest priority
// first; one that fits nowhere may preempt lower-priority pods
// (preemption.go, DefaultPreemption).

const (
	// kube-scheduler pkg/scheduler/schedule_one.go: numFeasibleNodesToFind.
	minFeasibleNodesToFind           = 100
	minFeasibleNodesPercentageToFind = 5
	basePercentageOfNodesToScore     = 50
)

// numFeasibleNodesToFind is how many feasible nodes kube-scheduler looks for
// before it stops filtering and scores what it found (adaptive percentage).
func numFeasibleNodesToFind(numAllNodes int) int {
	if numAllNodes < minFeasibleNodesToFind {
		return numAllNodes
	}
	percentage := basePercentageOfNodesToScore - numAllNodes/125
	if percentage < minFeasibleNodesPercentageToFind {
		percentage = minFeasibleNodesPercentageToFind
	}
	n := numAllNodes * percentage / 100
	if n < minFeasibleNodesToFind {
		return minFeasibleNodesToFind
	}
	return n
}

// schedule runs one scheduling pass over every pending pod.
func (c *Cluster) schedule() {
	unschedulable := false
	// Within a pass, binding only takes capacity away. So once a pod of some
	// workload signature and request fits nowhere, every later pod with the
	// same signature and request fits nowhere too, until a node changes or a
	// pod frees its resources (capacityGen). A failed search leaves the
	// round-robin start where it was, so skipping it changes nothing else.
	type shape struct {
		sig int
		req Resources
	}
	var noFit map[shape]bool
	gen := c.capacityGen
	for _, ps := range c.pendingInOrder() {
		if ps.external {
			continue // another scheduler's pod: it stays Pending until bound (Bind)
		}
		if c.capacityGen != gen {
			noFit, gen = nil, c.capacityGen
		}
		sh, sameShape := shape{}, false
		if w := ps.owner; w != nil && w.kind != "Pod" && w.kind != "DaemonSet" && !ps.hasClaims {
			sh, sameShape = shape{ps.sig, ps.req}, true
		}
		var node *nodeState
		var msg string
		if !sameShape || !noFit[sh] {
			node, msg = c.findNode(ps)
			if node == nil && msg == "" && sameShape {
				if noFit == nil {
					noFit = map[shape]bool{}
				}
				noFit[sh] = true
			}
		}
		if node == nil {
			// DefaultPreemption, the PostFilter: the pod may make room by
			// removing lower-priority pods, and waits for them to go.
			c.preempt(ps)
			if !ps.unschedulable {
				setPodCondition(ps.pod, corev1.PodScheduled, corev1.ConditionFalse, corev1.PodReasonUnschedulable, "", c.now())
				ps.unschedulableSince = c.eng.Now()
			}
			ps.unschedulable, ps.fitError = true, msg
			unschedulable = true
			continue
		}
		c.bind(ps, node)
	}
	if unschedulable {
		for _, h := range c.unschedHook {
			h()
		}
	}
}

// findNode returns the node the pod goes to, or nil and the FitError message.
func (c *Cluster) findNode(ps *podState) (*nodeState, string) {
	total := len(c.nodeNames)
	if total == 0 {
		return nil, "no nodes available to schedule pods"
	}
	if msg := c.volumePrefilter(ps.pod); msg != "" {
		return nil, fmt.Sprintf("0/%d nodes are available: %s.", total, msg)
	}
	// NodeAffinity's PreFilter: a pod pinned to one node by a matchFields
	// metadata.name term (a daemon pod) is only checked against that node.
	if target := daemonPodNode(ps.pod); target != "" {
		affinity := nodeaffinity.GetRequiredNodeAffinity(ps.pod)
		if ns, ok := c.nodes[target]; ok {
			rs := c.filter(ps, ns, affinity)
			if len(rs) == 0 && len(c.nominated) > 0 {
				_, rs = ps.req.Fits(ns.free().Sub(c.nominatedRequests(ps, ns)))
			}
			if len(rs) > 0 {
				return nil, fitError(total, map[string]int{rs[0]: 1, "node(s) didn't match Pod's node affinity/selector": total - 1})
			}
			return ns, ""
		}
		return nil, fitError(total, map[string]int{"node(s) didn't match Pod's node affinity/selector": total})
	}
	want := numFeasibleNodesToFind(total)
	feasible := c.feasibleBuf[:0]
	defer func() { c.feasibleBuf = feasible[:0] }()
	processed := 0
	if w := ps.owner; w != nil && w.kind != "Pod" {
		// The same walk, over only the nodes that pass the node-only
		// filters: the nodes in between would all have failed them.
		list := c.staticList(ps)
		first := sort.Search(len(list), func(i int) bool { return int(list[i]) >= c.nextStart })
		last := -1
		req := ps.req
		// Pods nominated by a preemption hold their room against pods of
		// no higher priority (RunFilterPluginsWithNominatedPods).
		nominations := len(c.nominated) > 0
		// From the round-robin start to the end of the list, then from its
		// beginning up to the start.
		for _, part := range [2][]int32{list[first:], list[:first]} {
			for _, p := range part {
				if len(feasible) == want {
					break
				}
				pos := int(p)
				if !req.FitsIn(c.hot[pos].free) || (nominations && !c.fitsBesideNominated(ps, c.nodeList[pos])) {
					continue
				}
				if ps.hasClaims && c.volumeFits(ps.pod, c.nodeList[pos]) != "" {
					continue
				}
				feasible = append(feasible, p)
				last = pos
			}
		}
		processed = total
		if len(feasible) == want {
			processed = (last-c.nextStart+total)%total + 1
		}
	} else {
		affinity := nodeaffinity.GetRequiredNodeAffinity(ps.pod)
		for i := 0; i < total && len(feasible) < want; i++ {
			ns := c.nodeList[(c.nextStart+i)%total]
			processed++
			if c.feasible(ps, ns, affinity) {
				feasible = append(feasible, int32(ns.pos))
			}
		}
	}
	c.nextStart = (c.nextStart + processed) % total
	if len(feasible) == 0 {
		return nil, "" // the FitError is worked out when someone asks (fitErrorOf)
	}
	return c.pickBest(ps, feasible), ""
}

// fitErrorOf names why a pending pod fits no node now, running the filters
// in plugin order on every node, as kube-scheduler's FitError does.
func (c *Cluster) fitErrorOf(ps *podState) string {
	total := len(c.nodeList)
	if total == 0 {
		return "no nodes available to schedule pods"
	}
	if msg := c.volumePrefilter(ps.pod); msg != "" {
		return fmt.Sprintf("0/%d nodes are available: %s.", total, msg)
	}
	affinity := nodeaffinity.GetRequiredNodeAffinity(ps.pod)
	reasons := map[string]int{}
	for _, ns := range c.nodeList {
		for _, r := range c.filter(ps, ns, affinity) {
			reasons[r]++
		}
	}
	if len(reasons) == 0 {
		return ""
	}
	return fitError(total, reasons)
}

// feasible is filter's verdict without its reasons, cheapest checks first.
// The node-only checks (NodeUnschedulable, TaintToleration, NodeAffinity)
// depend only on the pod's tolerations, node selector and required node
// affinity and on the node's spec and labels, so their result is cached on
// the node, per distinct set of those pod fields (podState.sig), until the
// node changes.
func (c *Cluster) feasible(ps *podState, ns *nodeState, affinity nodeaffinity.RequiredNodeAffinity) bool {
	if !ps.req.FitsIn(ns.free()) {
		return false
	}
	if w := ps.owner; w != nil && w.kind != "Pod" {
		sig := ps.sig
		if sig >= len(ns.static) {
			ns.static = append(ns.static, make([]int8, sig+1-len(ns.static))...)
		}
		switch ns.static[sig] {
		case staticUnknown:
			if c.staticFilter(ps, ns, affinity) == "" {
				ns.static[sig] = staticFits
			} else {
				ns.static[sig] = staticFails
				return false
			}
		case staticFails:
			return false
		}
	} else if c.staticFilter(ps, ns, affinity) != "" {
		return false
	}
	if len(c.nominated) > 0 && !c.fitsBesideNominated(ps, ns) {
		return false
	}
	return !ps.hasClaims || c.volumeFits(ps.pod, ns) == ""
}

// staticList is the positions in nodeList of the nodes that pass a
// workload pod signature's node-only filters (staticFilter), in order.
type staticList struct {
	gen       uint64
	positions []int32
}

// staticList returns the nodes a workload pod's signature may use, built
// again after any node changed.
func (c *Cluster) staticList(ps *podState) []int32 {
	if c.staticLists == nil {
		c.staticLists = map[int]*staticList{}
	}
	l := c.staticLists[ps.sig]
	if l == nil {
		l = &staticList{}
		c.staticLists[ps.sig] = l
	} else if l.gen == c.nodeGen {
		return l.positions
	}
	l.gen, l.positions = c.nodeGen, l.positions[:0]
	affinity := nodeaffinity.GetRequiredNodeAffinity(ps.pod)
	for i, ns := range c.nodeList {
		if c.staticFits(ps, ns, affinity) {
			l.positions = append(l.positions, int32(i))
		}
	}
	return l.positions
}

// staticFits runs staticFilter through the node's cache.
func (c *Cluster) staticFits(ps *podState, ns *nodeState, affinity nodeaffinity.RequiredNodeAffinity) bool {
	sig := ps.sig
	if sig >= len(ns.static) {
		ns.static = append(ns.static, make([]int8, sig+1-len(ns.static))...)
	}
	if ns.static[sig] == staticUnknown {
		ns.static[sig] = staticFails
		if c.staticFilter(ps, ns, affinity) == "" {
			ns.static[sig] = staticFits
		}
	}
	return ns.static[sig] == staticFits
}

const (
	staticUnknown int8 = iota
	staticFits
	staticFails
)

// staticFilter runs the filters that look only at the pod and the node's
// spec and labels, and names the first that fails.
func (c *Cluster) staticFilter(ps *podState, ns *nodeState, affinity nodeaffinity.RequiredNodeAffinity) string {
	node := ns.node
	// NodeUnschedulable
	if node.Spec.Unschedulable && !tolerates(ps.pod.Spec.Tolerations, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}) {
		return "node(s) were unschedulable"
	}
	// TaintToleration
	if t, bad := untoleratedTaint(node.Spec.Taints, ps.pod.Spec.Tolerations); bad {
		return fmt.Sprintf("node(s) had untolerated taint {%s: %s}", t.Key, t.Value)
	}
	// NodeAffinity (nodeSelector, required affinity, matchFields)
	if ok, _ := affinity.Match(node); !ok {
		return "node(s) didn't match Pod's node affinity/selector"
	}
	return ""
}

// filter runs kube-scheduler's filters in plugin order and returns the
// first failing plugin's reasons (NodeResourcesFit may name several).
func (c *Cluster) filter(ps *podState, ns *nodeState, affinity nodeaffinity.RequiredNodeAffinity) []string {
	if r := c.staticFilter(ps, ns, affinity); r != "" {
		return []string{r}
	}
	// NodeResourcesFit
	if ok, short := ps.req.Fits(ns.free()); !ok {
		return short
	}
	// VolumeBinding / VolumeZone
	if r := c.volumeFits(ps.pod, ns); r != "" {
		return []string{r}
	}
	return nil
}

func tolerates(tolerations []corev1.Toleration, taint corev1.Taint) bool {
	return schedcorev1.TolerationsTolerateTaint(klog.Background(), tolerations, &taint, false)
}

// Tolerates reports whether a pod tolerates every NoSchedule and NoExecute
// taint in taints.
func Tolerates(pod *corev1.Pod, taints []corev1.Taint) (corev1.Taint, bool) {
	t, bad := untoleratedTaint(taints, pod.Spec.Tolerations)
	return t, !bad
}

// untoleratedTaint is component-helpers' FindMatchingUntoleratedTaint for
// the NoSchedule and NoExecute effects the scheduler filters on, without
// the filtered copy it allocates.
func untoleratedTaint(taints []corev1.Taint, tolerations []corev1.Toleration) (corev1.Taint, bool) {
	for i := range taints {
		t := &taints[i]
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !schedcorev1.TolerationsTolerateTaint(klog.Background(), tolerations, t, false) {
			return *t, true
		}
	}
	return corev1.Taint{}, false
}

// fitError formats kube-scheduler's FitError:
// "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {k: v}."
func fitError(total int, reasons map[string]int) string {
	parts := make([]string, 0, len(reasons))
	for r, n := range reasons {
		parts = append(parts, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(parts)
	return fmt.Sprintf("0/%d nodes are available: %s.", total, strings.Join(parts, ", "))
}

// pickBest scores feasible nodes (positions in nodeList) and returns the
// best, breaking ties at random from the seeded source.
func (c *Cluster) pickBest(ps *podState, feasible []int32) *nodeState {
	if len(feasible) == 1 {
		return c.nodeList[feasible[0]]
	}
	// Count the workload's replicas per node (in each node's scratch
	// counter, reset below) and per zone.
	spread := ps.owner != nil && ps.owner.kind != "DaemonSet"
	zoneCount := c.zoneScratch
	touched := c.touchedBuf[:0]
	// The default spreading selects the pods of the same controller: for a
	// ReplicaSet's pod, its ReplicaSet's selector, which includes the
	// pod-template-hash (helper.DefaultSelector), so a rollout's new pods
	// spread among themselves.
	sameRS := ps.owner != nil && ps.owner.kind == "Deployment"
	if spread {
		for _, other := range ps.owner.pods.all() {
			if sameRS && other.rev != ps.rev {
				continue
			}
			if other.node != nil && !other.deleting && other.node.pos >= 0 {
				h := &c.hot[other.node.pos]
				if h.scratch == 0 {
					touched = append(touched, h)
				}
				h.scratch++
				zoneCount[h.zone]++
			}
		}
		defer func() {
			for _, h := range touched {
				h.scratch = 0
				zoneCount[h.zone] = 0
			}
			c.touchedBuf = touched[:0]
		}()
	}
	best, bestScore, ties := int32(-1), int64(-1), 0
	nz := nonZero(ps.req)
	reqKey := [2]int64{nz.MilliCPU, nz.Memory}
	for _, pos := range feasible {
		h := &c.hot[pos]
		if h.scoredFor != reqKey {
			ns := c.nodeList[pos]
			h.fitScore, h.scoredFor = leastAllocated(ps.req, ns)+balancedAllocation(ps.req, ns), reqKey
		}
		score := h.fitScore
		if spread {
			// Default topology spreading (hostname maxSkew 3, zone maxSkew 5,
			// ScheduleAnyway): fewer replicas of the same workload scores higher.
			score += 2 * (100 - min64(100, int64(20*int(h.scratch)+10*zoneCount[h.zone])))
		}
		switch {
		case score > bestScore:
			best, bestScore, ties = pos, score, 1
		case score == bestScore:
			ties++
			if c.eng.Rand().IntN(ties) == 0 {
				best = pos
			}
		}
	}
	return c.nodeList[best]
}

// zoneIndex numbers a zone name (the empty name included) for pickBest's
// per-zone counters.
func (c *Cluster) zoneIndex(zone string) int {
	for i, z := range c.zoneNames {
		if z == zone {
			return i
		}
	}
	c.zoneNames = append(c.zoneNames, zone)
	c.zoneScratch = append(c.zoneScratch, 0)
	return len(c.zoneNames) - 1
}

// leastAllocated is NodeResourcesFit's default scoring strategy.
func leastAllocated(req Resources, ns *nodeState) int64 {
	score := func(requested, capacity int64) int64 {
		if capacity == 0 || requested > capacity {
			return 0
		}
		return (capacity - requested) * 100 / capacity
	}
	after := ns.used.Add(nonZero(req))
	return (score(after.MilliCPU, ns.alloc.MilliCPU) + score(after.Memory, ns.alloc.Memory)) / 2
}

// balancedAllocation favours nodes whose CPU and memory fractions stay close.
func balancedAllocation(req Resources, ns *nodeState) int64 {
	if ns.alloc.MilliCPU == 0 || ns.alloc.Memory == 0 {
		return 0
	}
	after := ns.used.Add(nonZero(req))
	cpu := float64(after.MilliCPU) / float64(ns.alloc.MilliCPU)
	mem := float64(after.Memory) / float64(ns.alloc.Memory)
	d := cpu - mem
	if d < 0 {
		d = -d
	}
	return int64((1 - d/2) * 100)
}

// nonZero applies the scheduler's scoring defaults for containers that
// request nothing (100m CPU, 200Mi memory).
func nonZero(r Resources) Resources {
	if r.MilliCPU == 0 {
		r.MilliCPU = 100
	}
	if r.Memory == 0 {
		r.Memory = 200 << 20
	}
	return r
}

func min64(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}
