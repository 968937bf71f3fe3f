package karpenter

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kdrain "k8s.io/kubectl/pkg/drain"
	podutil "sigs.k8s.io/karpenter/pkg/utils/pod"

	"github.com/ladder-eks/ladder/internal/drain"
	"github.com/ladder-eks/ladder/internal/eviction"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// The termination controller (semantics.md §A.4, node/termination): once a
// NodeClaim is deleted it taints the node (and labels it out of load
// balancers), drains it through the Eviction API in priority groups, waits
// MinDrainTime and for volumes to detach, terminates the instance, and
// removes the node and the NodeClaim. With a terminationGracePeriod, pods
// that would outlive it are deleted without the Eviction API (§A.4 TGP).

type evictionState struct {
	next    time.Time
	delay   time.Duration
	blocked *Blocked
}

// deleteNodeClaim starts a NodeClaim's deletion.
func (k *Karpenter) deleteNodeClaim(c *NodeClaim) {
	if c.deleting {
		return
	}
	c.deleting = true
	c.markedForDeletion = true
	c.deletionStarted = k.eng.Now()
	if c.TerminationGracePeriod != nil {
		t := c.deletionStarted.Add(*c.TerminationGracePeriod)
		c.terminationTime = &t
	}
	k.noteDisrupting(c, true)
	if c.Node == "" || k.kube.Node(c.Node) == nil {
		// Never registered: terminate the instance (if any) and forget it.
		if c.instanceID != "" {
			k.cloud.Terminate(c.instanceID)
		}
		k.removeNodeClaim(c)
		return
	}
	k.terminate(c, true)
}

func (k *Karpenter) terminate(c *NodeClaim, first bool) {
	node := k.kube.Node(c.Node)
	if node == nil {
		k.removeNodeClaim(c)
		return
	}
	if first {
		_ = k.kube.UpdateNode(c.Node, func(n *corev1.Node) {
			found := false
			for _, t := range n.Spec.Taints {
				if t.Key == DisruptedTaintKey {
					found = true
				}
			}
			if !found {
				n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule})
			}
			n.Labels[nodeExcludeBalancer] = "karpenter"
		})
		k.log(Event{Code: "NodeTainted", Message: "tainted node", Reason: c.disruptionReason, NodePool: c.NodePool, NodeClaim: c.Name, Node: c.Node,
			Fields: []string{"taint.Key=" + DisruptedTaintKey, "taint.Value=", "taint.Effect=NoSchedule"}})
		c.drainStarted = k.eng.Now()
	}
	if c.reconcile == nil {
		c.reconcile = k.eng.NewTrigger(func() { k.terminate(c, false) })
	}
	requeue := c.reconcile.FireAfter

	if !c.terminating {
		if remaining := k.drain(c); remaining > 0 {
			requeue(terminationRequeue)
			return
		}
		if k.eng.Now().Before(c.drainStarted.Add(minDrainTime)) {
			requeue(terminationRequeue)
			return
		}
		if k.kube.VolumesAttachedTo(c.Node) > 0 && !k.gracePeriodElapsed(c) {
			requeue(terminationRequeue)
			return
		}
		c.terminating = true
		// InstanceTerminating: the node stops counting against budgets
		// (BuildDisruptionBudgetMapping skips it, semantics.md §A.1b).
		k.noteDisrupting(c, false)
		// TerminateInstances: the instance goes shutting-down, then
		// terminated (EC2 User Guide, "State change events"); its network
		// interface, and with it the private address the node's name is
		// made of, goes only then.
		k.eng.After(k.opts.Timings.Terminate, func() {
			c.instanceGone = true
			k.cloud.Terminate(c.instanceID)
		})
	}
	if !c.instanceGone {
		requeue(instanceTerminateQuery)
		return
	}
	_ = k.kube.RemoveNode(c.Node, "node deleted by Karpenter")
	c.node = nil
	k.log(Event{Code: "NodeDeleted", Message: "deleted node", Reason: c.disruptionReason, NodePool: c.NodePool, NodeClaim: c.Name, Node: c.Node})
	k.removeNodeClaim(c)
}

func (k *Karpenter) gracePeriodElapsed(c *NodeClaim) bool {
	return c.terminationTime != nil && k.eng.Now().After(*c.terminationTime)
}

