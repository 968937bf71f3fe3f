package insights

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/drainpredict"
	"github.com/ladder-eks/ladder/internal/inventory"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// ScenarioCluster builds the cluster facts of a validated scenario's
// starting cluster as the twins build it (twinbuild.Start, read by
// internal/inventory's rules, as `ladder inventory --scenario` reports it),
// completed from the scenario's spec where only the cloud knows (a group's
// amiType, launch template, subnets, blue/green replacement, the add-ons)
// and with each EC2 node's drain predicted in the twin
// (drainpredict.Scenario). A live cluster fills the same facts from the
// Kubernetes API (internal/insights/live), the EKS and EC2 ones later.
func ScenarioCluster(sc *scenario.Scenario) (*Cluster, error) {
	snap, err := twinbuild.Start(sc)
	if err != nil {
		return nil, err
	}
	version, err := kubeversion.Parse(sc.Spec.Cluster.Version)
	if err != nil {
		return nil, fmt.Errorf("spec.cluster.version: %w", err)
	}
	c := &Cluster{
		Name: sc.Spec.Cluster.Name, Version: version, Region: sc.Spec.Cluster.Region,
		Zones: slices.Sorted(slices.Values(sc.Spec.Cluster.Zones)), Source: "scenario " + sc.Metadata.Name,
	}
	inv := inventory.FromSnapshot(sc.Metadata.Name, snap)

	// Nodes, with the kube-proxy build of the pod on each.
	proxies := map[string]string{}
	for _, p := range snap.Pods {
		if v := KubeProxyTag(p.Pod); v != "" && p.Pod.Spec.NodeName != "" {
			proxies[p.Pod.Spec.NodeName] = v
		}
	}
	for _, n := range snap.Nodes {
		proxy := proxies[n.Name]
		if proxy == "" {
			//lint:ignore SA1019 where no kube-proxy pod runs (Fargate) only the node says it
			proxy = n.Status.NodeInfo.KubeProxyVersion
		}
		c.Nodes = append(c.Nodes, Node{
			Name: n.Name, KubeletVersion: n.Status.NodeInfo.KubeletVersion, KubeProxyVersion: proxy,
			Group: snap.Groups[n.Name].Name, Zone: n.Labels[corev1.LabelTopologyZone], Labels: n.Labels,
		})
	}

	// Node groups: the inventory's reading of the nodes, the spec's
	// configuration.
	invGroups := map[string]inventory.Group{}
	for _, g := range inv.Groups {
		invGroups[g.Name] = g
	}
	declared := map[string]bool{}
	for _, sg := range sc.Spec.NodeGroups {
		declared[sg.Name] = true
		c.NodeGroups = append(c.NodeGroups, scenarioGroup(sc, sg, invGroups[groupKey(sg)], version))
	}
	for _, g := range inv.Groups { // nodes of no declared group (none in a valid scenario)
		if !declared[g.Name] {
			c.NodeGroups = append(c.NodeGroups, NodeGroup{Name: g.Name, Type: GroupType(g.Type), Zones: sortedKeys(g.Zones),
				AMIs: sortedKeys(g.AMIs), KubeletVersions: sortedKeys(g.KubeletVersions), Nodes: g.NodeNames})
		}
	}
	sort.Slice(c.NodeGroups, func(i, j int) bool { return c.NodeGroups[i].Name < c.NodeGroups[j].Name })

	for _, a := range sc.Spec.Addons {
		c.Addons = append(c.Addons, Addon{Name: a.Name, Version: a.Version})
	}
	sort.Slice(c.Addons, func(i, j int) bool { return c.Addons[i].Name < c.Addons[j].Name })

	c.Volumes = scenarioVolumes(snap)

	drains, err := drainpredict.Scenario(sc)
	if err != nil {
		return nil, fmt.Errorf("drain prediction: %w", err)
	}
	c.DrainsPredicted = true
	for _, d := range drains {
		nd := NodeDrain{Node: d.Node, Group: d.Group.Name, Zone: d.Zone, Limit: d.Limit, Duration: d.Duration,
			Finished: d.Finished, Error: d.Error, Evicted: d.Evicted}
		if g := c.Group(d.Group.Name); g != nil {
			nd.GroupType = g.Type
		} else {
			nd.GroupType = GroupType(d.Group.Type)
		}
		for _, b := range d.Blocks {
			nd.Blocks = append(nd.Blocks, DrainBlock{Pod: b.Pod, Workload: workloadText(b.Workload), PDB: b.PDB, For: b.For, Outcome: b.Outcome, Message: b.Message})
		}
		for _, p := range d.Pending {
			nd.Pending = append(nd.Pending, PendingPod{Pod: p.Pod, Workload: workloadText(p.Workload), Reason: p.Reason, VolumeZones: p.VolumeZones})
		}
		c.Drains = append(c.Drains, nd)
	}
	return c, nil
}

// groupKey is the name the inventory gives a scenario group's nodes: a
// Karpenter group's are its NodePool's.
func groupKey(g scenario.NodeGroup) string {
	if g.Type == scenario.Karpenter && g.Karpenter != nil {
		return g.Karpenter.NodePool
	}
	return g.Name
}

