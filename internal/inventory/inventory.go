// Package inventory answers the first question of an EKS upgrade — which
// node groups does this cluster have, and what does each carry? — the
// workshop's "inventory first" (seed eks-upgrade-workshop §8.3: "kubectl get
// node -L eks.amazonaws.com/nodegroup,karpenter.sh/nodepool") as one report.
//
// Build is a pure function of nodes and pods: it reads only what a real
// cluster shows — the labels EKS, Karpenter, eksctl and Fargate put on
// nodes, status.nodeInfo, the kube-proxy pods' images — so the same code
// inventories a live cluster (FromCluster), the lab, and a scenario's
// starting cluster as the twin builds it (FromSnapshot).
package inventory

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// Type is a kind of node group, each upgraded by its own mechanism.
type Type string

// Node group types, in the order the report lists them.
const (
	// Managed is an EKS managed node group on the AMI EKS chooses
	// (UpdateNodegroupVersion rolls it).
	Managed Type = "managed"
	// CustomAMI is an EKS managed node group on its own launch template: its
	// AMI moves only with a new template version.
	CustomAMI Type = "managed-custom-ami"
	// SelfManaged is EC2 nodes of an Auto Scaling group outside EKS.
	SelfManaged Type = "self-managed"
	// Karpenter is the nodes of one Karpenter NodePool.
	Karpenter Type = "karpenter"
	// Fargate is the pods of one Fargate profile, a micro-VM node each.
	Fargate Type = "fargate"
)

var typeRank = map[Type]int{Managed: 0, CustomAMI: 1, SelfManaged: 2, Karpenter: 3, Fargate: 4}

// The node labels a group is recognised by. They are put on the node by
// whoever launched it: EKS's bootstrap for managed groups (semantics.md §B),
// Karpenter, the Fargate scheduler, eksctl for self-managed groups.
const (
	LabelNodegroup          = "eks.amazonaws.com/nodegroup"
	LabelNodegroupImage     = "eks.amazonaws.com/nodegroup-image"
	LabelMNGCapacityType    = "eks.amazonaws.com/capacityType"
	LabelLaunchTemplateID   = "eks.amazonaws.com/sourceLaunchTemplateId"
	LabelLaunchTemplateVers = "eks.amazonaws.com/sourceLaunchTemplateVersion"
	LabelComputeType        = "eks.amazonaws.com/compute-type"
	LabelFargateProfile     = "eks.amazonaws.com/fargate-profile"
	LabelNodePool           = "karpenter.sh/nodepool"
	LabelCapacityType       = "karpenter.sh/capacity-type"
	LabelEksctlNodegroup    = "alpha.eksctl.io/nodegroup-name"
)

// ImageAnnotation is where the twin and the lab record the AMI a node
// booted (internal/twin/worker.ImageIDAnnotation). A real node has its AMI
// only in its EC2 instance; this annotation stands in for DescribeInstances
// where no label says it (self-managed nodes).
const ImageAnnotation = "ladder.dev/image-id"

// unlabelled names the group of EC2 nodes no group label claims.
const unlabelled = "(no group label)"

// Input is what an inventory is built from.
type Input struct {
	Nodes []*corev1.Node
	Pods  []Pod
	// Images maps a node name to the AMI it runs when its labels do not
	// say (a Karpenter NodeClaim's status.imageID).
	Images map[string]string
}

// Pod is a pod and the workload that owns it.
type Pod struct {
	Pod      *corev1.Pod
	Workload Workload
}

