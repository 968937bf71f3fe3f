package rehearse

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twin/worker"
)

// Labels EKS puts on managed node group nodes (semantics.md §B).
const (
	labelNodegroup      = "eks.amazonaws.com/nodegroup"
	labelNodegroupImage = "eks.amazonaws.com/nodegroup-image"
	labelCapacityType   = "eks.amazonaws.com/capacityType"
	labelSelfManaged    = "alpha.eksctl.io/nodegroup-name"
)

// createStaticNodes creates the nodes of a managed or self-managed group
// that exist at the start. These groups keep their nodes during this
// rehearsal: they host pods and count in the report, but are not upgraded.
func (r *run) createStaticNodes(gi int, g scenario.NodeGroup) error {
	var (
		desired   int
		typeName  string
		zones     []string
		labels    map[string]string
		taints    []corev1.Taint
		ami       catalog.AMI
		capacity  = "ON_DEMAND"
		age       time.Duration
		field     = fmt.Sprintf("spec.nodeGroups[%d]", gi)
		groupType = "managed"
	)
	switch g.Type {
	case scenario.Managed:
		m := g.Managed
		desired, typeName, zones, labels, taints = m.Desired, m.InstanceTypes[0], m.Zones, m.Labels, m.Taints
		age = m.Age.Get(0)
		if m.CapacityType != "" {
			capacity = m.CapacityType
		}
		var err error
		if ami, err = r.managedAMI(m); err != nil {
			return fmt.Errorf("%s: %s.managed: %v", r.sc.Path, field, err)
		}
	case scenario.SelfManaged:
		s := g.SelfManaged
		groupType = "self-managed"
		desired, typeName, zones, labels, taints = s.Desired, s.InstanceType, s.Zones, s.Labels, s.Taints
		age = s.Age.Get(0)
		var ok bool
		if ami, ok = r.lookupAMI(s.LaunchTemplate.ImageID); !ok {
			return fmt.Errorf("%s: %s.selfManaged.launchTemplate.imageId: AMI %s not found", r.sc.Path, field, s.LaunchTemplate.ImageID)
		}
	}
	if len(zones) == 0 {
		zones = r.sc.Spec.Cluster.Zones
	}
	var it catalog.InstanceType
	for _, t := range r.sc.InstanceTypes() {
		if t.Name == typeName {
			it = t
		}
	}
	created := r.eng.Now().Add(-age)
	for i := 0; i < desired; i++ {
		l := map[string]string{}
		if groupType == "managed" {
			l[labelNodegroup] = g.Name
			l[labelNodegroupImage] = ami.ID
			l[labelCapacityType] = strings.ToUpper(capacity)
		} else {
			l[labelSelfManaged] = g.Name
		}
		for k, v := range labels {
			l[k] = v
		}
		node, err := r.workers.Existing(worker.Spec{Zone: zones[i%len(zones)], InstanceType: it, AMI: ami, Labels: l, Taints: taints}, created)
		if err != nil {
			return err
		}
		r.static[node.Name] = g.Name
	}
	return nil
}

// managedAMI is the image a managed group's nodes run: the launch
// template's image for a custom-AMI group, else the newest EKS-optimized
// AMI of the group's AMI type and version.
func (r *run) managedAMI(m *scenario.ManagedGroup) (catalog.AMI, error) {
	if m.LaunchTemplate != nil && m.LaunchTemplate.ImageID != "" {
		a, ok := r.lookupAMI(m.LaunchTemplate.ImageID)
		if !ok {
			return catalog.AMI{}, fmt.Errorf("launchTemplate.imageId: AMI %s not found", m.LaunchTemplate.ImageID)
		}
		return a, nil
	}
	version := m.Version
	if version == "" {
		version = r.sc.Spec.Cluster.Version
	}
	family, arch := amiType(m.AMIType)
	return catalog.ResolveAlias(family+"@latest", version, arch, r.eng.Now())
}

// amiType maps an EKS amiType (AL2023_x86_64_STANDARD, AL2_ARM_64,
// BOTTLEROCKET_x86_64, ...) to an AMI family and architecture.
func amiType(t string) (family, arch string) {
	family, arch = catalog.FamilyAL2023, catalog.ArchX8664
	switch {
	case strings.HasPrefix(t, "AL2023"):
	case strings.HasPrefix(t, "AL2"):
		family = catalog.FamilyAL2
	case strings.HasPrefix(t, "BOTTLEROCKET"):
		family = catalog.FamilyBottlerocket
	}
	if strings.Contains(t, "ARM") {
		arch = catalog.ArchARM64
	}
	return family, arch
}

func (r *run) lookupAMI(id string) (catalog.AMI, bool) {
	for _, a := range r.sc.ExtraAMIs() {
		if a.ID == id {
			return a, true
		}
	}
	return catalog.LookupAMI(id)
}
