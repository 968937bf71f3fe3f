package mng

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
)

// Spec is a node group's configuration: the fields of CreateNodegroup that
// the twin models, mirroring scenario.ManagedGroup.
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

// LaunchTemplate names a launch template version and the AMI it specifies
// (nodegroup.LaunchTemplate).
type LaunchTemplate = nodegroup.LaunchTemplate

// UpdateConfig is NodegroupUpdateConfig (nodegroup.UpdateConfig).
type UpdateConfig = nodegroup.UpdateConfig

// Capacity types and update strategies.
const (
	CapacityOnDemand = "ON_DEMAND"
	CapacitySpot     = "SPOT"
	StrategyDefault  = "DEFAULT"
	StrategyMinimal  = "MINIMAL"
)

// group is one node group and its Auto Scaling group.
type group struct {
	spec   Spec
	status string
	// sorted is members by name, nil after a change (sortedMembers).
	sorted []*member
	// view is instances' buffer.
	view []nodegroup.Instance
	// version and ami are what DescribeNodegroup reports: they change when
	// an update succeeds.
	version kubeversion.Minor
	ami     catalog.AMI
	family  string // AMI family and architecture of an EKS-AMI group
	arch    string
	it      catalog.InstanceType
	// lt is the launch template version the Auto Scaling group launches
	// now; ltSeq numbers EKS's versions of it.
	lt    ltVersion
	ltSeq int
	// desired and max are the Auto Scaling group's current sizes; spec
	// holds the scaling config an update returns them to.
	desired, max int
	members      map[string]*member
	update       *update
	updates      []*Update
	health       []Failure
	// created runs when a group being created turns ACTIVE or fails;
	// deleted when a deletion finishes.
	created func(error)
	deleted func()
}

// ltVersion is one version of the launch template the group's Auto Scaling
// group uses. EKS creates a new one for every update (§B setup phase step
// 1: "creates a new Amazon EC2 launch template version ... uses the target
// AMI or a custom launch template version"); a node is "old" when it was
// launched from an earlier one (§B upgrade phase step 6).
type ltVersion struct {
	number int
	ami    catalog.AMI
	// source is the user's launch template version ("" without one).
	source string
}

func (g *group) custom() bool {
	return g.spec.LaunchTemplate != nil && g.spec.LaunchTemplate.ImageID != ""
}

// newGroup validates a CreateNodegroup request and resolves its AMI. For a
// group created during the rehearsal (existing false) the version must be
// the control plane's: "You can only create a node group for your cluster
// that is equal to the current Kubernetes version for the cluster"
// (CreateNodegroup API reference). A group that already exists at the
// start may trail the control plane, as clusters do after a control-plane
// upgrade, but never lead it (§B).
func (s *Service) newGroup(spec Spec, existing bool) (*group, error) {
	if spec.Name == "" {
		return nil, apiError(InvalidParameterException, opCreate, "nodegroupName is required")
	}
	if g, ok := s.groups[spec.Name]; ok && g.status != StatusDeleted {
		return nil, apiError(ResourceInUseException, opCreate, "NodeGroup already exists with name %s", spec.Name)
	}
	spec = cloneSpec(spec)
	g := &group{spec: spec, members: map[string]*member{}}
	if err := validateScaling(&g.spec, s.opts.Zones); err != nil {
		return nil, err
	}
	if err := s.resolveInstanceType(g); err != nil {
		return nil, err
	}
	if err := s.resolveImage(g, existing); err != nil {
		return nil, err
	}
	g.ltSeq = 1
	g.lt = ltVersion{number: 1, ami: g.ami}
	if lt := g.spec.LaunchTemplate; lt != nil {
		g.lt.source = lt.Version
	}
	g.desired, g.max = g.spec.Desired, g.spec.Max
	return g, nil
}

func cloneSpec(spec Spec) Spec {
	spec.InstanceTypes = slices.Clone(spec.InstanceTypes)
	spec.Zones = slices.Clone(spec.Zones)
	spec.Labels = maps.Clone(spec.Labels)
	spec.Taints = slices.Clone(spec.Taints)
	if spec.LaunchTemplate != nil {
		lt := *spec.LaunchTemplate
		spec.LaunchTemplate = &lt
	}
	return spec
}

