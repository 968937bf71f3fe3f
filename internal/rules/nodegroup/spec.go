package nodegroup

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Spec is a node group's configuration: the fields of CreateNodegroup that
// the twin models, mirroring scenario.ManagedGroup. The managed-node-group
// twin creates groups from it; a scenario's validation checks one with
// ValidateScaling and ResolveImage.
type Spec struct {
	Name string
	// InstanceTypes are the group's instance types. Nodes use the first:
	// for ON_DEMAND groups EKS uses the "prioritized" allocation strategy,
	// which takes the list in order; for SPOT the twin makes the same
	// choice rather than model capacity-optimized allocation.
	InstanceTypes []string
	// CapacityType is ON_DEMAND (default) or SPOT.
	CapacityType string
	// Desired, Min and Max are the scaling config; Max 0 means Desired.
	Desired, Min, Max int
	// Zones are the AZs of the group's subnets; default: the cluster's.
	Zones []string
	// AMIType is e.g. AL2023_x86_64_STANDARD; default AL2023 for the
	// instance type's architecture. Ignored for a custom-AMI group.
	AMIType string
	// Version is the group's Kubernetes minor ("1.30"); default: the
	// control plane's. ReleaseVersion pins an AMI release ("1.30.14-20260220"
	// or "v20260220"); default: the newest released by now.
	Version        string
	ReleaseVersion string
	// LaunchTemplate, when set, is the user's launch template; with an
	// ImageID the group is a custom-AMI group (semantics.md §B "Custom
	// launch template / AMI").
	LaunchTemplate *LaunchTemplate
	// Labels and Taints go on every node of the group.
	Labels map[string]string
	Taints []corev1.Taint
	// UpdateConfig and UpdateStrategy (DEFAULT or MINIMAL) shape updates.
	UpdateConfig   UpdateConfig
	UpdateStrategy string
}

// Capacity types and update strategies.
const (
	CapacityOnDemand = "ON_DEMAND"
	CapacitySpot     = "SPOT"
	StrategyDefault  = "DEFAULT"
	StrategyMinimal  = "MINIMAL"
)

// upperChoice reads an enum of the EKS API as the API does, whatever its
// case: it upper-cases *v, defaults it to the first choice when empty, and
// reports whether it is one of the choices.
func upperChoice(v *string, choices ...string) bool {
	*v = strings.ToUpper(*v)
	if *v == "" {
		*v = choices[0]
	}
	return slices.Contains(choices, *v)
}

// ValidateScaling is CreateNodegroup's check of a request's capacity type,
// scaling config, subnets (zones, out of the cluster's), updateConfig and
// update strategy: it checks them and fills in their defaults in *spec.
// The twin's CreateNodegroup applies it; a scenario's validation refuses
// what it refuses, before a rehearsal starts.
func ValidateScaling(spec *Spec, clusterZones []string) error {
	if !upperChoice(&spec.CapacityType, CapacityOnDemand, CapacitySpot) {
		return NewError(InvalidParameterException, OpCreateNodegroup, "capacityType %q is not ON_DEMAND or SPOT", spec.CapacityType)
	}
	if spec.Max == 0 {
		spec.Max = max(spec.Desired, 1) // maxSize has a minimum of 1 (NodegroupScalingConfig)
	}
	if spec.Min < 0 || spec.Desired < spec.Min || spec.Desired > spec.Max {
		return NewError(InvalidParameterException, OpCreateNodegroup, "scalingConfig: need 0 <= minSize (%d) <= desiredSize (%d) <= maxSize (%d)", spec.Min, spec.Desired, spec.Max)
	}
	if len(spec.Zones) == 0 {
		spec.Zones = slices.Clone(clusterZones)
	}
	for _, z := range spec.Zones {
		if !slices.Contains(clusterZones, z) {
			return NewError(InvalidParameterException, OpCreateNodegroup, "subnet zone %s is not one of the cluster's zones %v", z, clusterZones)
		}
	}
	if len(spec.Zones) == 0 {
		return NewError(InvalidParameterException, OpCreateNodegroup, "the node group has no subnets (no zones)")
	}
	if err := ValidateUpdateConfig(spec.UpdateConfig, spec.Max); err != nil {
		return err
	}
	if !upperChoice(&spec.UpdateStrategy, StrategyDefault, StrategyMinimal) {
		return NewError(InvalidParameterException, OpCreateNodegroup, "updateConfig.updateStrategy %q is not DEFAULT or MINIMAL", spec.UpdateStrategy)
	}
	return nil
}
