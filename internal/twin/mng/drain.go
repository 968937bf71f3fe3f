package mng

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ladder-eks/ladder/internal/drain"
	"github.com/ladder-eks/ladder/internal/eviction"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	"github.com/ladder-eks/ladder/internal/sim"
)

// Draining a node the way EKS does before it terminates one: cordon, evict
// every pod through the Eviction API, retry refused evictions, and give up
// after a time limit — failing the update, deleting the pods, or
// terminating the node anyway, depending on who drains (semantics.md §B).

// onTimeout is what happens when a drain's time limit passes with pods
// still on the node.
type onTimeout int

const (
	// failDrain ends the drain as failed: the update fails with
	// PodEvictionFailure.
	failDrain onTimeout = iota
	// deletePods deletes the remaining pods without the Eviction API and
	// keeps waiting for them to exit: the force flag ("you can apply the
	// force flag with the update-nodegroup-version request to delete the
	// Pods", §B upgrade phase step 3).
	deletePods
	// proceed ends the drain as timed out and the caller terminates the
	// node with whatever still runs there (scale-in and DeleteNodegroup).
	proceed
)

// drainer drains one node.
type drainer struct {
	s       *Service
	g       *group
	node    string
	limit   time.Duration
	timeout onTimeout
	started time.Time

	pods     map[string]*podDrain // by namespace/name
	trigger  *sim.Trigger
	deadline *sim.Event
	forced   bool
	finished bool
	// onBlocked records a pod whose eviction was refused; done receives the
	// outcome.
	onBlocked func(*Blocked)
	done      func(drainResult)
}

type podDrain struct {
	namespace, name string
	retry           *sim.Event
	blocked         *Blocked
}

// drainResult is how a drain ended: the node is empty, or the time limit
// passed with pods still there.
type drainResult struct {
	timedOut  bool
	remaining []*corev1.Pod
	// blocked is the first remaining pod whose eviction was refused, if any.
	blocked *Blocked
}

// drain starts draining a node. It cordons the node unless it already is,
// then evicts at once; refused evictions are retried every EvictionRetry.
// A pod that lands on the node later (one that tolerates every taint, §B
// "Deployment tolerating all the taints") is evicted too.
func (s *Service) drain(g *group, node string, limit time.Duration, timeout onTimeout, onBlocked func(*Blocked), done func(drainResult)) *drainer {
	d := &drainer{s: s, g: g, node: node, limit: limit, timeout: timeout, started: s.eng.Now(),
		pods: map[string]*podDrain{}, onBlocked: onBlocked, done: done}
	d.trigger = s.eng.NewTrigger(d.step)
	s.drains[node] = d
	s.cordon(g, node, false)
	s.log(Event{Reason: ReasonDrainStarted, Nodegroup: g.spec.Name, Node: node,
		Message: fmt.Sprintf("draining node/%s: %d pods to evict, time limit %s", node, len(s.drainablePods(node)), limit)})
	d.deadline = s.eng.After(limit, d.expire)
	d.step()
	return d
}

// drainablePods are the pods EKS must move off a node: every pod except
// those that have already finished, mirror pods (the API cannot delete
// them) and DaemonSet pods (the DaemonSet controller ignores cordons and
// would put them back; kubectl's --ignore-daemonsets, §D.3). Pods already
// terminating count until they are gone.
func (s *Service) drainablePods(node string) []*corev1.Pod {
	return drain.Select(s.kube.PodsOnNode(node), drain.SkipTerminal, drain.SkipMirror, drain.SkipDaemonSet)
}

// step looks at the node: done when it is empty, otherwise evict (or, once
// forced, delete) every pod not already leaving or waiting for a retry.
func (d *drainer) step() {
	if d.finished {
		return
	}
	pods := d.s.drainablePods(d.node)
	if len(pods) == 0 {
		d.s.log(Event{Reason: ReasonNodeDrained, Nodegroup: d.g.spec.Name, Node: d.node,
			Message: fmt.Sprintf("node/%s drained after %s", d.node, d.s.eng.Now().Sub(d.started))})
		d.finish(drainResult{})
		return
	}
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		pd := d.podDrain(p)
		switch {
		case d.forced:
			d.forceDelete(pd)
		case pd.retry == nil:
			d.evict(pd)
		}
	}
}

func (d *drainer) podDrain(p *corev1.Pod) *podDrain {
	k := p.Namespace + "/" + p.Name
	pd := d.pods[k]
	if pd == nil {
		pd = &podDrain{namespace: p.Namespace, name: p.Name}
		d.pods[k] = pd
	}
	return pd
}

// evict posts one eviction. A refusal — the 429 of an exhausted PDB, the
// 500 of a pod under two PDBs (EKS MNG treats it as a blocker, §F.7 and §B
// "multiple PDBs pointing to the same Pod"), or any other error — is
// retried after EvictionRetry until the time limit.
func (d *drainer) evict(pd *podDrain) {
	s := d.s
	k := pd.namespace + "/" + pd.name
	err := s.kube.Evict(pd.namespace, pd.name)
	switch {
	case err == nil:
		if pd.blocked != nil {
			pd.blocked.Until, pd.blocked.Outcome = s.eng.Now(), "evicted"
		}
		s.log(Event{Reason: ReasonEvicting, Nodegroup: d.g.spec.Name, Node: d.node, Object: k, Message: "evicting pod " + k})
	case apierrors.IsNotFound(err):
	default:
		if pd.blocked == nil {
			pd.blocked = &Blocked{Node: d.node, Pod: k, PDB: pdbNames(s, pd.namespace, pd.name), Since: s.eng.Now(),
				Outcome: "blocked", Message: eviction.BlockingMessage(err)}
			if d.onBlocked != nil {
				d.onBlocked(pd.blocked)
			}
			s.log(Event{Type: "Warning", Reason: ReasonEvictionBlocked, Nodegroup: d.g.spec.Name, Node: d.node, Object: k,
				Message: fmt.Sprintf("error when evicting pods/%q -n %q (will retry after %s): %s%s", pd.name, pd.namespace, nodegroup.EvictionRetry, err.Error(), pdbSuffix(pd.blocked.PDB, err))})
		}
		pd.retry = s.eng.After(nodegroup.EvictionRetry, func() {
			pd.retry = nil
			d.step()
		})
	}
}

