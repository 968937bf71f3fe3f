package karpenter

import "slices"

// SimulateEveryCandidate builds a drift pass's base and simulates every
// drifted candidate against it, as drift does before it starts a command,
// and reports how many simulations ran and whether the base's capacity was
// the same after each as before the first (simulate and packBase pack on it
// in place and must put it back).
func (k *Karpenter) SimulateEveryCandidate() (sims int, restored bool) {
	var b *simBase
	for _, claim := range k.eligible(func(c *NodeClaim) bool { return c.Drifted != "" }) {
		c := k.candidate(claim, eventualClass)
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

// The package's tests check, on every Emptiness pass, that the NodeClaims
// it reads hold every one whose node has no active pod; on every update of
// a drift pass's base, that its static lists are a new base's; and after
// every simulation, that the pass's shared fit trees hold the base's room.
func init() { checkMaybeEmpty, checkSimBase = true, true }
