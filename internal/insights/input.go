package insights

import (
	"sync"
	"time"

	"github.com/ladder-eks/ladder/internal/insights/deprecations"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// Input is everything the checks read: the objects the sources decoded,
// the documents that could not be read, the versions, and — from a live
// cluster or a scenario — facts about the cluster.
type Input struct {
	// Target is the Kubernetes minor the upgrade goes to.
	Target kubeversion.Minor
	// Current is the control plane's minor now; zero when only manifests
	// were given (then the report covers the single hop to Target).
	Current kubeversion.Minor
	// CurrentSource says where Current came from when neither the
	// scenario nor the API server's /version gave it — "EKS DescribeCluster
	// of cluster C" — so that the report can say so; empty otherwise.
	CurrentSource string
	// Now is the instant budgets and support windows are evaluated at.
	Now time.Time
	// Objects are the decoded objects, in source order.
	Objects []*Object
	// Problems are documents, or fields, that could not be read; the
	// invalid-manifest check reports them.
	Problems []Problem
	// Cluster holds facts only a live cluster or a scenario gives; nil
	// when the input is manifests only.
	Cluster *Cluster
	// APIs is the API table the API checks use: nil for the shipped one,
	// or the shipped one with --additional-versions over it.
	APIs *deprecations.Table

	once      sync.Once
	byKind    map[string][]*Object
	workOnce  sync.Once
	workloads []*Workload
	pdbList   []*PDB
}

// Cluster is what Ladder knows about the cluster beyond its objects. The
// live and scenario sources fill it; checks that need it declare
// NeedsCluster. Slices are sorted (nodes and groups by name) so checks
// report in a stable order.
type Cluster struct {
	// Name is the EKS cluster's name.
	Name string
	// Version is the control plane's minor (also Input.Current).
	Version kubeversion.Minor
	// Region is the AWS region, e.g. us-west-2; Zones the cluster's
	// availability zones.
	Region string
	Zones  []string
	// Source says where the facts come from, e.g. "scenario workshop";
	// findings about cluster facts name it as their source.
	Source string
	// Nodes are the cluster's nodes.
	Nodes []Node
	// NodeGroups are the managed and self-managed node groups, Karpenter
	// NodePools and Fargate profiles that have nodes or are declared.
	NodeGroups []NodeGroup
	// Addons are the installed EKS add-ons.
	Addons []Addon
	// Volumes are the bound persistent volume claims whose volume lives in
	// one zone (EBS), with the pods using them.
	Volumes []Volume
	// Drains are the predicted drains of each EC2 node (a scenario's twin,
	// internal/drainpredict.Scenario), sorted by node; DrainsPredicted
	// says whether a prediction was made at all.
	Drains          []NodeDrain
	DrainsPredicted bool
}

// GroupType is a kind of node group; each is upgraded by its own
// mechanism. The values are internal/inventory's.
type GroupType string

// Node group types.
const (
	// GroupManaged is an EKS managed node group on the AMI EKS picks.
	GroupManaged GroupType = "managed"
	// GroupCustomAMI is a managed node group whose launch template names an
	// AMI: its nodes move only with a new launch template version.
	GroupCustomAMI GroupType = "managed-custom-ami"
	// GroupSelfManaged is an Auto Scaling group outside EKS.
	GroupSelfManaged GroupType = "self-managed"
	// GroupKarpenter is the nodes of one Karpenter NodePool.
	GroupKarpenter GroupType = "karpenter"
	// GroupFargate is a Fargate profile: one micro-VM node per pod.
	GroupFargate GroupType = "fargate"
)

// Managed reports whether the group is an EKS managed node group.
func (t GroupType) Managed() bool { return t == GroupManaged || t == GroupCustomAMI }

// NodeGroup is one node group as EKS (or the scenario) describes it.
type NodeGroup struct {
	Name string
	Type GroupType
	// Zones are the zones the group launches nodes in (its subnets), sorted;
	// empty when unknown.
	Zones []string
	// AMIType is a managed group's EKS amiType: AL2_x86_64,
	// AL2023_x86_64_STANDARD, BOTTLEROCKET_x86_64, CUSTOM, ... Empty for
	// other groups.
	AMIType string
	// AMIFamily is the operating system of its nodes as the catalog names
	// it: al2, al2023, bottlerocket; empty when unknown.
	AMIFamily string
	// AMIs are the image ids its nodes run, sorted.
	AMIs []string
	// LaunchTemplate is "name:version" (or the id) of its launch template.
	LaunchTemplate string
	// CustomAMI reports whether the launch template names an AMI.
	CustomAMI bool
	// Version is a managed group's Kubernetes version as EKS records it;
	// zero for other groups.
	Version kubeversion.Minor
	// KubeletVersions are the distinct kubelet versions of its nodes, sorted.
	KubeletVersions []string
	// Nodes are its nodes' names, sorted.
	Nodes []string
	// Replacement is the group a blue/green upgrade moves its pods to; nil
	// when it is upgraded in place (new nodes in the zones of the old).
	Replacement *Replacement
	// Force reports whether its upgrade uses UpdateNodegroupVersion's force
	// flag (pods a PDB holds are deleted after the 15 minutes).
	Force bool
}

// Replacement is the green group of a blue/green node group upgrade.
type Replacement struct {
	Name  string
	Zones []string
}

// Node is one node as the cluster reports it.
type Node struct {
	Name           string
	KubeletVersion string // "v1.30.14-eks-f69f56f"
	// KubeProxyVersion is the build of the kube-proxy on the node: the tag
	// of its kube-proxy pod's image ("v1.30.14-minimal-eksbuild.28"), or
	// what the node reports; empty when unknown.
	KubeProxyVersion string
	// Group names the node's node group, NodePool or Fargate profile.
	Group  string
	Zone   string
	Labels map[string]string
}

// Addon is an installed EKS add-on.
type Addon struct {
	Name    string // vpc-cni, coredns, kube-proxy, aws-ebs-csi-driver, ...
	Version string // v1.30.14-eksbuild.28
}

// Volume is a bound claim whose volume lives in one zone.
type Volume struct {
	Namespace, Claim string
	StorageClass     string
	Zone             string
	// Pods use the claim: "namespace/name", sorted; Nodes the nodes they
	// run on, and Workloads their owners ("Deployment orders/orders-mysql").
	Pods      []string
	Nodes     []string
	Workloads []string
}

// NodeDrain is what draining one node does, as predicted in the twin.
type NodeDrain struct {
	Node      string
	Group     string
	GroupType GroupType
	Zone      string
	// Limit is how long the drain may take (15 minutes for a managed
	// group); Duration how long it took, Limit when it did not finish.
	Limit, Duration time.Duration
	Finished        bool
	// Error is the drain's error, if it failed.
	Error string
	// Evicted counts the pods it evicted.
	Evicted int
	// Blocks are the pods whose evictions were refused.
	Blocks []DrainBlock
	// Pending are the pods that fit no node after the drain.
	Pending []PendingPod
}

// DrainBlock is a pod whose eviction was refused during a drain.
type DrainBlock struct {
	Pod      string // namespace/name
	Workload string // "Deployment orders/orders"; empty for a bare pod
	PDB      string // the budgets selecting it, namespace/name, comma-separated
	For      time.Duration
	// Outcome is evicted, deleted, blocked (still refused at the limit) or
	// failed.
	Outcome string
	Message string
}

// PendingPod is a pod that fits no node after a drain.
type PendingPod struct {
	Pod         string
	Workload    string
	Reason      string // the scheduler's "0/11 nodes are available: ..."
	VolumeZones []string
}

// Group returns the node group with a name, or nil.
func (c *Cluster) Group(name string) *NodeGroup {
	for i := range c.NodeGroups {
		if c.NodeGroups[i].Name == name {
			return &c.NodeGroups[i]
		}
	}
	return nil
}

// Addon returns the installed add-on with a name.
func (c *Cluster) Addon(name string) (Addon, bool) {
	for _, a := range c.Addons {
		if a.Name == name {
			return a, true
		}
	}
	return Addon{}, false
}

// finding starts a finding about a cluster fact: an object that is not a
// manifest (a node group, a node, the cluster), whose source is the
// cluster's.
func (c *Cluster) finding(sev Severity, kind, namespace, name, message, recommendation string) Finding {
	return Finding{Severity: sev, Object: ObjectRef{Kind: kind, Namespace: namespace, Name: name, Source: c.Source},
		Message: message, Recommendation: recommendation, source: Source{Origin: c.Source}}
}

// Add appends objects, e.g. from one more source.
func (in *Input) Add(objs []*Object, problems []Problem) {
	in.Objects = append(in.Objects, objs...)
	in.Problems = append(in.Problems, problems...)
}

// Hops are the minors the upgrade passes through, one per hop: Current+1 …
// Target, or just Target when Current is unknown.
func (in *Input) Hops() []kubeversion.Minor {
	if in.Current.IsZero() || !in.Current.Less(in.Target) {
		return []kubeversion.Minor{in.Target}
	}
	var hops []kubeversion.Minor
	for v := in.Current.Next(); !in.Target.Less(v); v = v.Next() {
		hops = append(hops, v)
	}
	return hops
}

// FirstHop is the first hop of the upgrade (Target when Current is unknown).
func (in *Input) FirstHop() kubeversion.Minor { return in.Hops()[0] }

// MultiHop reports whether the report covers more than one hop.
func (in *Input) MultiHop() bool { return len(in.Hops()) > 1 }

// has reports whether the input has everything a check needs.
func (in *Input) has(n Needs) bool {
	if n&NeedsCurrent != 0 && in.Current.IsZero() {
		return false
	}
	if n&NeedsCluster != 0 && in.Cluster == nil {
		return false
	}
	if n&NeedsDrains != 0 && (in.Cluster == nil || !in.Cluster.DrainsPredicted) {
		return false
	}
	return true
}

// Kind returns the objects of a kind (any apiVersion), in source order.
func (in *Input) Kind(kind string) []*Object {
	in.once.Do(func() {
		in.byKind = map[string][]*Object{}
		for _, o := range in.Objects {
			in.byKind[o.Kind] = append(in.byKind[o.Kind], o)
		}
	})
	return in.byKind[kind]
}

// groupFinding starts a finding about a node group, named as its kind:
// NodeGroup (managed and self-managed), NodePool, FargateProfile.
func (c *Cluster) groupFinding(sev Severity, g *NodeGroup, message, recommendation string) Finding {
	return c.finding(sev, groupKind(g.Type), "", g.Name, message, recommendation)
}

func groupKind(t GroupType) string {
	switch t {
	case GroupKarpenter:
		return "NodePool"
	case GroupFargate:
		return "FargateProfile"
	}
	return "NodeGroup"
}

// groupText names a group with its type: "managed node group initial",
// "Karpenter NodePool default".
func groupText(g *NodeGroup) string {
	if g.Name == "" {
		return "nodes of no node group"
	}
	switch g.Type {
	case GroupManaged:
		return "managed node group " + g.Name
	case GroupCustomAMI:
		return "managed node group " + g.Name + " (custom AMI)"
	case GroupSelfManaged:
		return "self-managed node group " + g.Name
	case GroupKarpenter:
		return "Karpenter NodePool " + g.Name
	case GroupFargate:
		return "Fargate profile " + g.Name
	}
	return "node group " + g.Name
}

// hopSeverity grades a problem that appears at a hop: ERROR when it is
// the next hop, WARNING for a later one (EKS Upgrade Insights: ERROR
// affects N+1, WARNING N+2 or later; semantics.md §E).
func (in *Input) hopSeverity(hop kubeversion.Minor) Severity {
	if hop == in.FirstHop() {
		return Error
	}
	return Warning
}

// atHop sets a finding's hop when the report covers several.
func (in *Input) atHop(f Finding, hop kubeversion.Minor) Finding {
	if in.MultiHop() {
		f.Hop = hop.String()
	}
	return f
}

// nodeGroups returns the node groups, then a group of unknown type for
// each group name nodes carry that NodeGroups lacks (a source that knows
// the nodes but not their groups), so checks of nodes miss none.
func (c *Cluster) nodeGroups() []*NodeGroup {
	out := make([]*NodeGroup, 0, len(c.NodeGroups))
	known := map[string]bool{}
	for i := range c.NodeGroups {
		out = append(out, &c.NodeGroups[i])
		known[c.NodeGroups[i].Name] = true
	}
	for _, n := range c.Nodes {
		if !known[n.Group] {
			known[n.Group] = true
			out = append(out, &NodeGroup{Name: n.Group})
		}
	}
	return out
}

// nodesOf returns a group's nodes, in the cluster's order.
func (c *Cluster) nodesOf(group string) []Node {
	var out []Node
	for _, n := range c.Nodes {
		if n.Group == group {
			out = append(out, n)
		}
	}
	return out
}
