package karpenter

import (
	"fmt"

	"github.com/awslabs/operatorpkg/serrors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	"sigs.k8s.io/karpenter/pkg/utils/resources"

	"github.com/ladder-eks/ladder/internal/catalog"
)

// NodePool spec.limits (semantics.md §A.1), enforced as Karpenter's scheduler
// enforces them in one Solve (sigs.k8s.io/karpenter v1.14
// pkg/controllers/provisioning/scheduling/scheduler.go):
//
//   - NewScheduler starts each limited NodePool's remainingResources at its
//     limits and subtracts the capacity of every active node of the pool
//     (updateRemainingResources over nodes.Active(): nodes marked for
//     deletion, and in a disruption simulation the candidates, do not count);
//   - addToNewNodeClaim, before it opens a NodeClaim from the pool, stops at
//     "node limits have been exhausted" when limits.nodes is zero, and keeps
//     only the instance types whose capacity fits what remains
//     (filterByRemainingResources); none left is "all available instance
//     types exceed limits for nodepool";
//   - each NodeClaim it opens subtracts, per resource, the largest capacity
//     among the NodeClaim's instance-type options (subtractMax): the limit
//     holds whichever of them EC2 launches, so one batch cannot overshoot.
//
// An instance type's capacity carries no "nodes": within one Solve only the
// nodes already there count against limits.nodes, as upstream (whose
// provisioner.go notes that node limits are a static NodePool feature).
// Provisioner.Create's own check (Limits.ExceededBy on the cluster state's
// usage) is not modelled: the NodeClaims of a batch are created in
// parallel, so what it sees depends on timing; against the usage at the
// start of the batch it never refuses what the Solve allowed.

// solveLimits is what the limited NodePools' spec.limits leave during one
// scheduling simulation, by NodePool name. A pool without limits has no
// entry. The zero value (nil) limits nothing: tests and callers that open
// no NodeClaim need none.
type solveLimits map[string]*poolRemaining

// poolRemaining is one NodePool's remainingResources in a Solve.
type poolRemaining struct {
	left corev1.ResourceList
	// verdict caches, while left stays the same, whether any of the pool's
	// instance types fits it: "" yes, else Karpenter's error.
	verdict      string
	verdictKnown bool
}

// limitsAtStart is remainingResources at the start of a Solve: every
// limited pool's limits minus the capacity of its active NodeClaims (a
// disruption simulation adds its candidates back, clone).
func (k *Karpenter) limitsAtStart() solveLimits {
	var out solveLimits
	for _, p := range k.poolsByWeight() {
		if len(p.obj.Spec.Limits) == 0 {
			continue
		}
		if out == nil {
			out = solveLimits{}
		}
		out[p.obj.Name] = &poolRemaining{left: corev1.ResourceList(p.obj.Spec.Limits).DeepCopy()}
	}
	if out == nil {
		return nil
	}
	for _, c := range k.NodeClaims() {
		r := out[c.NodePool]
		if r == nil || c.deleting || c.markedForDeletion {
			continue
		}
		r.left = resources.Subtract(r.left, k.claimCapacity(c))
	}
	return out
}

// claimCapacity is a NodeClaim's StateNode.Capacity
// (pkg/controllers/state/statenode.go): its instance type's capacity once
// launched (status.capacity, then the node's), plus one node. Before launch
// status.capacity is empty and the NodeClaim counts as one node only.
func (k *Karpenter) claimCapacity(c *NodeClaim) corev1.ResourceList {
	out := corev1.ResourceList{resources.Node: resource.MustParse("1")}
	if c.InstanceType.Name != "" {
		for name, q := range k.facts(c.InstanceType).capacity {
			out[name] = q
		}
	}
	return out
}

// clone copies the limits for a simulation that subtracts from them,
// adding back the capacity of the claims in addBack (candidates simulated
// away).
func (l solveLimits) clone(k *Karpenter, addBack ...*NodeClaim) solveLimits {
	if l == nil {
		return nil
	}
	out := make(solveLimits, len(l))
	for name, r := range l {
		out[name] = &poolRemaining{left: r.left.DeepCopy(), verdict: r.verdict, verdictKnown: r.verdictKnown}
	}
	for _, c := range addBack {
		r := out[c.NodePool]
		if r == nil || c.deleting || c.markedForDeletion {
			continue
		}
		for name, q := range k.claimCapacity(c) {
			if left, ok := r.left[name]; ok {
				left.Add(q)
				r.left[name] = left
			}
		}
		r.verdictKnown = false
	}
	return out
}

