package kube

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type nodeState struct {
	// pos is the node's index in Cluster.nodeList (-1 once removed).
	pos int
	// active counts bound pods that are not DaemonSet pods and not
	// terminating: what would have to move if the node went away.
	active       int
	lastPodEvent time.Time
	// idleAt is the node's index in Cluster.idle plus one, 0 when it is
	// not there: it is while the node is in the cluster with active 0.
	idleAt int

	node  *corev1.Node
	alloc Resources
	used  Resources
	pods  podSet
	// zoneName caches the zone label; static caches the scheduler's
	// node-only filters per workload (index workload.idx), until the node
	// changes.
	zoneName string
	zoneIdx  int // index of zoneName in Cluster.zoneNames, for scoring
	static   []int8
	// daemonRun caches daemonShouldRun per DaemonSet (workload.dsIdx):
	// its template generation shifted left, plus 1 when the daemon runs
	// here; 0 unknown.
	daemonRun []int64
}

func (n *nodeState) free() Resources { return n.alloc.Sub(n.used) }

func (n *nodeState) zone() string { return n.zoneName }

// AddNode registers a node, as a kubelet does. A node that is not Ready gets
// the node.kubernetes.io/not-ready:NoSchedule taint the node lifecycle
// controller keeps on NotReady nodes, so the scheduler skips it.
func (c *Cluster) AddNode(node *corev1.Node, ready bool) error {
	if _, ok := c.nodes[node.Name]; ok {
		return fmt.Errorf("node %q already exists", node.Name)
	}
	n := node.DeepCopy()
	if n.CreationTimestamp.IsZero() {
		n.CreationTimestamp = c.now()
	}
	if n.UID == "" {
		n.UID = c.newUID("Node")
	}
	ns := &nodeState{node: n, alloc: FromList(n.Status.Allocatable), pods: newPodSet()}
	c.nodes[n.Name] = ns
	i := sort.SearchStrings(c.nodeNames, n.Name)
	c.nodeNames = append(c.nodeNames, "")
	copy(c.nodeNames[i+1:], c.nodeNames[i:])
	c.nodeNames[i] = n.Name
	c.nodeList = append(c.nodeList, nil)
	copy(c.nodeList[i+1:], c.nodeList[i:])
	c.nodeList[i] = ns
	c.hot = append(c.hot, nodeHot{})
	copy(c.hot[i+1:], c.hot[i:])
	c.hot[i] = nodeHot{free: ns.free()}
	c.renumber(i)
	c.idleChanged(ns)
	c.setReady(ns, ready)
	c.nodeChanged(n.Name)
	return nil
}

func (c *Cluster) setReady(ns *nodeState, ready bool) {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	setNodeCondition(ns.node, corev1.NodeReady, status, c.now())
	if ready {
		RemoveNodeTaint(ns.node, corev1.TaintNodeNotReady)
	} else {
		addTaint(ns.node, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
	}
}

// SetNodeReady flips a node's Ready condition.
func (c *Cluster) SetNodeReady(name string, ready bool) error {
	ns, ok := c.nodes[name]
	if !ok {
		return fmt.Errorf("node %q not found", name)
	}
	c.setReady(ns, ready)
	c.nodeChanged(name)
	return nil
}

// Cordon marks a node unschedulable (kubectl cordon), with the
// node.kubernetes.io/unschedulable:NoSchedule taint the controller adds.
func (c *Cluster) Cordon(name string) error {
	return c.UpdateNode(name, func(n *corev1.Node) {
		n.Spec.Unschedulable = true
		addTaint(n, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule, TimeAdded: ptrTime(c.now())})
	})
}

// Uncordon marks a node schedulable again.
func (c *Cluster) Uncordon(name string) error {
	return c.UpdateNode(name, func(n *corev1.Node) {
		n.Spec.Unschedulable = false
		RemoveNodeTaint(n, corev1.TaintNodeUnschedulable)
	})
}

