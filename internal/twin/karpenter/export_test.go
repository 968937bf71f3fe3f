package karpenter

import (
	"fmt"
	"iter"
	"slices"
)

// SimulateEveryCandidate builds a drift pass's base and simulates every
// drifted candidate against it, as drift does before it starts a command,
// and reports how many simulations ran and whether the base's capacity was
// the same after each as before the first (simulate and packBase pack on it
// in place and must put it back).
func (k *Karpenter) SimulateEveryCandidate() (sims int, restored bool) {
	var b *simBase
	d := &drift{k: k}
	for _, claim := range k.eligibleAmong(k.NodeClaims(), d.ShouldDisrupt) {
		c := k.candidate(claim, d.Class())
		if c == nil {
			continue
		}
		if b == nil {
			b = k.newSimBase()
		}
		before := slices.Clone(b.capacity)
		k.simulate(b, c)
		sims++
		if !slices.Equal(before, b.capacity) {
			return sims, false
		}
	}
	return sims, true
}

// DriftedCount is the count of drifted NodeClaims a drift pass reads
// first, and the count it stands for.
func (k *Karpenter) DriftedCount() (kept, counted int) {
	for _, c := range k.claims {
		if c.Drifted != "" {
			counted++
		}
	}
	return k.drifted, counted
}

// VerifyDisruption makes every later disruption pass check what its speed
// indexes must hold, and report what does not: that Emptiness reads every
// NodeClaim whose node has no active pod, and that a drift pass's shared
// simulation state, at each command, is what a new one would be. It wraps
// the controller's methods, as a new reason would be added.
func VerifyDisruption(k *Karpenter, report func(error)) {
	for i, m := range k.methods {
		c := checkedMethod{method: m, k: k, report: report}
		if _, ok := m.(validatingMethod); ok {
			k.methods[i] = checkedValidatingMethod{c}
		} else {
			k.methods[i] = c
		}
	}
}

type checkedMethod struct {
	method
	k      *Karpenter
	report func(error)
}

func (m checkedMethod) mayDisrupt() []*NodeClaim {
	got := m.method.mayDisrupt()
	if _, ok := m.method.(*emptiness); !ok {
		return got
	}
	for _, c := range m.k.NodeClaims() {
		if active, _ := m.k.nodeActivity(c); active == 0 && !c.Initialized.IsZero() && !slices.Contains(got, c) {
			m.report(fmt.Errorf("emptiness left out NodeClaim %s (node %s) with no active pod", c.Name, c.Node))
		}
	}
	return got
}

func (m checkedMethod) ComputeCommands(budgets map[string]int, claims ...*NodeClaim) iter.Seq[*command] {
	inner := m.method.ComputeCommands(budgets, claims...)
	d, _ := m.method.(*drift)
	return func(yield func(*command) bool) {
		for cmd := range inner {
			if d != nil && d.base != nil {
				if err := d.base.verify(); err != nil {
					m.report(err)
				}
			}
			if !yield(cmd) {
				return
			}
		}
	}
}

type checkedValidatingMethod struct{ checkedMethod }

func (m checkedValidatingMethod) Validate(cmd *command) *command {
	return m.method.(validatingMethod).Validate(cmd)
}