// blocked returns Karpenter's error when the pool may open no NodeClaim at
// all: limits.nodes is used up, or none of the pool's instance types fits
// what remains. It returns "" when the pool has no limits.
func (l solveLimits) blocked(k *Karpenter, p *pool) string {
	r := l[p.obj.Name]
	if r == nil {
		return ""
	}
	if !r.verdictKnown {
		r.verdict, r.verdictKnown = "", true
		if nodes, ok := r.left[resources.Node]; ok && nodes.IsZero() {
			r.verdict = limitsError("node limits have been exhausted for nodepool", p)
		} else if !k.anyFits(p, r.left) {
			r.verdict = limitsError("all available instance types exceed limits for nodepool", p)
		}
	}
	return r.verdict
}

// poolTypes are the instance types compatible with a pool's requirements
// (the NodeClaimTemplate's InstanceTypeOptions, NewScheduler), in catalog
// order; launchable then keeps those the pool can launch now. A pool is
// replaced, not changed, when its NodePool is applied again.
func (k *Karpenter) poolTypes(p *pool) []catalog.InstanceType {
	if its, ok := k.poolTypeCache[p]; ok {
		return its
	}
	var its []catalog.InstanceType
	for _, it := range k.opts.InstanceTypes {
		if k.facts(it).requirements.Intersects(p.requirements) == nil {
			its = append(its, it)
		}
	}
	k.poolTypeCache[p] = its
	return its
}

// limitsError is the error addToNewNodeClaim returns, as Karpenter prints
// it: "… for nodepool (NodePool=default)".
func limitsError(msg string, p *pool) string {
	return serrors.Wrap(fmt.Errorf("%s", msg), "NodePool", klog.KRef("", p.obj.Name)).Error()
}

// within keeps the instance types whose capacity fits what the pool's
// limits leave (filterByRemainingResources): its itself when the pool has
// no limits or they all fit.
func (l solveLimits) within(k *Karpenter, p *pool, its []catalog.InstanceType) []catalog.InstanceType {
	r := l[p.obj.Name]
	if r == nil {
		return its
	}
	for i, it := range its {
		if fitsRemaining(k.facts(it).capacity, r.left) {
			continue
		}
		out := append([]catalog.InstanceType(nil), its[:i]...)
		for _, it := range its[i+1:] {
			if fitsRemaining(k.facts(it).capacity, r.left) {
				out = append(out, it)
			}
		}
		return out
	}
	return its
}

// open records a NodeClaim opened from the pool with these instance-type
// options (subtractMax).
func (l solveLimits) open(k *Karpenter, p *pool, its []catalog.InstanceType) {
	r := l[p.obj.Name]
	if r == nil || len(its) == 0 {
		return
	}
	capacities := make([]corev1.ResourceList, len(its))
	for i, it := range its {
		capacities[i] = k.facts(it).capacity
	}
	r.left = subtractMax(r.left, capacities)
	r.verdictKnown = false
}

// subtractMax is scheduler.go subtractMax: remaining minus, per resource,
// the largest quantity among the capacities.
func subtractMax(remaining corev1.ResourceList, capacities []corev1.ResourceList) corev1.ResourceList {
	largest := resources.MaxResources(capacities...)
	out := corev1.ResourceList{}
	for name, q := range remaining {
		left := q.DeepCopy()
		left.Sub(largest[name])
		out[name] = left
	}
	return out
}

// fitsRemaining is filterByRemainingResources' test for one instance type:
// no resource of its capacity exceeds what remains of it. A resource the
// type does not have counts as zero, so it fails only once the remainder is
// negative.
func fitsRemaining(capacity, remaining corev1.ResourceList) bool {
	for name, left := range remaining {
		if resources.Cmp(capacity[name], left) > 0 {
			return false
		}
	}
	return true
}

// anyFits reports whether the pool can launch one of its instance types
// within what remains.
func (k *Karpenter) anyFits(p *pool, remaining corev1.ResourceList) bool {
	class := k.classes[p.obj.Spec.Template.Spec.NodeClassRef.Name]
	for _, it := range k.poolTypes(p) {
		if canLaunch(class, it) && fitsRemaining(k.facts(it).capacity, remaining) {
			return true
		}
	}
	return false
}
