package mng

import (
	"fmt"
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

// validateScaling checks and defaults capacity type, scaling config, zones,
// updateConfig and update strategy.
func validateScaling(spec *Spec, clusterZones []string) error {
	spec.CapacityType = strings.ToUpper(spec.CapacityType)
	switch spec.CapacityType {
	case "":
		spec.CapacityType = CapacityOnDemand
	case CapacityOnDemand, CapacitySpot:
	default:
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
	spec.UpdateStrategy = strings.ToUpper(spec.UpdateStrategy)
	switch spec.UpdateStrategy {
	case "":
		spec.UpdateStrategy = StrategyDefault
	case StrategyDefault, StrategyMinimal:
	default:
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

// resolveImage picks the group's AMI and version. A custom-AMI group runs
// its launch template's image, and its version is that image's Kubernetes
// minor. "The following fields can't be set in the API if you specify an
// AMI ID: amiType, releaseVersion, version" (§B Custom launch template /
// AMI): version and releaseVersion are refused; amiType is ignored instead,
// because the terraform-aws-eks module of the workshop seed (§6.1, group
// custom-Y) takes ami_type next to ami_id to choose the user-data format
// and does not send it to EKS for custom-AMI groups.
func (s *Service) resolveImage(g *group, existing bool) error {
	cp := s.opts.ControlPlaneVersion()
	if lt := g.spec.LaunchTemplate; lt != nil && lt.ID == "" && lt.Name == "" {
		return apiError(InvalidParameterException, opCreate, "launchTemplate: set its id or name")
	}
	if g.custom() {
		if g.spec.Version != "" || g.spec.ReleaseVersion != "" {
			return apiError(InvalidParameterException, opCreate, "version and releaseVersion can't be specified when the launch template specifies an AMI ID (%s)", g.spec.LaunchTemplate.ImageID)
		}
		a, err := s.customAMI(g.spec.LaunchTemplate.ImageID, opCreate)
		if err != nil {
			return err
		}
		if a.KubeArch() != g.it.Arch {
			return apiError(InvalidParameterException, opCreate, "AMI %s is %s but instance type %s is %s", a.ID, a.Arch, g.it.Name, g.it.Arch)
		}
		v, err := kubeversion.Parse(a.KubernetesMinor)
		if err != nil {
			return apiError(InvalidParameterException, opCreate, "AMI %s: %v", a.ID, err)
		}
		g.ami, g.version = a, v
		return nil
	}
	family, arch, ok := amiFamilyArch(g.spec.AMIType, g.it.Arch)
	if !ok {
		return apiError(InvalidParameterException, opCreate, "amiType %s is not modelled (use AL2023_*, AL2_* or BOTTLEROCKET_*)", g.spec.AMIType)
	}
	g.family, g.arch = family, arch
	v := cp
	if g.spec.Version != "" {
		var err error
		if v, err = kubeversion.Parse(g.spec.Version); err != nil {
			return apiError(InvalidParameterException, opCreate, "version: %v", err)
		}
	}
	if cp.Less(v) {
		return apiError(InvalidParameterException, opCreate, "version %s is greater than the cluster's Kubernetes version %s", v, cp)
	}
	if !existing && v != cp {
		return apiError(InvalidParameterException, opCreate, "version %s: a node group can only be created at the cluster's Kubernetes version %s", v, cp)
	}
	a, err := s.eksAMI(family, arch, v, g.spec.ReleaseVersion, opCreate)
	if err != nil {
		return err
	}
	if a.KubeArch() != g.it.Arch {
		return apiError(InvalidParameterException, opCreate, "amiType %s does not run on instance type %s (%s)", g.spec.AMIType, g.it.Name, g.it.Arch)
	}
	g.ami, g.version = a, v
	return nil
}

// amiFamilyArch maps an EKS amiType (AL2023_x86_64_STANDARD, AL2_ARM_64,
// BOTTLEROCKET_x86_64, ...) to the catalog's AMI family and architecture.
// An empty amiType is AL2023 for the instance type's architecture, as for
// new node groups since Kubernetes 1.30 (and as the rehearsal's static
// groups assume, internal/rehearse/static.go amiType).
func amiFamilyArch(amiType, instanceArch string) (family, arch string, ok bool) {
	arch = catalog.ArchX8664
	if instanceArch == "arm64" {
		arch = catalog.ArchARM64
	}
	switch {
	case amiType == "":
		return catalog.FamilyAL2023, arch, true
	case strings.HasPrefix(amiType, "AL2023_"):
		family = catalog.FamilyAL2023
	case strings.HasPrefix(amiType, "AL2_"):
		family = catalog.FamilyAL2
	case strings.HasPrefix(amiType, "BOTTLEROCKET_"):
		family = catalog.FamilyBottlerocket
	default:
		return "", "", false
	}
	if strings.Contains(amiType, "ARM_64") {
		return family, catalog.ArchARM64, true
	}
	return family, catalog.ArchX8664, true
}

// customAMI looks up a launch template's image: the scenario's own AMIs
// first, then the catalog.
func (s *Service) customAMI(id, op string) (catalog.AMI, error) {
	for _, a := range s.opts.ExtraAMIs {
		if a.ID == id {
			return a, nil
		}
	}
	if a, ok := catalog.LookupAMI(id); ok {
		return a, nil
	}
	return catalog.AMI{}, apiError(InvalidParameterException, op, "the launch template's image %s does not exist", id)
}

// eksAMI is the EKS-optimized AMI of a family, architecture and minor:
// the release asked for, or else the newest one released by now ("All node
// groups are created with the latest AMI release version for the respective
// minor Kubernetes version", CreateNodegroup API reference). Releases dated
// after the virtual clock do not exist yet.
func (s *Service) eksAMI(family, arch string, v kubeversion.Minor, release, op string) (catalog.AMI, error) {
	now := s.eng.Now()
	var latest catalog.AMI
	found := false
	for _, a := range append(slices.Clone(s.opts.ExtraAMIs), catalog.AMIs()...) {
		if a.Family != family || a.Arch != arch || a.KubernetesMinor != v.String() || a.ReleaseDate.After(now) {
			continue
		}
		if release != "" {
			if a.Release == release || releaseVersion(a) == release {
				return a, nil
			}
			continue
		}
		if !found || a.ReleaseDate.After(latest.ReleaseDate) {
			latest, found = a, true
		}
	}
	if release != "" {
		// EKS's own wording (eksctl-io/eksctl#7976).
		return catalog.AMI{}, apiError(InvalidParameterException, op, "Requested release version %s is not valid for kubernetes version %s.", release, v)
	}
	if !found {
		return catalog.AMI{}, apiError(InvalidParameterException, op, "no %s %s AMI for Kubernetes %s has been released by %s", family, arch, v, now.Format("2006-01-02"))
	}
	return latest, nil
}

// releaseVersion is an AMI's EKS release version: "1.30.14-20260220" for
// Amazon Linux (the kubelet's patch version and the release date, as in
// "Requested release version 1.31.3-20250103", eksctl-io/eksctl#7976),
// "1.20.0" for Bottlerocket. A custom AMI has none.
func releaseVersion(a catalog.AMI) string {
	if a.Family == "" || a.Release == "" {
		return ""
	}
	rel := strings.TrimPrefix(a.Release, "v")
	if a.Family == catalog.FamilyBottlerocket {
		return rel
	}
	patch, _, _ := strings.Cut(strings.TrimPrefix(a.KubeletVersion, "v"), "-")
	return fmt.Sprintf("%s-%s", patch, rel)
}
