// Package kube is the in-memory Kubernetes of the twin: an object store, the
// scheduler, the workload controllers (Deployment/ReplicaSet, StatefulSet,
// DaemonSet), pod lifecycle, volume binding, the Eviction API and PDB status.
// It runs on a sim.Engine, so every latency is virtual time.
//
// Objects are the upstream types (corev1.Pod, corev1.Node, ...). Accessors
// return the stored pointers: callers must treat them as read-only and change
// state only through the Cluster's methods, as they would through an API
// server.
package kube

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ladder-eks/ladder/internal/eviction"
	workloadrules "github.com/ladder-eks/ladder/internal/rules/workload"
	"github.com/ladder-eks/ladder/internal/sim"
)

// Timings are the latencies of the things Kubernetes does not do instantly.
type Timings struct {
	// PodStartup is image pull plus container start, from binding to Running.
	// A pod becomes Ready PodStartup + readinessProbe.initialDelaySeconds after
	// binding, or after the startup annotation's value when set.
	PodStartup time.Duration
	// PodShutdown is how long a terminating pod takes to exit after SIGTERM,
	// capped by its terminationGracePeriodSeconds.
	PodShutdown time.Duration
	// VolumeAttach is the EBS attach time before a pod with a volume starts.
	VolumeAttach time.Duration
	// VolumeDetach is the time an EBS volume takes to detach after its pod exits.
	VolumeDetach time.Duration
}

// DefaultTimings are the latencies used when a scenario does not set them.
var DefaultTimings = Timings{
	PodStartup:   5 * time.Second,
	PodShutdown:  5 * time.Second,
	VolumeAttach: 10 * time.Second,
	VolumeDetach: 10 * time.Second,
}

// Options configure a Cluster.
type Options struct {
	Timings Timings
	Region  string
	Zones   []string
}

// Cluster is the in-memory API server plus controllers.
type Cluster struct {
	eng  *sim.Engine
	opts Options

	namespaces map[string]*corev1.Namespace
	nodes      map[string]*nodeState
	// idle holds the nodes with no active pod (nodeState.idleAt).
	idle      []*nodeState
	nodeNames []string     // sorted
	nodeList  []*nodeState // in nodeNames order
	// hot[i] is what the scheduler reads of nodeList[i] for every pod,
	// kept side by side so its walk over the nodes reads one array.
	hot         []nodeHot
	pods        map[string]*podState
	byPod       map[*corev1.Pod]*podState // the same pods, by object
	zoneNames   []string                  // zones seen on nodes, see zoneIndex
	zoneScratch []int                     // pickBest's replicas per zone
	touchedBuf  []*nodeHot                // pickBest's nodes with replicas, reused
	holdStarts  bool                      // HoldPodStarts
	held        []heldStart
	keyBuf      []byte // podKey's
	capacityGen uint64 // bumped when a node changes or a pod frees resources
	// pendingOrder holds every pending pod (podState.pending), and maybe
	// pods that have left since; it is in scheduling order while
	// pendingOrdered (pendingInOrder, addPending). pending counts the pods.
	pending        int
	pendingOrder   []*podState
	pendingOrdered bool
	workloads      map[string]*workload     // by kind/namespace/name
	workloadOrder  []*workload              // creation order
	daemonSetOrder []*workload              // the DaemonSets among them
	pdbs           map[string]*pdbState     // by namespace/name
	pdbsByIndex    map[pdbIndex][]*pdbState // see pdbIndexKey
	pdbGen         uint64                   // bumped when a PDB is added or changed (revision.pdbs)
	pvcs           map[string]*pvcState     // by namespace/name
	pvs            map[string]*corev1.PersistentVolume
	storageClasses map[string]*storagev1.StorageClass

	scheduler  *sim.Trigger
	daemonSets *sim.Trigger
	nextStart  int
	podSeq     uint64
	uidSeq     uint64
	tracking   bool
	// trackedSince is when StartTracking was called.
	trackedSince time.Time
	unschedHook  []func()
	podHook      []func(node string)
	nodeHook     []func(node string)
	readyHook    []func(WorkloadReady)
	log          func(Event)

	// admission.go: mutating admission and pod lifecycle hooks.
	admitHooks   []func(*corev1.Pod) bool
	createdHooks []func(*corev1.Pod)
	deletedHooks []func(*corev1.Pod)
	updatedHooks []func(*corev1.Pod)

	killed      []KilledPod
	breaches    []PDBBreach // breach.go
	breachHooks []func(PDBBreach)
	// pdbhistory.go: the PDBs' histories in tracking order, those whose
	// status may have changed in the current event, and the drop hooks.
	histOrder  []*pdbHistory
	touched    []*pdbState
	afterEvent bool
	dropHooks  []func(PDBHistory, PDBDrop)

	notReady, terminating int // pods in those states, for Quiet
	refused               int // workloads missing pods a create was refused for (failedcreate.go)

	// The DaemonSet controller revisits only nodes that changed.
	dsDirty      map[string]bool
	dsAllDirty   bool
	dsGeneration uint64

	feasibleBuf []int32             // findNode's reused buffer: positions in nodeList
	syncFacts   []eviction.PodFacts // sync's reused buffer: a PDB's pods
	// staticLists holds, per workload pod signature, the positions in
	// nodeList of the nodes that pass the node-only filters, valid while
	// nodeGen (bumped by every node change) is unchanged.
	staticLists map[int]*staticList
	nodeGen     uint64
	drainBlocks []*DrainBlock
	signatures  map[string]int

	// priority.go: the PriorityClasses, system ones included, by name,
	// and the globalDefault one (defaultPriorityClass), if any.
	priorityClasses map[string]*priorityClass
	globalDefault   *priorityClass
	// preemption.go: the pods nominated to each node
	// (status.nominatedNodeName) while its victims terminate, and how many
	// bound pods have each priority.
	nominated       map[*nodeState][]*podState
	nominationGen   uint64 // bumped when a nomination goes
	boundPriorities []priorityCount
	// noVictims holds, for a pending pod whose last preemption search
	// found no node, the capacityGen, nodeGen and nominationGen then: the
	// search is futile while all three stand.
	noVictims map[*podState][3]uint64
}