func (k *Karpenter) removeNodeClaim(c *NodeClaim) {
	if _, ok := k.claims[c.Name]; !ok {
		return
	}
	delete(k.claims, c.Name)
	delete(k.fitRows, "nodeclaim/"+c.Name)
	k.sortedClaims = nil
	if c.Drifted != "" {
		k.drifted--
	}
	if c.Node != "" && k.byNode[c.Node] == c {
		delete(k.byNode, c.Node) // not when a newer NodeClaim's node has the name
	}
	k.noteDisrupting(c, false)
	k.releaseNode(c)
	if c.disruptionReason != "" && !c.Initialized.IsZero() {
		k.stats[c.NodePool].Replaced++
	}
	for _, es := range c.evictions {
		if es.blocked != nil && es.blocked.Until.IsZero() {
			es.blocked.Until = k.eng.Now()
			if es.blocked.Outcome == "blocked" {
				es.blocked.Outcome = "node-removed"
			}
		}
	}
	k.log(Event{Code: "NodeClaimDeleted", Message: "deleted nodeclaim", Reason: c.disruptionReason, NodePool: c.NodePool, NodeClaim: c.Name, Node: c.Node})
	k.commandProgress()
	k.batch.trigger()
}

// drain evicts what must leave the node and returns how many pods still
// have to go.
func (k *Karpenter) drain(c *NodeClaim) int {
	pods := k.podsToDrain(c.Node)
	if c.terminationTime != nil {
		k.forceDelete(c, pods)
	}
	// Evict one priority group at a time — non-critical non-daemon,
	// non-critical daemon, critical non-daemon, critical daemon — and move to
	// the next only when every pod of the group is gone, terminating ones
	// included (terminator.go groups all pods waiting eviction).
	for group := 0; group < 4; group++ {
		var batch []*corev1.Pod
		for _, p := range pods {
			if drainGroup(p) == group {
				batch = append(batch, p)
			}
		}
		if len(batch) == 0 {
			continue
		}
		for _, p := range batch {
			if p.DeletionTimestamp != nil || podutil.IsDoNotDisruptActive(p, k.clock(), nil) {
				continue // already going, or waiting for the terminationGracePeriod
			}
			k.evict(c, p)
		}
		break
	}
	return len(pods)
}

// podsToDrain are the pods the node must lose: not terminal, not mirror
// pods, not tolerating karpenter.sh/disrupted:NoSchedule (daemons that
// tolerate everything stay), and not stuck terminating past their grace.
func (k *Karpenter) podsToDrain(node string) []*corev1.Pod {
	taint := []corev1.Taint{{Key: DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule}}
	toleratesDisrupted := func(p *corev1.Pod) kdrain.PodDeleteStatus {
		if _, tolerated := kube.Tolerates(p, taint); tolerated {
			return kdrain.MakePodDeleteStatusSkip()
		}
		return kdrain.MakePodDeleteStatusOkay()
	}
	stuckTerminating := func(p *corev1.Pod) kdrain.PodDeleteStatus {
		if p.DeletionTimestamp != nil && p.DeletionGracePeriodSeconds != nil &&
			k.eng.Now().After(p.DeletionTimestamp.Add(time.Duration(*p.DeletionGracePeriodSeconds)*time.Second)) {
			return kdrain.MakePodDeleteStatusSkip()
		}
		return kdrain.MakePodDeleteStatusOkay()
	}
	return drain.Select(k.kube.PodsOnNode(node), drain.SkipTerminal, drain.SkipMirror, toleratesDisrupted, stuckTerminating)
}

func drainGroup(p *corev1.Pod) int {
	critical := p.Spec.PriorityClassName == "system-cluster-critical" || p.Spec.PriorityClassName == "system-node-critical"
	g := 0
	if isDaemonSetPod(p) {
		g = 1
	}
	if critical {
		g += 2
	}
	return g
}

