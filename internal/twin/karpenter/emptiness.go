package karpenter

import (
	"iter"
	"sort"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// emptiness is the Emptiness method (disruption/emptiness.go, semantics.md
// §A.4): nodes with no reschedulable pods whose consolidateAfter has
// elapsed, under consolidationPolicy WhenEmpty or WhenEmptyOrUnderutilized,
// within the Empty budget, all in one command that is validated again after
// 15 s (Validate).
type emptiness struct{ k *Karpenter }

func (*emptiness) Reason() karpv1.DisruptionReason { return karpv1.DisruptionReasonEmpty }

func (*emptiness) Class() string { return gracefulClass }

// mayDisrupt lists, in name order, the NodeClaims whose node may have no
// active pod: those on the cluster's idle nodes and those whose node is
// gone. Every other NodeClaim's node runs a pod Emptiness would have to
// move, so the pass need not read it.
func (e *emptiness) mayDisrupt() []*NodeClaim {
	k := e.k
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
	return out
}

// ShouldDisrupt is true for a NodeClaim of a NodePool that consolidates
// empty nodes, whose node has had no active pod for consolidateAfter.
func (e *emptiness) ShouldDisrupt(c *NodeClaim) bool {
	k := e.k
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
	return !k.eng.Now().Before(last.Add(*after))
}

// ComputeCommands yields one command with every candidate the budgets
// allow and no pod blocks.
func (e *emptiness) ComputeCommands(budgets map[string]int, claims ...*NodeClaim) iter.Seq[*command] {
	return func(yield func(*command) bool) {
		var chosen []*candidate
		for _, claim := range claims {
			if budgets[claim.NodePool] == 0 {
				continue
			}
			if c := e.k.candidate(claim, e.Class()); c != nil {
				budgets[claim.NodePool]--
				chosen = append(chosen, c)
			}
		}
		if len(chosen) > 0 {
			yield(&command{reason: "empty", candidates: chosen})
		}
	}
}

// Validate keeps the candidates still empty, not deleting and within a
// fresh budget mapping (validation.go).
func (e *emptiness) Validate(cmd *command) *command {
	k := e.k
	var valid []*candidate
	budgets := k.budgetMapping(e.Reason())
	for _, c := range cmd.candidates {
		if c.claim.deleting || c.claim.markedForDeletion || len(k.reschedulablePods(c.claim.Node)) > 0 || k.kube.Node(c.claim.Node) == nil {
			continue
		}
		if budgets[c.pool.obj.Name] > 0 {
			budgets[c.pool.obj.Name]--
			valid = append(valid, c)
		}
	}
	if len(valid) == 0 {
		return nil
	}
	cmd.candidates = valid
	return cmd
}