// Event is something worth a line in a rehearsal's timeline.
type Event struct {
	Type    string // Normal or Warning
	Reason  string
	Message string
	Node    string
	Object  string
}

// KilledPod records a pod that stopped without going through the Eviction
// API while it was Ready: its node vanished, or it was force-deleted.
type KilledPod struct {
	At        time.Time
	Namespace string
	Name      string
	Node      string
	Reason    string
}

// New returns an empty cluster on eng.
func New(eng *sim.Engine, opts Options) *Cluster {
	if opts.Timings == (Timings{}) {
		opts.Timings = DefaultTimings
	}
	c := &Cluster{
		eng:             eng,
		opts:            opts,
		namespaces:      map[string]*corev1.Namespace{},
		nodes:           map[string]*nodeState{},
		pods:            map[string]*podState{},
		byPod:           map[*corev1.Pod]*podState{},
		workloads:       map[string]*workload{},
		pdbs:            map[string]*pdbState{},
		pdbsByIndex:     map[pdbIndex][]*pdbState{},
		pvcs:            map[string]*pvcState{},
		pvs:             map[string]*corev1.PersistentVolume{},
		storageClasses:  map[string]*storagev1.StorageClass{},
		log:             func(Event) {},
		dsDirty:         map[string]bool{},
		signatures:      map[string]int{},
		priorityClasses: map[string]*priorityClass{},
	}
	for _, pc := range workloadrules.SystemPriorityClasses() {
		c.priorityClasses[pc.Name] = newPriorityClass(pc)
	}
	c.scheduler = eng.NewTrigger(c.schedule)
	c.daemonSets = eng.NewTrigger(c.reconcileDaemonSets)
	for _, ns := range []string{metav1.NamespaceDefault, metav1.NamespaceSystem} {
		c.namespaces[ns] = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	}
	return c
}

// Engine is the simulation engine the cluster runs on.
func (c *Cluster) Engine() *sim.Engine { return c.eng }

// Options returns the cluster's options.
func (c *Cluster) Options() Options { return c.opts }

// OnEvent sets the function that receives timeline events.
func (c *Cluster) OnEvent(fn func(Event)) { c.log = fn }

// OnUnschedulable registers fn to run whenever a scheduling pass leaves a pod
// unschedulable — what Karpenter's provisioner watches for.
func (c *Cluster) OnUnschedulable(fn func()) { c.unschedHook = append(c.unschedHook, fn) }

