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
