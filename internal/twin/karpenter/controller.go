package karpenter

import (
	"iter"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// The disruption controller (semantics.md §A.4, disruption/controller.go):
// every 10 s, and again at once after a command starts, it tries its
// methods in order — Emptiness, then Drift — and stops at the first that
// produces a command. For each method it gathers the candidates
// (candidates.go), builds the budget mapping (budgets.go) and hands the
// method's commands to the orchestration queue (queue.go). Deciding is the
// methods' (one file each); carrying out is the queue's. Underutilized
// consolidation is not modelled: a rehearsal never consolidates non-empty
// nodes; it would be one more method.

// Disruption classes (§A.4): graceful methods are always blocked by PDBs and
// do-not-disrupt pods; the eventual class (Drift) ignores them when the
// NodeClaim has a terminationGracePeriod.
const (
	gracefulClass = "graceful"
	eventualClass = "eventual"
)

// method is one reason to disrupt, as Karpenter's disruption.Method.
type method interface {
	Reason() karpv1.DisruptionReason
	Class() string
	// mayDisrupt lists, in name order, every NodeClaim ShouldDisrupt may
	// accept: all of them, or what an index of the method's own narrows
	// them to, so a pass need not read thousands it would refuse.
	mayDisrupt() []*NodeClaim
	// ShouldDisrupt is the method's own test of a NodeClaim that passed
	// the node-level candidate checks.
	ShouldDisrupt(*NodeClaim) bool
	// ComputeCommands yields the commands the method decides on, within
	// budgets (per NodePool, lowered by the method for each command it
	// yields). The controller starts each yielded command before it asks
	// for the next, so a method sees the cluster its earlier commands
	// left.
	ComputeCommands(budgets map[string]int, candidates ...*NodeClaim) iter.Seq[*command]
}

// validatingMethod is a method whose commands wait before they start and
// are checked again (emptiness and consolidation, validation.go: 15 s).
type validatingMethod interface {
	method
	// Validate returns what is left of cmd after the wait, or nil.
	Validate(cmd *command) *command
}

func (k *Karpenter) disrupt() {
	if k.validating || len(k.pools) == 0 {
		return
	}
	for _, m := range k.methods {
		if k.disruptBy(m) {
			k.disrupting.Fire() // singleton.RequeueImmediately
			return
		}
	}
}

// disruptBy runs one method: candidates, budgets, commands. It reports
// whether the method produced a command.
func (k *Karpenter) disruptBy(m method) bool {
	claims := k.eligibleAmong(m.mayDisrupt(), m.ShouldDisrupt)
	if len(claims) == 0 {
		return false
	}
	budgets := k.budgetMapping(m.Reason())
	produced := false
	for cmd := range m.ComputeCommands(budgets, claims...) {
		produced = true
		v, ok := m.(validatingMethod)
		if !ok {
			k.startCommand(cmd)
			continue
		}
		k.validating = true
		k.eng.After(commandValidationDelay, func() {
			k.validating = false
			if cmd := v.Validate(cmd); cmd != nil {
				k.startCommand(cmd)
			}
			k.disrupting.Fire()
		})
	}
	return produced
}