// OnPodChange registers fn to run when a pod is bound to, or leaves, a node.
func (c *Cluster) OnPodChange(fn func(node string)) { c.podHook = append(c.podHook, fn) }

// OnNodeChange registers fn to run when a node is added, removed, or changes.
func (c *Cluster) OnNodeChange(fn func(node string)) { c.nodeHook = append(c.nodeHook, fn) }

// OnWorkloadReady registers fn to run whenever a workload's Ready or
// desired count is observed, changed or not — what a watch on its status
// would see, for a recorder of availability over time.
func (c *Cluster) OnWorkloadReady(fn func(WorkloadReady)) {
	c.readyHook = append(c.readyHook, fn)
}

func (c *Cluster) now() metav1.Time { return metav1.NewTime(c.eng.Now()) }

func (c *Cluster) newUID(kind string) types.UID {
	c.uidSeq++
	// fmt.Sprintf("%08x-%04x-4000-8000-%012x", seq, len(kind), seq), written
	// out: every pod gets one.
	var buf [64]byte
	b := appendHex(buf[:0], c.uidSeq, 8)
	b = append(b, '-')
	b = appendHex(b, uint64(len(kind)), 4)
	b = append(b, "-4000-8000-"...)
	b = appendHex(b, c.uidSeq, 12)
	return types.UID(b)
}

// appendHex appends v in lower-case hex, zero-padded to width digits (%0*x).
func appendHex(b []byte, v uint64, width int) []byte {
	var digits [16]byte
	d := strconv.AppendUint(digits[:0], v, 16)
	for range width - len(d) {
		b = append(b, '0')
	}
	return append(b, d...)
}

func key(namespace, name string) string { return namespace + "/" + name }

// podKey is key written into a reused buffer, for a lookup in
// Cluster.pods that does not allocate: c.pods[string(c.podKey(ns, name))].
func (c *Cluster) podKey(namespace, name string) []byte {
	c.keyBuf = append(append(append(c.keyBuf[:0], namespace...), '/'), name...)
	return c.keyBuf
}

// Apply creates or updates an object from a manifest. Supported kinds:
// Namespace, Pod, PersistentVolumeClaim, PersistentVolume, StorageClass,
// PriorityClass, Deployment, StatefulSet, DaemonSet, PodDisruptionBudget.
func (c *Cluster) Apply(obj metav1.Object) error {
	switch o := obj.(type) {
	case *corev1.Namespace:
		c.namespaces[o.Name] = o.DeepCopy()
	case *storagev1.StorageClass:
		c.storageClasses[o.Name] = o.DeepCopy()
	case *schedulingv1.PriorityClass:
		return c.applyPriorityClass(o.DeepCopy())
	case *corev1.PersistentVolume:
		c.pvs[o.Name] = o.DeepCopy()
	case *corev1.PersistentVolumeClaim:
		c.applyPVC(o.DeepCopy())
	case *policyv1.PodDisruptionBudget:
		c.applyPDB(o.DeepCopy())
	case *appsv1.Deployment:
		return c.applyDeployment(o.DeepCopy())
	case *appsv1.StatefulSet:
		return c.applyStatefulSet(o.DeepCopy())
	case *appsv1.DaemonSet:
		return c.applyDaemonSet(o.DeepCopy())
	case *corev1.Pod:
		return c.applyBarePod(o.DeepCopy())
	default:
		return fmt.Errorf("the twin does not model %T", obj)
	}
	return nil
}

func (c *Cluster) requireNamespace(ns string) error {
	if _, ok := c.namespaces[ns]; !ok {
		return fmt.Errorf("namespace %q not found (add a Namespace manifest)", ns)
	}
	return nil
}

// Namespaces lists namespace names, sorted.
func (c *Cluster) Namespaces() []string {
	out := make([]string, 0, len(c.namespaces))
	for n := range c.namespaces {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// StartTracking begins availability accounting: from now on, a workload's
// minimum ready count, its seconds with zero ready pods and its PDB
// violations are recorded. A rehearsal calls it once the starting cluster
// has settled.
func (c *Cluster) StartTracking() {
	c.tracking = true
	c.trackedSince = c.eng.Now()
	for _, w := range c.workloadOrder {
		w.avail.start(c.eng.Now(), w.readyCount())
	}
	c.startPDBHistories()
}

// Killed lists pods that stopped without eviction while Ready.
func (c *Cluster) Killed() []KilledPod { return c.killed }
