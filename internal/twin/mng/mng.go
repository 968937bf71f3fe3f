// Package mng is the twin of EKS managed node groups: the node groups of a
// cluster and the three API calls that change them — CreateNodegroup,
// UpdateNodegroupVersion and DeleteNodegroup — over an Auto Scaling group of
// worker nodes. Every rule cites shared/reference/semantics.md §B (managed
// node group update) or the AWS page it was read from; where the reference
// is silent, the comment says what the twin chose and why.
//
// Files, top-down:
//   - mng.go      the Service, its options and its events
//   - spec.go     a node group's configuration (CreateNodegroup's fields) and its AMI
//   - create.go   CreateNodegroup, and node groups that exist at the start
//   - asg.go      the Auto Scaling group: launch, terminate, replace a node
//   - update.go   UpdateNodegroupVersion: what EKS refuses, and the four phases
//   - drain.go    draining a node through the Eviction API with a time limit
//   - delete.go   DeleteNodegroup
//   - status.go   what a rehearsal reports: DescribeNodegroup and DescribeUpdate
//   - errors.go   EKS API errors
//
// The rules themselves — what UpdateNodegroupVersion and CreateNodegroup
// refuse, the update's arithmetic (maxUnavailable, surge) and which
// instance goes next — are pure functions in internal/rules/nodegroup; this
// package applies them to its groups.
//
// The twin talks to Kubernetes only through the in-memory cluster
// (internal/twin/kube), creates and removes every node through the worker
// pool (internal/twin/worker), and keeps time with the simulation engine:
// every wait is virtual, and every random choice draws from the engine's
// seeded source in a fixed order.
package mng

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/worker"
)

// Labels EKS puts on managed nodes (semantics.md §B, scale-up success
// criteria and "Other MNG rules").
const (
	LabelNodegroup                   = "eks.amazonaws.com/nodegroup"
	LabelNodegroupImage              = "eks.amazonaws.com/nodegroup-image"
	LabelCapacityType                = "eks.amazonaws.com/capacityType"
	LabelSourceLaunchTemplateID      = "eks.amazonaws.com/sourceLaunchTemplateId"
	LabelSourceLaunchTemplateVersion = "eks.amazonaws.com/sourceLaunchTemplateVersion"
	// LabelExcludeFromLB is put on the nodes an update is about to replace
	// (§B scale-up phase: "labels nodes with
	// node.kubernetes.io/exclude-from-external-load-balancers=true").
	LabelExcludeFromLB = "node.kubernetes.io/exclude-from-external-load-balancers"
)

// Node group statuses, as DescribeNodegroup reports them.
const (
	StatusCreating     = "CREATING"
	StatusActive       = "ACTIVE"
	StatusUpdating     = "UPDATING"
	StatusDeleting     = "DELETING"
	StatusCreateFailed = "CREATE_FAILED"
	StatusDegraded     = "DEGRADED"
	// StatusDeleted is the twin's own: EKS forgets a deleted node group
	// (DescribeNodegroup answers ResourceNotFoundException), but a
	// rehearsal's report still lists it.
	StatusDeleted = "DELETED"
)

// Options configure the Service.
type Options struct {
	// InstanceTypes is the EC2 catalog the cluster's region offers.
	InstanceTypes []catalog.InstanceType
	// ExtraAMIs are images the embedded catalog does not know (a scenario's
	// custom AMIs); they are looked up before the catalog.
	ExtraAMIs []catalog.AMI
	// Zones are the cluster's Availability Zones; a group without zones of
	// its own spans them all.
	Zones []string
	// ControlPlaneVersion returns the control plane's minor: the default
	// and the ceiling of a node group's version (§B "can't be greater than
	// the control plane's version").
	ControlPlaneVersion func() kubeversion.Minor
}

// Event is one line of a rehearsal's timeline, worded as EKS, the Auto
// Scaling group or kubectl would report it.
type Event struct {
	Type      string // Normal or Warning
	Reason    string // stable machine name, e.g. UpdateStarted, EvictionBlocked
	Nodegroup string
	Node      string
	Object    string // the pod, namespace/name, when there is one
	Message   string
}