// AddTaint adds or replaces a taint on a node.
func (c *Cluster) AddTaint(name string, t corev1.Taint) error {
	return c.UpdateNode(name, func(n *corev1.Node) { addTaint(n, t) })
}

// RemoveTaint removes every taint with key from a node.
func (c *Cluster) RemoveTaint(name, key string) error {
	return c.UpdateNode(name, func(n *corev1.Node) { RemoveNodeTaint(n, key) })
}

// UpdateNode changes a node's labels, annotations, taints or spec. Status is
// the kubelet's and changes through SetNodeReady.
func (c *Cluster) UpdateNode(name string, mutate func(*corev1.Node)) error {
	ns, ok := c.nodes[name]
	if !ok {
		return fmt.Errorf("node %q not found", name)
	}
	mutate(ns.node)
	c.nodeChanged(name)
	return nil
}

// RemoveNode deletes a node object. Pods still bound to it are deleted by
// the pod garbage collector at once; a Ready pod among them is recorded as
// killed, since it never went through the Eviction API, and as a PDB breach
// when its PDB allowed no disruption (breach.go) — one pod at a time, so a
// budget that spares one of two pods on the node is breached by the second.
func (c *Cluster) RemoveNode(name, reason string) error {
	ns, ok := c.nodes[name]
	if !ok {
		return fmt.Errorf("node %q not found", name)
	}
	for _, ps := range append([]*podState(nil), ns.pods.list()...) { // removePod changes the set
		if ps.ready && !ps.deleting && !isDaemonSetPod(ps.pod) {
			c.killed = append(c.killed, KilledPod{At: c.eng.Now(), Namespace: ps.pod.Namespace, Name: ps.pod.Name, Node: name, Reason: reason})
		}
		c.takeDown(ps, DropNodeRemoved, reason)
		c.removePod(ps)
	}
	delete(c.nodes, name)
	i := sort.SearchStrings(c.nodeNames, name)
	c.nodeNames = append(c.nodeNames[:i], c.nodeNames[i+1:]...)
	c.nodeList = append(c.nodeList[:i], c.nodeList[i+1:]...)
	c.hot = append(c.hot[:i], c.hot[i+1:]...)
	ns.pos = -1
	c.idleChanged(ns)
	c.renumber(i)
	c.nodeChanged(name)
	return nil
}

// idleChanged keeps Cluster.idle in step with a node's active count and
// its presence in the cluster.
func (c *Cluster) idleChanged(ns *nodeState) {
	idle := ns.pos >= 0 && ns.active == 0
	switch {
	case idle && ns.idleAt == 0:
		c.idle = append(c.idle, ns)
		ns.idleAt = len(c.idle)
	case !idle && ns.idleAt != 0:
		i, last := ns.idleAt-1, c.idle[len(c.idle)-1]
		c.idle[i], last.idleAt = last, i+1
		c.idle = c.idle[:len(c.idle)-1]
		ns.idleAt = 0
	}
}

// IdleNodes yields the names of the nodes with no active pod
// (ActivePods 0), in no particular order: a controller looking for empty
// nodes reads these instead of every node.
func (c *Cluster) IdleNodes() iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, ns := range c.idle {
			if !yield(ns.node.Name) {
				return
			}
		}
	}
}

// renumber sets the position of the nodes from nodeList[from] on.
func (c *Cluster) renumber(from int) {
	for i := from; i < len(c.nodeList); i++ {
		c.nodeList[i].pos = i
	}
}

// nodeHot is a node's entry in Cluster.hot: what the scheduler's walk and
// scoring read of every node, in 56 bytes.
type nodeHot struct {
	free Resources
	zone int32 // nodeState.zoneIdx
	// scratch is a per-pass counter the scheduler's scoring uses.
	scratch int32
	// fitScore is the resource scores (leastAllocated + balancedAllocation)
	// of a pod requesting scoredFor (CPU, memory after nonZero), kept until
	// free changes: replicas of one template score the same nodes in a row.
	scoredFor [2]int64 // zero: none
	fitScore  int64
}