func pdbSuffix(pdb string, err error) string {
	if pdb == "" {
		return ""
	}
	code := 0
	if st, ok := err.(apierrors.APIStatus); ok {
		code = int(st.Status().Code)
	}
	return fmt.Sprintf(" [PodDisruptionBudget %s, HTTP %d]", pdb, code)
}

// forceDelete deletes a pod without the Eviction API, with its own grace
// period; its PDB is not consulted (a deletion under an exhausted PDB is
// a breach, kube.PDBBreach).
func (d *drainer) forceDelete(pd *podDrain) {
	s := d.s
	k := pd.namespace + "/" + pd.name
	if pd.retry != nil {
		pd.retry.Cancel()
		pd.retry = nil
	}
	by := fmt.Sprintf("UpdateNodegroupVersion %s with force: node/%s not drained within %s", d.g.spec.Name, d.node, d.limit)
	if s.kube.DeletePod(pd.namespace, pd.name, nil, by) != nil {
		return
	}
	if pd.blocked != nil && pd.blocked.Until.IsZero() {
		pd.blocked.Until, pd.blocked.Outcome = s.eng.Now(), "forced"
	}
	s.log(Event{Type: "Warning", Reason: ReasonPodDeleted, Nodegroup: d.g.spec.Name, Node: d.node, Object: k,
		Message: fmt.Sprintf("deleting pod %s: it did not leave node/%s within %s and the update is forced (PodDisruptionBudgets not respected)", k, d.node, d.limit)})
}

// expire runs when the time limit passes.
func (d *drainer) expire() {
	if d.finished {
		return
	}
	pods := d.s.drainablePods(d.node)
	if len(pods) == 0 {
		d.step()
		return
	}
	if d.timeout == deletePods {
		d.forced = true
		d.step()
		return
	}
	res := drainResult{timedOut: true, remaining: pods}
	for _, p := range pods {
		pd := d.pods[p.Namespace+"/"+p.Name]
		if pd == nil || pd.blocked == nil {
			continue
		}
		if res.blocked == nil {
			res.blocked = pd.blocked
		}
		if d.timeout == proceed {
			// The caller terminates the node with the pod on it (§B:
			// "the node is terminated regardless").
			pd.blocked.Outcome = "node-removed"
		}
	}
	d.s.log(Event{Type: "Warning", Reason: ReasonDrainTimedOut, Nodegroup: d.g.spec.Name, Node: d.node,
		Message: fmt.Sprintf("node/%s still runs %d pods after %s: %s", d.node, len(pods), d.limit, podNames(pods))})
	d.finish(res)
}

// finish ends the drain and reports its outcome.
func (d *drainer) finish(res drainResult) {
	d.stop(res.timedOut)
	if d.done != nil {
		d.done(res)
	}
}

// abort ends the drain without reporting: the operation that started it
// has ended (a failed update). The node stays cordoned.
func (d *drainer) abort() { d.stop(true) }

func (d *drainer) stop(unfinished bool) {
	if d.finished {
		return
	}
	d.finished = true
	d.deadline.Cancel()
	if d.s.drains[d.node] == d {
		delete(d.s.drains, d.node)
	}
	for _, k := range slices.Sorted(maps.Keys(d.pods)) {
		pd := d.pods[k]
		if pd.retry != nil {
			pd.retry.Cancel()
		}
		if b := pd.blocked; b != nil && b.Until.IsZero() {
			b.Until = d.s.eng.Now()
			if !unfinished {
				b.Outcome = "left" // gone without a successful eviction by this drain (e.g. deleted by its owner)
			}
		}
	}
}

// cordon marks a node unschedulable; when an update is about to replace it,
// it is also labelled out of external load balancers (§B scale-up phase:
// "It marks nodes as unschedulable to avoid scheduling new Pods. It also
// labels nodes with node.kubernetes.io/exclude-from-external-load-
// balancers=true").
func (s *Service) cordon(g *group, node string, excludeFromLB bool) {
	n := s.kube.Node(node)
	if n == nil {
		return
	}
	if !n.Spec.Unschedulable {
		_ = s.kube.Cordon(node)
		s.log(Event{Reason: ReasonNodeCordoned, Nodegroup: g.spec.Name, Node: node, Message: "node/" + node + " cordoned"})
	}
	if excludeFromLB && n.Labels[LabelExcludeFromLB] != "true" {
		_ = s.kube.UpdateNode(node, func(n *corev1.Node) {
			if n.Labels == nil {
				n.Labels = map[string]string{}
			}
			n.Labels[LabelExcludeFromLB] = "true"
		})
	}
}

func pdbNames(s *Service, namespace, name string) string {
	pdbs := s.kube.PDBsForPod(namespace, name)
	names := make([]string, len(pdbs))
	for i, p := range pdbs {
		names[i] = p.Namespace + "/" + p.Name
	}
	return strings.Join(names, ",")
}

func podNames(pods []*corev1.Pod) string {
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Namespace + "/" + p.Name
	}
	return strings.Join(names, ", ")
}
