package karpenter

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ladder-eks/ladder/internal/catalog"
)

// remainingLimits is what a NodePool's spec.limits leave for new nodes:
// the limits minus the capacity of its NodeClaims that are not being
// deleted (the provisioner's limits check). limited is false when the pool
// sets no limits.
func (k *Karpenter) remainingLimits(p *pool) (corev1.ResourceList, bool) {
	limits := p.obj.Spec.Limits
	if len(limits) == 0 {
		return nil, false
	}
	remaining := corev1.ResourceList{}
	for name, q := range limits {
		remaining[name] = q.DeepCopy()
	}
	for _, c := range k.NodeClaims() {
		if c.NodePool != p.obj.Name || c.deleting {
			continue
		}
		its := c.options
		if c.InstanceType.Name != "" {
			its = []catalog.InstanceType{c.InstanceType}
		}
		if len(its) == 0 {
			continue
		}
		capacity := its[0].Capacity()
		capacity[resourceNodes] = resource.MustParse("1")
		for name, q := range remaining {
			if used, ok := capacity[name]; ok {
				q.Sub(used)
				remaining[name] = q
			}
		}
	}
	return remaining, true
}

// resourceNodes is the "nodes" limit (limits.nodes).
const resourceNodes corev1.ResourceName = "nodes"

// fitsLimits reports whether one more node of a type stays within limits.
func fitsLimits(it catalog.InstanceType, remaining corev1.ResourceList) bool {
	capacity := it.Capacity()
	capacity[resourceNodes] = resource.MustParse("1")
	for name, q := range remaining {
		if need, ok := capacity[name]; ok && need.Cmp(q) > 0 {
			return false
		}
	}
	return true
}