// evict sends one eviction, with the eviction queue's per-pod backoff
// (100 ms doubling to 10 s).
func (k *Karpenter) evict(c *NodeClaim, p *corev1.Pod) {
	key := p.Namespace + "/" + p.Name
	es := c.evictions[key]
	if es == nil {
		es = &evictionState{delay: evictionBaseDelay}
		c.evictions[key] = es
	}
	now := k.eng.Now()
	if now.Before(es.next) {
		return
	}
	err := k.kube.Evict(p.Namespace, p.Name)
	switch {
	case err == nil || apierrors.IsNotFound(err):
		k.release(key)
		if es.blocked != nil && es.blocked.Until.IsZero() {
			es.blocked.Until, es.blocked.Outcome = now, "evicted"
		}
		delete(c.evictions, key)
	case eviction.IsPDBBlock(err) || eviction.IsMultiplePDB(err):
		if es.blocked == nil {
			es.blocked = k.recordBlocked(c, p, err)
		}
		// The termination reconcile runs every second while pods remain, so a
		// retry happens at the first reconcile after the backoff.
		es.next = now.Add(es.delay)
		es.delay *= 2
		if es.delay > evictionMaxDelay {
			es.delay = evictionMaxDelay
		}
	default:
		es.next = now.Add(es.delay)
	}
}

func (k *Karpenter) recordBlocked(c *NodeClaim, p *corev1.Pod, err error) *Blocked {
	b := &Blocked{
		Node: c.Node, Pod: p.Namespace + "/" + p.Name,
		PDB:   pdbNames(k.kube.PDBsForPod(p.Namespace, p.Name)),
		Since: k.eng.Now(), Outcome: "blocked", Message: eviction.BlockingMessage(err),
	}
	k.addBlocked(fmt.Sprintf("%s|%s|%d", c.Node, b.Pod, len(k.blockOrder)), b)
	k.log(Event{Type: "Warning", Code: "FailedDraining", Message: fmt.Sprintf("failed to evict pod %s: %s", b.Pod, b.Message),
		Reason: c.disruptionReason, NodePool: c.NodePool, NodeClaim: c.Name, Node: c.Node})
	return b
}

// forceDelete deletes the pods that would otherwise outlive the node's
// terminationGracePeriod: a pod is deleted once now > terminationTime −
// its own terminationGracePeriodSeconds, with grace max(terminationTime −
// now, 1 s), bypassing PDBs and do-not-disrupt (§A.4).
func (k *Karpenter) forceDelete(c *NodeClaim, pods []*corev1.Pod) {
	now := k.eng.Now()
	deadline := *c.terminationTime
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	for _, p := range pods {
		podGrace := time.Duration(*p.Spec.TerminationGracePeriodSeconds) * time.Second
		if p.DeletionTimestamp != nil {
			if !p.DeletionTimestamp.Time.After(deadline) {
				continue
			}
		} else if !now.After(deadline.Add(-podGrace)) {
			continue // the 1 s reconcile comes back
		}
		grace := int64(deadline.Sub(now) / time.Second)
		if grace < 1 {
			grace = 1
		}
		key := p.Namespace + "/" + p.Name
		if es := c.evictions[key]; es != nil && es.blocked != nil && es.blocked.Until.IsZero() {
			es.blocked.Until, es.blocked.Outcome = now, "forced"
		}
		k.log(Event{Type: "Warning", Code: "PodForceDeleted", Message: fmt.Sprintf("deleting pod %s: terminationGracePeriod %s of nodeclaim expires at %s", key, c.TerminationGracePeriod, deadline.UTC().Format(time.RFC3339)),
			Reason: c.disruptionReason, NodePool: c.NodePool, NodeClaim: c.Name, Node: c.Node})
		_ = k.kube.DeletePod(p.Namespace, p.Name, &grace, fmt.Sprintf("Karpenter: terminationGracePeriod %s of nodeclaim %s", c.TerminationGracePeriod, c.Name))
		k.release(key)
	}
}

// scheduleExpiry arranges the expiration controller's deletion at
// creationTimestamp + expireAfter: forceful, no budget check, no replacement
// launched first (semantics.md §A.5).
func (k *Karpenter) scheduleExpiry(c *NodeClaim) {
	if c.ExpireAfter == nil {
		return
	}
	k.eng.At(c.Created.Add(*c.ExpireAfter), func() {
		if _, alive := k.claims[c.Name]; !alive || c.deleting {
			return
		}
		c.disruptionReason = "expired"
		k.log(Event{Code: "NodeClaimExpired", Message: fmt.Sprintf("deleting expired nodeclaim (expireAfter %s)", c.ExpireAfter), Reason: "expired",
			NodePool: c.NodePool, NodeClaim: c.Name, Node: c.Node})
		k.deleteNodeClaim(c)
	})
}