func scenarioGroup(sc *scenario.Scenario, sg scenario.NodeGroup, ig inventory.Group, cluster kubeversion.Minor) NodeGroup {
	g := NodeGroup{Name: sg.Name, Type: GroupType(ig.Type), AMIs: sortedKeys(ig.AMIs),
		KubeletVersions: sortedKeys(ig.KubeletVersions), Nodes: slices.Clone(ig.NodeNames)}
	zones := sc.Spec.Cluster.Zones
	switch sg.Type {
	case scenario.Managed:
		m := sg.Managed
		g.Type = GroupManaged
		g.AMIType = m.AMIType
		if g.AMIType == "" {
			g.AMIType = "AL2023_x86_64_STANDARD" // the default for x86 instance types
		}
		if len(m.Zones) > 0 {
			zones = m.Zones
		}
		if lt := m.LaunchTemplate; lt != nil {
			g.LaunchTemplate = lt.Name + ":" + lt.Version
			if lt.ImageID != "" {
				g.CustomAMI, g.Type, g.AMIType = true, GroupCustomAMI, "CUSTOM"
			}
		}
		g.Version = cluster
		if v, err := kubeversion.Parse(m.Version); err == nil {
			g.Version = v
		}
		if g.CustomAMI {
			if a, ok := lookupAMI(sc, m.LaunchTemplate.ImageID); ok {
				if v, err := kubeversion.Parse(a.KubernetesMinor); err == nil {
					g.Version = v
				}
			}
		}
		if u := sg.Upgrade; u != nil {
			g.Force = u.Force
			if sg.StrategyOf() == scenario.BlueGreen {
				rep := &Replacement{Name: sg.Name + "-green", Zones: zones}
				if u.Green != nil {
					if u.Green.Name != "" {
						rep.Name = u.Green.Name
					}
					if len(u.Green.Zones) > 0 {
						rep.Zones = u.Green.Zones
					}
				}
				rep.Zones = slices.Sorted(slices.Values(rep.Zones))
				g.Replacement = rep
			}
		}
	case scenario.SelfManaged:
		s := sg.SelfManaged
		g.Type = GroupSelfManaged
		if len(s.Zones) > 0 {
			zones = s.Zones
		}
		g.LaunchTemplate = s.LaunchTemplate.Name + ":" + s.LaunchTemplate.Version
		g.CustomAMI = s.LaunchTemplate.ImageID != ""
	case scenario.Karpenter:
		g.Type = GroupKarpenter
		if z := nodePoolZones(sc, sg.Karpenter.NodePool); len(z) > 0 {
			zones = z
		}
	case scenario.Fargate:
		g.Type = GroupFargate
	}
	g.Zones = slices.Sorted(slices.Values(zones))
	g.AMIFamily = amiFamily(sc, g)
	return g
}

// amiFamily is the group's OS: its amiType for a managed group EKS picks
// the AMI of, else the catalogued family of the AMIs its nodes run.
func amiFamily(sc *scenario.Scenario, g NodeGroup) string {
	switch t := g.AMIType; {
	case strings.HasPrefix(t, "AL2023_"):
		return catalog.FamilyAL2023
	case strings.HasPrefix(t, "AL2_"):
		return catalog.FamilyAL2
	case strings.HasPrefix(t, "BOTTLEROCKET_"):
		return catalog.FamilyBottlerocket
	}
	family := ""
	for _, id := range g.AMIs {
		a, ok := lookupAMI(sc, id)
		if !ok || a.Family == "" {
			continue
		}
		if family == "" || a.Family == catalog.FamilyAL2 {
			family = a.Family // one AL2 node is enough to need the move
		}
	}
	return family
}

// lookupAMI finds an image in the scenario's declared AMIs or the catalog.
func lookupAMI(sc *scenario.Scenario, id string) (catalog.AMI, bool) {
	for _, a := range sc.Spec.AMIs {
		if a.ID == id {
			return catalog.AMI{ID: a.ID, Name: a.Name, Family: strings.ToLower(a.Family), KubernetesMinor: a.KubernetesVersion, KubeletVersion: a.KubeletVersion}, true
		}
	}
	return catalog.LookupAMI(id)
}

// nodePoolZones are the zones a NodePool's requirements allow (In), or nil.
func nodePoolZones(sc *scenario.Scenario, name string) []string {
	for _, o := range sc.Objects {
		np, ok := o.Object.(*karpv1.NodePool)
		if !ok || np.Name != name {
			continue
		}
		for _, r := range np.Spec.Template.Spec.Requirements {
			if r.Key == corev1.LabelTopologyZone && r.Operator == corev1.NodeSelectorOpIn {
				return r.Values
			}
		}
	}
	return nil
}

// scenarioVolumes are the bound claims with a zone, and who uses them.
func scenarioVolumes(snap *twinbuild.Snapshot) []Volume {
	var out []Volume
	for _, v := range snap.Volumes {
		if v.Zone == "" || v.Claim.Spec.VolumeName == "" {
			continue
		}
		var users []VolumeUser
		for _, p := range snap.Pods {
			if p.Pod.Namespace != v.Claim.Namespace || !UsesClaim(p.Pod, v.Claim.Name) {
				continue
			}
			users = append(users, VolumeUser{Pod: p.Pod.Namespace + "/" + p.Pod.Name, Node: p.Pod.Spec.NodeName, Workload: workloadText(p.Workload)})
		}
		out = append(out, NewVolume(v.Claim.Namespace, v.Claim.Name, v.Zone, v.Claim.Spec.StorageClassName, users))
	}
	SortVolumes(out)
	return out
}

func workloadText(w scenario.WorkloadRef) string {
	if w.Kind == "" {
		return ""
	}
	return w.Kind + " " + w.Namespace + "/" + w.Name
}

// KubeProxyTag is the tag of a kube-system kube-proxy container's image
// (…/eks/kube-proxy:v1.30.14-minimal-eksbuild.28), as internal/inventory
// reads it; "" for any other pod. A scenario's pods and a live cluster's
// are read with it alike.
func KubeProxyTag(p *corev1.Pod) string {
	if p.Namespace != "kube-system" {
		return ""
	}
	for _, c := range p.Spec.Containers {
		if c.Name != "kube-proxy" {
			continue
		}
		image, _, _ := strings.Cut(c.Image, "@")
		if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
			return image[i+1:]
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
