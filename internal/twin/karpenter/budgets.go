package karpenter

import (
	"fmt"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/disruption"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// budgetMapping is BuildDisruptionBudgetMapping (semantics.md §A.1b): per
// NodePool, the allowed disruptions for reason minus the nodes already
// disrupting. The total counts initialized Karpenter nodes without
// InstanceTerminating; NotReady and marked-for-deletion nodes count and are
// subtracted. The allowed number is upstream's own
// GetAllowedDisruptionsByReason (internal/disruption).
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
		if !kube.IsNodeReady(node) || c.markedForDeletion || c.deleting {
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

func anyAllowed(mapping map[string]int) bool {
	for _, v := range mapping {
		if v > 0 {
			return true
		}
	}
	return false
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