// setUsed records what the node's pods request.
func (c *Cluster) setUsed(ns *nodeState, used Resources) {
	ns.used = used
	if ns.pos >= 0 {
		h := &c.hot[ns.pos]
		h.free, h.scoredFor = ns.free(), [2]int64{}
	}
}

func (c *Cluster) nodeChanged(name string) {
	c.capacityGen++
	c.nodeGen++
	if ns, ok := c.nodes[name]; ok {
		ns.daemonRun = ns.daemonRun[:0]
		ns.zoneName = ns.node.Labels[corev1.LabelTopologyZone]
		ns.zoneIdx = c.zoneIndex(ns.zoneName)
		c.hot[ns.pos].zone = int32(ns.zoneIdx)
		ns.static = ns.static[:0]
	}
	c.scheduler.Fire()
	c.dsDirty[name] = true
	c.daemonSets.Fire()
	for _, h := range c.nodeHook {
		h(name)
	}
}

// Node returns a node, or nil.
func (c *Cluster) Node(name string) *corev1.Node {
	if ns, ok := c.nodes[name]; ok {
		return ns.node
	}
	return nil
}

// Nodes returns every node, sorted by name.
func (c *Cluster) Nodes() []*corev1.Node {
	out := make([]*corev1.Node, len(c.nodeList))
	for i, ns := range c.nodeList {
		out[i] = ns.node
	}
	return out
}

// NodesFree yields every node, sorted by name, with its allocatable minus
// what its pods (terminating ones included) request.
func (c *Cluster) NodesFree() iter.Seq2[*corev1.Node, Resources] {
	return func(yield func(*corev1.Node, Resources) bool) {
		for i, ns := range c.nodeList {
			if !yield(ns.node, c.hot[i].free) {
				return
			}
		}
	}
}

// ActivePods counts the pods bound to a node that would need a new home if
// it went away: not DaemonSet pods, not terminating.
func (c *Cluster) ActivePods(name string) int {
	if ns, ok := c.nodes[name]; ok {
		return ns.active
	}
	return 0
}

// LastPodEvent is the last time a pod was bound to or left the node — the
// clock Karpenter's consolidateAfter runs on.
func (c *Cluster) LastPodEvent(name string) time.Time {
	if ns, ok := c.nodes[name]; ok {
		return ns.lastPodEvent
	}
	return time.Time{}
}

// IsNodeReady reports the node's Ready condition.
func IsNodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

func setNodeCondition(n *corev1.Node, t corev1.NodeConditionType, s corev1.ConditionStatus, now metav1.Time) {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == t {
			if n.Status.Conditions[i].Status != s {
				n.Status.Conditions[i].Status = s
				n.Status.Conditions[i].LastTransitionTime = now
			}
			n.Status.Conditions[i].LastHeartbeatTime = now
			return
		}
	}
	n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: t, Status: s, LastTransitionTime: now, LastHeartbeatTime: now})
}

func addTaint(n *corev1.Node, t corev1.Taint) {
	for i := range n.Spec.Taints {
		if n.Spec.Taints[i].Key == t.Key && n.Spec.Taints[i].Effect == t.Effect {
			n.Spec.Taints[i] = t
			return
		}
	}
	n.Spec.Taints = append(n.Spec.Taints, t)
}

// RemoveNodeTaint removes every taint with key from a node object, for a
// caller already inside UpdateNode.
func RemoveNodeTaint(n *corev1.Node, key string) {
	out := n.Spec.Taints[:0]
	for _, t := range n.Spec.Taints {
		if t.Key != key {
			out = append(out, t)
		}
	}
	n.Spec.Taints = out
}

// HasTaint reports whether the node carries a taint with key.
func HasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