// Event reasons.
const (
	ReasonNodegroupCreating = "NodegroupCreating"
	ReasonNodegroupActive   = "NodegroupActive"
	ReasonCreateFailed      = "NodegroupCreateFailed"
	ReasonNodegroupDeleting = "NodegroupDeleting"
	ReasonNodegroupDeleted  = "NodegroupDeleted"
	ReasonUpdateStarted     = "UpdateStarted"
	ReasonPhase             = "UpdatePhase"
	ReasonScaled            = "AutoScalingGroupResized"
	ReasonNodeLaunched      = "NodeLaunched"
	ReasonNodeReady         = "NodeReady"
	ReasonLaunchFailed      = "NodeLaunchFailed"
	ReasonNodeCordoned      = "NodeCordoned"
	ReasonNodeSelected      = "NodeSelectedForUpgrade"
	ReasonDrainStarted      = "DrainStarted"
	ReasonEvicting          = "EvictingPod"
	ReasonEvictionBlocked   = "EvictionBlocked"
	ReasonPodDeleted        = "PodDeleted"
	ReasonDrainTimedOut     = "DrainTimedOut"
	ReasonNodeDrained       = "NodeDrained"
	ReasonNodeTerminating   = "NodeTerminating"
	ReasonNodeTerminated    = "NodeTerminated"
	ReasonUpdateSucceeded   = "UpdateSucceeded"
	ReasonUpdateFailed      = "UpdateFailed"
)

// Kube is what the managed node groups do to Kubernetes: read a group's
// nodes, cordon and label them, and drain them through the Eviction API
// (semantics.md §B, update phase; §D.1). The twin's in-memory cluster
// (*kube.Cluster) is one body for it; a client of a real API server is
// another, so the same EKS behaviour drives either.
type Kube interface {
	// Options are the cluster's; mng reads its zones from them when the
	// service is given none.
	Options() kube.Options
	// OnPodChange registers fn to be told the node a pod left or joined, so
	// a drain notices the instant its node is empty.
	OnPodChange(fn func(node string))
	Node(name string) *corev1.Node
	PodsOnNode(node string) []*corev1.Pod
	Cordon(name string) error
	UpdateNode(name string, mutate func(*corev1.Node)) error
	// Evict is POST pods/NAME/eviction; its errors are the
	// *apierrors.StatusError a client gets (429 for an exhausted PDB).
	Evict(namespace, name string) error
	DeletePod(namespace, name string, grace *int64, by string) error
	PDBsForPod(namespace, name string) []*policyv1.PodDisruptionBudget
}

var _ Kube = (*kube.Cluster)(nil)

// Service holds every managed node group of the cluster.
type Service struct {
	eng     *sim.Engine
	kube    Kube
	workers *worker.Pool
	opts    Options

	groups map[string]*group
	// byNode maps a node (or a launched instance's future node) to its group.
	byNode map[string]*group
	// drains are the drains in progress, by node (drain.go).
	drains map[string]*drainer
	// deletionBlocked are the pods whose eviction DeleteNodegroup's drains
	// saw refused, of every group deleted so far (a group re-created under
	// the same name starts afresh; these stay).
	deletionBlocked []*Blocked

	emit      func(Event)
	updateSeq int
}

// New returns the node-group service of a cluster. It watches pods leaving
// nodes, to notice the instant a draining node is empty.
func New(eng *sim.Engine, kc Kube, workers *worker.Pool, opts Options) *Service {
	if len(opts.Zones) == 0 {
		opts.Zones = kc.Options().Zones
	}
	s := &Service{
		eng: eng, kube: kc, workers: workers, opts: opts,
		groups: map[string]*group{},
		byNode: map[string]*group{},
		drains: map[string]*drainer{},
		emit:   func(Event) {},
	}
	kc.OnPodChange(s.podChanged)
	return s
}

// OnEvent sets the receiver of the timeline events.
func (s *Service) OnEvent(fn func(Event)) { s.emit = fn }

func (s *Service) log(e Event) {
	if e.Type == "" {
		e.Type = "Normal"
	}
	s.emit(e)
}

// podChanged wakes the drain of a node whose pods changed; the drain looks
// at the node once the cluster has finished the change (a sim.Trigger runs
// after the events already queued for this instant).
func (s *Service) podChanged(node string) {
	if d := s.drains[node]; d != nil {
		d.trigger.Fire()
	}
}

// Nodegroup names the node group a node belongs to.
func (s *Service) Nodegroup(node string) (string, bool) {
	if g, ok := s.byNode[node]; ok {
		return g.spec.Name, true
	}
	return "", false
}

// Versions returns every node group's Kubernetes version, for the control
// plane's update precondition (semantics.md §E "Node precondition").
func (s *Service) Versions() map[string]kubeversion.Minor {
	out := map[string]kubeversion.Minor{}
	for name, g := range s.groups {
		if g.status != StatusDeleted {
			out[name] = g.version
		}
	}
	return out
}

func (s *Service) sortedGroups() []*group {
	out := make([]*group, 0, len(s.groups))
	for _, g := range s.groups {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].spec.Name < out[j].spec.Name })
	return out
}