// ValidateScaling is CreateNodegroup's check of a request's capacity type,
// scaling config, subnets (zones, out of the cluster's), updateConfig and
// update strategy, with no Service: a scenario's validation refuses what
// the twin's CreateNodegroup would, before a rehearsal starts.
func ValidateScaling(spec Spec, clusterZones []string) error {
	return validateScaling(&spec, clusterZones)
}

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

// validateScaling checks and defaults capacity type, scaling config, zones,
// updateConfig and update strategy.
func validateScaling(spec *Spec, clusterZones []string) error {
	if !upperChoice(&spec.CapacityType, CapacityOnDemand, CapacitySpot) {
		return apiError(InvalidParameterException, opCreate, "capacityType %q is not ON_DEMAND or SPOT", spec.CapacityType)
	}
	if spec.Max == 0 {
		spec.Max = max(spec.Desired, 1) // maxSize has a minimum of 1 (NodegroupScalingConfig)
	}
	if spec.Min < 0 || spec.Desired < spec.Min || spec.Desired > spec.Max {
		return apiError(InvalidParameterException, opCreate, "scalingConfig: need 0 <= minSize (%d) <= desiredSize (%d) <= maxSize (%d)", spec.Min, spec.Desired, spec.Max)
	}
	if len(spec.Zones) == 0 {
		spec.Zones = slices.Clone(clusterZones)
	}
	for _, z := range spec.Zones {
		if !slices.Contains(clusterZones, z) {
			return apiError(InvalidParameterException, opCreate, "subnet zone %s is not one of the cluster's zones %v", z, clusterZones)
		}
	}
	if len(spec.Zones) == 0 {
		return apiError(InvalidParameterException, opCreate, "the node group has no subnets (no zones)")
	}
	if err := nodegroup.ValidateUpdateConfig(spec.UpdateConfig, spec.Max); err != nil {
		return err
	}
	if !upperChoice(&spec.UpdateStrategy, StrategyDefault, StrategyMinimal) {
		return apiError(InvalidParameterException, opCreate, "updateConfig.updateStrategy %q is not DEFAULT or MINIMAL", spec.UpdateStrategy)
	}
	return nil
}

func (s *Service) resolveInstanceType(g *group) error {
	if len(g.spec.InstanceTypes) == 0 {
		return apiError(InvalidParameterException, opCreate, "instanceTypes: list at least one instance type")
	}
	for i, name := range g.spec.InstanceTypes {
		it, ok := s.instanceType(name)
		if !ok {
			return apiError(InvalidParameterException, opCreate, "instance type %s is not offered in this region", name)
		}
		if i == 0 {
			g.it = it
		} else if it.Arch != g.it.Arch {
			return apiError(InvalidParameterException, opCreate, "instanceTypes mix architectures (%s is %s, %s is %s)", g.it.Name, g.it.Arch, it.Name, it.Arch)
		}
	}
	return nil
}

func (s *Service) instanceType(name string) (catalog.InstanceType, bool) {
	for _, it := range s.opts.InstanceTypes {
		if it.Name == name {
			return it, true
		}
	}
	return catalog.InstanceType{}, false
}

// resolveImage picks the group's AMI and version (ResolveImage).
func (s *Service) resolveImage(g *group, existing bool) error {
	img, err := ResolveImage(g.spec, g.it, s.opts.ControlPlaneVersion(), s.opts.ExtraAMIs, s.eng.Now(), existing)
	if err != nil {
		return err
	}
	g.ami, g.version, g.family, g.arch = img.AMI, img.Version, img.Family, img.Arch
	return nil
}

// customAMI looks up a launch template's image (customAMI).
func (s *Service) customAMI(id, op string) (catalog.AMI, error) {
	return customAMI(s.opts.ExtraAMIs, id, op)
}

// eksAMI is the EKS-optimized AMI of a family, architecture and minor
// released by now (eksAMI).
func (s *Service) eksAMI(family, arch string, v kubeversion.Minor, release, op string) (catalog.AMI, error) {
	return eksAMI(s.opts.ExtraAMIs, family, arch, v, release, s.eng.Now(), op)
}
