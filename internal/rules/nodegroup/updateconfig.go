// Package nodegroup holds the rules of EKS managed node groups as pure
// functions over API-shaped inputs: what UpdateNodegroupVersion and
// CreateNodegroup refuse, the update's arithmetic (maxUnavailable, surge),
// and which instance the update takes down next (semantics.md §B). The
// managed-node-group twin applies them; an executor can ask them what a real
// update will do.
package nodegroup

// The update's arithmetic, as pure functions of the group's configuration
// (semantics.md §B setup phase step 3, scale-up phase step 1, updateConfig;
// §F.9).

// UpdateConfig is NodegroupUpdateConfig: at most one of the two is set.
type UpdateConfig struct {
	MaxUnavailable           *int
	MaxUnavailablePercentage *int
}

// MaxUnavailableQuota is the most nodes an update takes down in parallel:
// "The maximum unavailable has a quota of 100 nodes" (§B setup phase step 3;
// API NodegroupUpdateConfig: maxUnavailable "The maximum number is 100",
// maxUnavailablePercentage "up to 100 nodes at once").
const MaxUnavailableQuota = 100

// ValidateUpdateConfig applies NodegroupUpdateConfig's ranges (semantics.md
// §B updateConfig): maxUnavailable 1–100, maxUnavailablePercentage 1–100,
// not both. maxUnavailable may not exceed the group's maxSize either
// ("maxUnavailable cannot be higher than maxSize", eksctl's managed node
// group documentation, quoted in aws/aws-cdk#27320).
func ValidateUpdateConfig(c UpdateConfig, maxSize int) error {
	if c.MaxUnavailable != nil && c.MaxUnavailablePercentage != nil {
		return NewError(InvalidParameterException, OpCreateNodegroup, "updateConfig: set maxUnavailable or maxUnavailablePercentage, not both")
	}
	if n := c.MaxUnavailable; n != nil {
		if *n < 1 || *n > MaxUnavailableQuota {
			return NewError(InvalidParameterException, OpCreateNodegroup, "updateConfig.maxUnavailable %d is outside 1-%d", *n, MaxUnavailableQuota)
		}
		if *n > maxSize {
			return NewError(InvalidParameterException, OpCreateNodegroup, "updateConfig.maxUnavailable %d is higher than maxSize %d", *n, maxSize)
		}
	}
	if p := c.MaxUnavailablePercentage; p != nil && (*p < 1 || *p > 100) {
		return NewError(InvalidParameterException, OpCreateNodegroup, "updateConfig.maxUnavailablePercentage %d is outside 1-100", *p)
	}
	return nil
}

// MaxUnavailable is how many nodes an update replaces in parallel in a
// group of size nodes with updateConfig c.
//
//   - Neither field set: one node ("The default value is one node", §B).
//   - maxUnavailable: that number.
//   - maxUnavailablePercentage: the percentage of size, rounded up. The AWS
//     documents do not say how the percentage rounds. The twin rounds up,
//     as every other percentage in the reference does — PDB maxUnavailable
//     and minAvailable, Karpenter budgets, EC2 MinHealthyPercentage
//     (§F.1) — and so that any percentage of a non-empty group lets at least
//     one node through: 1 % of 3 nodes is 1, 33 % of 10 is 4.
//
// The result is at least 1 and at most MaxUnavailableQuota.
func MaxUnavailable(c UpdateConfig, size int) int {
	n := 1
	switch {
	case c.MaxUnavailable != nil:
		n = *c.MaxUnavailable
	case c.MaxUnavailablePercentage != nil:
		n = (*c.MaxUnavailablePercentage*size + 99) / 100
	}
	return min(max(n, 1), MaxUnavailableQuota)
}

// Surge is how many nodes the scale-up phase adds to the Auto Scaling group
// (its desired and maximum size): "the larger of either: Up to twice the
// number of Availability Zones that the Auto Scaling group is deployed in.
// The maximum unavailable of upgrade." (§B scale-up phase step 1, §F.9).
// With five zones and maxUnavailable 1 that is 10; with maxUnavailable 20
// it is 20.
func Surge(zones, maxUnavailable int) int {
	return max(2*zones, maxUnavailable)
}
