package twinbuild

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// Snapshot is a scenario's starting cluster as the twins build it, before
// the first action or playbook step: what `ladder inventory --scenario`
// reports and what the lab's materializer turns into real API objects.
// Nodes, pods and volumes are deep copies; Objects are the scenario's own.
type Snapshot struct {
	// Cluster is the scenario's EKS cluster (name, version, region, zones).
	Cluster scenario.Cluster
	// Nodes are every node, sorted by name, with the labels, annotations,
	// taints, capacity and status.nodeInfo its twin (managed node group,
	// self-managed ASG, Karpenter, Fargate) gave it.
	Nodes []*corev1.Node
	// Groups maps each node's name to the scenario node group the twins
	// created it for — the twins' own record, not a reading of the labels.
	Groups map[string]GroupRef
	// Pods are every pod, sorted by namespace/name, bound (spec.nodeName)
	// and Running as the starting cluster has them.
	Pods []SnapshotPod
	// Volumes are the persistent volume claims, from manifests and from
	// StatefulSets' volumeClaimTemplates, each with the zone its EBS volume
	// was provisioned in ("" while unbound).
	Volumes []SnapshotVolume
	// NodeClaims are Karpenter's NodeClaims, one per Karpenter node.
	NodeClaims []SnapshotNodeClaim
	// Objects are the scenario's manifests in the order the twins applied
	// them (dependencies first); kinds the twin ignores are not among them.
	Objects []manifest.Object
}

// SnapshotVolume is a claim (spec.volumeName set once bound) and its
// volume's zone.
type SnapshotVolume struct {
	Claim *corev1.PersistentVolumeClaim
	Zone  string
}

// SnapshotNodeClaim is what a Karpenter NodeClaim's spec and status say of
// the instance Karpenter launched for a node.
type SnapshotNodeClaim struct {
	Name         string
	NodePool     string
	NodeClass    string
	Node         string
	ProviderID   string
	ImageID      string
	InstanceType string
	Zone         string
	CapacityType string
	Created      time.Time
	ExpireAfter  *time.Duration
}

// GroupRef is a node group of the scenario by name and type (managed,
// self-managed, karpenter or fargate, as report.Group* spells them).
type GroupRef struct {
	Name string
	Type string
}

// SnapshotPod is a pod and the workload that owns it (a Deployment, not
// its ReplicaSet); Workload is zero for a bare pod.
type SnapshotPod struct {
	Pod      *corev1.Pod
	Workload scenario.WorkloadRef
}

// Start validates a scenario, builds its starting cluster in the twins and
// returns it. It runs no action: the twins stop as soon as every starting
// pod is bound, which takes no virtual time.
func Start(sc *scenario.Scenario) (*Snapshot, error) {
	if _, err := sc.Validate(); err != nil {
		return nil, err
	}
	tw, err := Build(sc, Options{})
	if err != nil {
		return nil, err
	}
	return tw.Snapshot(), nil
}

// Snapshot copies the twin's cluster as it is now.
func (tw *Twin) Snapshot() *Snapshot {
	s := &Snapshot{Cluster: tw.Scenario.Spec.Cluster, Groups: map[string]GroupRef{}}
	for _, n := range tw.Kube.Nodes() {
		s.Nodes = append(s.Nodes, n.DeepCopy())
		name, typ := tw.NodeGroup(n)
		s.Groups[n.Name] = GroupRef{Name: name, Type: typ}
	}
	sort.Slice(s.Nodes, func(i, j int) bool { return s.Nodes[i].Name < s.Nodes[j].Name })
	for _, p := range tw.Kube.Pods() {
		sp := SnapshotPod{Pod: p.DeepCopy()}
		if kind, name := tw.Kube.PodOwner(p.Namespace, p.Name); kind != "" {
			sp.Workload = scenario.WorkloadRef{Kind: kind, Namespace: p.Namespace, Name: name}
		}
		s.Pods = append(s.Pods, sp)
	}
	for _, c := range tw.Kube.PersistentVolumeClaims() {
		s.Volumes = append(s.Volumes, SnapshotVolume{Claim: c.DeepCopy(), Zone: tw.Kube.PVCZone(c.Namespace, c.Name)})
	}
	for _, c := range tw.Karpenter.NodeClaims() {
		s.NodeClaims = append(s.NodeClaims, SnapshotNodeClaim{
			Name: c.Name, NodePool: c.NodePool, NodeClass: c.NodeClass, Node: c.Node, ProviderID: c.ProviderID,
			ImageID: c.AMI.ID, InstanceType: c.InstanceType.Name, Zone: c.Zone, CapacityType: c.CapacityType,
			Created: c.Created, ExpireAfter: c.ExpireAfter,
		})
	}
	s.Objects = InApplyOrder(tw.Scenario.Objects)
	return s
}