// Workload names the object that owns pods: a Deployment (not its
// ReplicaSet), StatefulSet, DaemonSet, Job, CronJob — or the pod itself.
type Workload struct {
	Namespace string `json:"namespace"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
}

// Inventory is the report.
type Inventory struct {
	Source Source  `json:"source"`
	Groups []Group `json:"groups"`
	// Unscheduled are workloads with pods bound to no node (Pending).
	Unscheduled []WorkloadPods `json:"unscheduled"`
}

// Source says what was inventoried.
type Source struct {
	// Kind is "cluster" (a kubeconfig context) or "scenario" (the twin's
	// starting cluster of a scenario).
	Kind string `json:"kind"`
	// Name is the context name or the scenario's name.
	Name string `json:"name"`
	// Server is the API server's URL (clusters only).
	Server string `json:"server,omitempty"`
	// Cluster is the EKS cluster's name, when known (scenarios, and
	// clusters whose version EKS reported).
	Cluster string `json:"cluster,omitempty"`
	// ControlPlane is the control plane's minor and ControlPlaneSource
	// where it came from ("EKS DescribeCluster"), for a cluster whose EKS
	// endpoint was asked; empty otherwise.
	ControlPlane       string `json:"controlPlane,omitempty"`
	ControlPlaneSource string `json:"controlPlaneSource,omitempty"`
}

// Group is one node group and what it carries.
type Group struct {
	Name string `json:"name"`
	Type Type   `json:"type"`
	// Selector lists the group's nodes: kubectl get nodes -l SELECTOR.
	Selector   string   `json:"selector"`
	Nodes      int      `json:"nodes"`
	ReadyNodes int      `json:"readyNodes"`
	NodeNames  []string `json:"nodeNames"`
	// The maps count nodes by value; a node without the value is not counted.
	Zones         map[string]int `json:"zones"`
	InstanceTypes map[string]int `json:"instanceTypes"`
	// CapacityTypes are "on-demand" or "spot" (Karpenter's spelling).
	CapacityTypes     map[string]int `json:"capacityTypes"`
	KubeletVersions   map[string]int `json:"kubeletVersions"`
	KubeProxyVersions map[string]int `json:"kubeProxyVersions"`
	AMIs              map[string]int `json:"amis"`
	// AMINames are the names of the AMIs Ladder's embedded EKS-optimized
	// catalog knows.
	AMINames map[string]string `json:"amiNames,omitempty"`
	// LaunchTemplates count nodes by "lt-id:version" (managed groups).
	LaunchTemplates map[string]int `json:"launchTemplates,omitempty"`
	Workloads       []WorkloadPods `json:"workloads"`
}

// WorkloadPods is a workload and how many of its pods are in one place.
type WorkloadPods struct {
	Workload
	Pods int `json:"pods"`
}

// groupKey identifies a group while building: a managed group and a
// NodePool may share a name.
type groupKey struct {
	family string
	name   string
}

// Build groups nodes into node groups and counts what each carries.
func Build(src Source, in Input) *Inventory {
	inv := &Inventory{Source: src, Groups: []Group{}, Unscheduled: []WorkloadPods{}}
	groups := map[groupKey]*Group{}
	nodeGroup := map[string]*Group{}
	for _, n := range in.Nodes {
		key, typ, selector := classify(n)
		g, ok := groups[key]
		if !ok {
			g = &Group{Name: key.name, Type: typ, Selector: selector, NodeNames: []string{},
				Zones: map[string]int{}, InstanceTypes: map[string]int{}, CapacityTypes: map[string]int{},
				KubeletVersions: map[string]int{}, KubeProxyVersions: map[string]int{}, AMIs: map[string]int{},
				Workloads: []WorkloadPods{}}
			groups[key] = g
		}
		// A managed group on its own launch template on any node is one.
		if typ == CustomAMI {
			g.Type = CustomAMI
		}
		nodeGroup[n.Name] = g
		addNode(g, n, in.Images[n.Name])
	}

	kubeProxy := map[string]string{} // node → kube-proxy image tag
	workloads := map[*Group]map[Workload]int{}
	unscheduled := map[Workload]int{}
	for _, p := range in.Pods {
		if p.Pod.DeletionTimestamp != nil || p.Pod.Status.Phase == corev1.PodSucceeded || p.Pod.Status.Phase == corev1.PodFailed {
			continue
		}
		g := nodeGroup[p.Pod.Spec.NodeName]
		if g == nil {
			unscheduled[p.Workload]++
			continue
		}
		if workloads[g] == nil {
			workloads[g] = map[Workload]int{}
		}
		workloads[g][p.Workload]++
		if v := kubeProxyVersion(p.Pod); v != "" {
			kubeProxy[p.Pod.Spec.NodeName] = v
		}
	}
	for _, n := range in.Nodes {
		g := nodeGroup[n.Name]
		v := kubeProxy[n.Name]
		if v == "" {
			// Fargate runs kube-proxy inside the micro-VM: only the node
			// says its version (the field is deprecated, still reported).
			//lint:ignore SA1019 the only source where no kube-proxy pod runs
			v = n.Status.NodeInfo.KubeProxyVersion
		}
		count(g.KubeProxyVersions, v)
	}

	for _, g := range groups {
		g.Workloads = sortedWorkloads(workloads[g])
		sort.Strings(g.NodeNames)
		inv.Groups = append(inv.Groups, *g)
	}
	sort.Slice(inv.Groups, func(i, j int) bool {
		a, b := inv.Groups[i], inv.Groups[j]
		if typeRank[a.Type] != typeRank[b.Type] {
			return typeRank[a.Type] < typeRank[b.Type]
		}
		return a.Name < b.Name
	})
	inv.Unscheduled = sortedWorkloads(unscheduled)
	return inv
}

// classify says which group a node belongs to, from the labels whoever
// launched it put on it. The order matters: eksctl also labels its managed
// groups' nodes with alpha.eksctl.io/nodegroup-name, and EKS Auto Mode's
// nodes carry a NodePool.
func classify(n *corev1.Node) (groupKey, Type, string) {
	l := n.Labels
	switch {
	case l[LabelComputeType] == "fargate":
		name := l[LabelFargateProfile]
		if name == "" {
			return groupKey{"fargate", "fargate"}, Fargate, LabelComputeType + "=fargate"
		}
		return groupKey{"fargate", name}, Fargate, LabelFargateProfile + "=" + name
	case l[LabelNodePool] != "":
		return groupKey{"karpenter", l[LabelNodePool]}, Karpenter, LabelNodePool + "=" + l[LabelNodePool]
	case l[LabelNodegroup] != "":
		typ := Managed
		// From the cluster alone, an AMI pinned in the group's launch
		// template cannot be told from one EKS picks for a template without
		// an image: a group on its own template is reported custom-AMI, the
		// safe side (its AMI may need a template bump by hand).
		if l[LabelLaunchTemplateID] != "" {
			typ = CustomAMI
		}
		return groupKey{"managed", l[LabelNodegroup]}, typ, LabelNodegroup + "=" + l[LabelNodegroup]
	case l[LabelEksctlNodegroup] != "":
		return groupKey{"self-managed", l[LabelEksctlNodegroup]}, SelfManaged, LabelEksctlNodegroup + "=" + l[LabelEksctlNodegroup]
	}
	return groupKey{"self-managed", unlabelled}, SelfManaged,
		"!" + LabelNodegroup + ",!" + LabelNodePool + ",!" + LabelComputeType + ",!" + LabelEksctlNodegroup
}

func addNode(g *Group, n *corev1.Node, image string) {
	l := n.Labels
	g.Nodes++
	g.NodeNames = append(g.NodeNames, n.Name)
	if kube.IsNodeReady(n) {
		g.ReadyNodes++
	}
	zone := l[corev1.LabelTopologyZone]
	if zone == "" {
		zone = l[corev1.LabelFailureDomainBetaZone]
	}
	count(g.Zones, zone)
	count(g.InstanceTypes, l[corev1.LabelInstanceTypeStable])
	count(g.CapacityTypes, capacityType(l))
	count(g.KubeletVersions, n.Status.NodeInfo.KubeletVersion)
	ami := l[LabelNodegroupImage]
	if ami == "" {
		ami = image
	}
	if ami == "" {
		ami = n.Annotations[ImageAnnotation]
	}
	count(g.AMIs, ami)
	if a, ok := catalog.LookupAMI(ami); ok {
		if g.AMINames == nil {
			g.AMINames = map[string]string{}
		}
		g.AMINames[ami] = a.Name
	}
	if lt := l[LabelLaunchTemplateID]; lt != "" {
		if g.LaunchTemplates == nil {
			g.LaunchTemplates = map[string]int{}
		}
		g.LaunchTemplates[lt+":"+l[LabelLaunchTemplateVers]]++
	}
}

func count(m map[string]int, v string) {
	if v != "" {
		m[v]++
	}
}

// capacityType reads Karpenter's label, or EKS's for managed groups, in
// Karpenter's spelling.
func capacityType(l map[string]string) string {
	if ct := l[LabelCapacityType]; ct != "" {
		return ct
	}
	switch l[LabelMNGCapacityType] {
	case "ON_DEMAND":
		return "on-demand"
	case "SPOT":
		return "spot"
	case "CAPACITY_BLOCK":
		return "capacity-block"
	}
	return ""
}

// kubeProxyVersion is the tag of a kube-proxy pod's image
// (…/eks/kube-proxy:v1.30.14-minimal-eksbuild.28), the add-on build that
// runs on its node; "" for any other pod.
func kubeProxyVersion(p *corev1.Pod) string {
	if p.Namespace != "kube-system" {
		return ""
	}
	for _, c := range p.Spec.Containers {
		if c.Name != "kube-proxy" {
			continue
		}
		image := c.Image
		if i := strings.LastIndex(image, "@"); i >= 0 {
			image = image[:i]
		}
		if i := strings.LastIndex(image, ":"); i >= 0 && !strings.Contains(image[i:], "/") {
			return image[i+1:]
		}
	}
	return ""
}

func sortedWorkloads(m map[Workload]int) []WorkloadPods {
	out := make([]WorkloadPods, 0, len(m))
	for w, n := range m {
		out = append(out, WorkloadPods{Workload: w, Pods: n})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Name < b.Name
	})
	return out
}
