package mng

import (
	"maps"
	"slices"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
)

// group is one node group and its Auto Scaling group.
type group struct {
	spec   nodegroup.Spec
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
func (s *Service) newGroup(spec nodegroup.Spec, existing bool) (*group, error) {
	if spec.Name == "" {
		return nil, nodegroup.NewError(nodegroup.InvalidParameterException, nodegroup.OpCreateNodegroup, "nodegroupName is required")
	}
	if g, ok := s.groups[spec.Name]; ok && g.status != StatusDeleted {
		return nil, nodegroup.NewError(nodegroup.ResourceInUseException, nodegroup.OpCreateNodegroup, "NodeGroup already exists with name %s", spec.Name)
	}
	spec = cloneSpec(spec)
	g := &group{spec: spec, members: map[string]*member{}}
	if err := nodegroup.ValidateScaling(&g.spec, s.opts.Zones); err != nil {
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

func cloneSpec(spec nodegroup.Spec) nodegroup.Spec {
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

func (s *Service) resolveInstanceType(g *group) error {
	if len(g.spec.InstanceTypes) == 0 {
		return nodegroup.NewError(nodegroup.InvalidParameterException, nodegroup.OpCreateNodegroup, "instanceTypes: list at least one instance type")
	}
	for i, name := range g.spec.InstanceTypes {
		it, ok := s.instanceType(name)
		if !ok {
			return nodegroup.NewError(nodegroup.InvalidParameterException, nodegroup.OpCreateNodegroup, "instance type %s is not offered in this region", name)
		}
		if i == 0 {
			g.it = it
		} else if it.Arch != g.it.Arch {
			return nodegroup.NewError(nodegroup.InvalidParameterException, nodegroup.OpCreateNodegroup, "instanceTypes mix architectures (%s is %s, %s is %s)", g.it.Name, g.it.Arch, it.Name, it.Arch)
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

// resolveImage picks the group's AMI and version (nodegroup.ResolveImage).
func (s *Service) resolveImage(g *group, existing bool) error {
	img, err := nodegroup.ResolveImage(g.spec, g.it, s.opts.ControlPlaneVersion(), s.opts.ExtraAMIs, s.eng.Now(), existing)
	if err != nil {
		return err
	}
	g.ami, g.version, g.family, g.arch = img.AMI, img.Version, img.Family, img.Arch
	return nil
}
