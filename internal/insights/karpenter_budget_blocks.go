package insights

import (
	"fmt"
	"slices"
	"strings"
	"time"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/disruption"
)

func init() { Register(karpenterBudgetBlocks{}) }

// karpenterBudgetBlocks finds NodePools whose disruption budgets never let
// Karpenter replace a drifted node: a budget of nodes "0" for every reason
// or for Drifted that is always active, schedule windows that never open,
// or budgets Karpenter cannot evaluate (it then fails closed: 0 for every
// reason). After the control-plane upgrade the NodePool's nodes then keep
// their old kubelet forever. ERROR. The budget arithmetic is
// internal/disruption's, which is Karpenter's own.
type karpenterBudgetBlocks struct{}

func (karpenterBudgetBlocks) Info() Info {
	return Info{
		ID:    "karpenter-budget-blocks",
		Title: "NodePools whose budgets never allow drift",
		Help: "Karpenter replaces nodes after a control-plane upgrade by drift, which disruption budgets limit. A budget of nodes \"0\" that always covers Drifted, " +
			"schedule windows that never open, or a budget Karpenter cannot evaluate (it fails closed) means the NodePool's nodes are never replaced. ERROR.",
		Needs: NeedsObjects,
	}
}

// budgetHorizon is how far ahead windows are searched for one that opens.
const budgetHorizon = disruption.MaxWindow

func (karpenterBudgetBlocks) Run(in *Input) []Finding {
	var out []Finding
	for _, o := range in.Kind("NodePool") {
		written, ok := o.Typed.(*karpv1.NodePool)
		if !ok {
			continue
		}
		np := written.DeepCopy()
		disruption.DefaultNodePool(np)
		nodes := max(1, in.nodesIn(np.Name))
		now := in.Now
		if now.IsZero() {
			now = time.Now()
		}
		broken := false
		for _, e := range disruption.ValidateBudgets(np) {
			if e.Kind == disruption.Broken {
				broken = true
				out = append(out, o.Finding(Error, e.Field,
					fmt.Sprintf("%s: %s; Karpenter cannot evaluate the budget and allows 0 disruptions for every reason, so no node is ever replaced by drift", o, e.Msg),
					fmt.Sprintf("Fix the budget (%s).", strings.TrimSuffix(e.Fix, "."))))
			}
		}
		if broken {
			continue
		}
		allowed, err := disruption.AllowedByReason(np, now, nodes)
		if err != nil || allowed[karpv1.DisruptionReasonDrifted] > 0 {
			continue
		}
		changes, err := disruption.Changes(np, now, budgetHorizon, nodes, 0)
		if err != nil {
			changes, err = disruption.Changes(np, now, 7*24*time.Hour, nodes, 0)
			if err != nil {
				continue
			}
		}
		if slices.ContainsFunc(changes, func(c disruption.Change) bool { return c.Available[karpv1.DisruptionReasonDrifted] > 0 }) {
			continue // a window opens: drift waits for it, but happens
		}
		field, what := blockingBudgets(np)
		out = append(out, o.Finding(Error, field,
			fmt.Sprintf("%s never allows a Drifted disruption (%s): after the control-plane upgrade Karpenter never replaces its nodes, which keep their old kubelet", o, what),
			"Allow drift: give the Drifted budget nodes \"1\" (or a percentage), or a schedule window that opens (e.g. schedule \"0 22 * * *\", duration 4h), for the time of the upgrade."))
	}
	return out
}

// blockingBudgets names the always-active zero budgets that cover Drifted.
func blockingBudgets(np *karpv1.NodePool) (field, what string) {
	var parts []string
	for i, b := range np.Spec.Disruption.Budgets {
		if b.Reasons != nil && !slices.Contains(b.Reasons, karpv1.DisruptionReasonDrifted) {
			continue
		}
		if b.Nodes != "0" && b.Nodes != "0%" {
			continue
		}
		if field == "" {
			field = fmt.Sprintf("spec.disruption.budgets[%d]", i)
		}
		reasons := "all reasons"
		if b.Reasons != nil {
			rs := make([]string, len(b.Reasons))
			for j, r := range b.Reasons {
				rs[j] = string(r)
			}
			reasons = strings.Join(rs, ", ")
		}
		s := fmt.Sprintf("budgets[%d] nodes %q for %s", i, b.Nodes, reasons)
		if b.Schedule != nil {
			s += fmt.Sprintf(", schedule %q", *b.Schedule)
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "spec.disruption.budgets", "its budgets allow 0 nodes at every instant of the next year"
	}
	return field, strings.Join(parts, "; ")
}

// nodesIn counts the cluster's nodes in a group (0 without cluster facts).
func (in *Input) nodesIn(group string) int {
	if in.Cluster == nil {
		return 0
	}
	n := 0
	for _, nd := range in.Cluster.Nodes {
		if nd.Group == group {
			n++
		}
	}
	return n
}
