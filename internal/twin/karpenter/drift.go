package karpenter

import (
	"iter"
	"sort"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// drift is the Drift method (disruption/drift.go, semantics.md §A.4):
// drifted candidates ordered by when they drifted, empty ones first; the
// first within budget whose pods can be rescheduled becomes a one-candidate
// command.
//
// Upstream returns after one command and requeues the controller at once;
// the next pass finds the same candidates minus the one just taken, with one
// more node disrupting. The twin runs those passes in one loop at the same
// virtual instant: each further command sees the budget lowered by the
// commands before it and simulates against the cluster they left
// (simbase.go).
type drift struct {
	k *Karpenter
	// base is the pass's shared simulation state while ComputeCommands
	// runs, nil otherwise.
	base *simBase
}

func (*drift) Reason() karpv1.DisruptionReason { return karpv1.DisruptionReasonDrifted }

func (*drift) Class() string { return eventualClass }

// mayDisrupt is every NodeClaim, or none while none is drifted: the
// controller then moves on before it builds the budget mapping.
func (d *drift) mayDisrupt() []*NodeClaim {
	if d.k.drifted == 0 {
		return nil
	}
	return d.k.NodeClaims()
}

// ShouldDisrupt is true for a NodeClaim with the Drifted condition.
func (*drift) ShouldDisrupt(c *NodeClaim) bool { return c.Drifted != "" }

func (d *drift) ComputeCommands(budgets map[string]int, claims ...*NodeClaim) iter.Seq[*command] {
	return func(yield func(*command) bool) {
		if !anyAllowed(budgets) {
			return
		}
		k := d.k
		claims = d.order(claims)
		defer func() {
			if d.base != nil {
				d.base.dropFit(k)
				d.base = nil
			}
		}()
		for _, claim := range claims {
			if budgets[claim.NodePool] == 0 {
				continue
			}
			// The pod-level checks (PDBs, do-not-disrupt) come first, as in
			// Karpenter, where GetCandidates drops such nodes before any
			// command is computed; only then the scheduling simulation.
			c := k.candidate(claim, d.Class())
			if c == nil {
				continue
			}
			if d.base == nil {
				d.base = k.newSimBase()
			}
			res := k.simulate(d.base, c)
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
			if !yield(cmd) {
				return
			}
			budgets[claim.NodePool]-- // the candidate is now marked for deletion: one more disrupting
			if !k.updateSimBase(d.base, cmd) {
				d.base.dropFit(k)
				d.base = nil // rebuilt for the next candidate
			}
		}
	}
}

// order sorts drifted NodeClaims by when they drifted, those whose node
// runs no pod to move first.
func (d *drift) order(claims []*NodeClaim) []*NodeClaim {
	sort.SliceStable(claims, func(i, j int) bool { return claims[i].DriftedSince.Before(claims[j].DriftedSince) })
	var empty, nonEmpty []*NodeClaim
	for _, c := range claims {
		if d.k.kube.ActivePods(c.Node) == 0 {
			empty = append(empty, c)
		} else {
			nonEmpty = append(nonEmpty, c)
		}
	}
	return append(empty, nonEmpty...)
}
