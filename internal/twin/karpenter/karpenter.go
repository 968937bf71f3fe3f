// Package karpenter is the twin of Karpenter v1 (sigs.k8s.io/karpenter and
// the AWS provider, the v1.14 line): provisioning, the NodeClaim lifecycle,
// drift, disruption budgets, the orchestration queue, termination (drain
// through the Eviction API, terminationGracePeriod), expiration and
// emptiness. Each concern has its own file; every rule cites
// shared/reference/semantics.md §A.
//
// The twin talks to Kubernetes only through the in-memory cluster
// (internal/twin/kube) and to EC2 through internal/twin/ec2, and keeps time
// with the simulation engine: Karpenter's periods (10 s disruption polling,
// 5 min version and AMI refresh, 1 s termination requeue, 100 ms–10 s
// eviction backoff) are virtual time.
package karpenter

import (
	"fmt"
	"sort"
	"time"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/disruption"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/ec2"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// Timings are the latencies of EC2 and of a node joining the cluster. The
// controller periods are Karpenter's constants and are not configurable.
type Timings struct {
	// BatchIdle and BatchMax bound how long the provisioner gathers pending
	// pods before it computes NodeClaims (BATCH_IDLE_DURATION=1s,
	// BATCH_MAX_DURATION=10s).
	BatchIdle, BatchMax time.Duration
	// Launch is CreateFleet: from "created nodeclaim" to "launched nodeclaim".
	Launch time.Duration
	// Register is instance boot and kubelet join: launched → registered.
	Register time.Duration
	// Initialize is the node turning Ready (CNI up): registered → initialized.
	Initialize time.Duration
	// Terminate is EC2 shutting-down → terminated.
	Terminate time.Duration
}

// DefaultTimings are used when a scenario does not set its own.
var DefaultTimings = Timings{
	BatchIdle:  1 * time.Second,
	BatchMax:   10 * time.Second,
	Launch:     2 * time.Second,
	Register:   30 * time.Second,
	Initialize: 10 * time.Second,
	Terminate:  30 * time.Second,
}

// Karpenter's controller periods.
const (
	disruptionPollingPeriod = 10 * time.Second // disruption/controller.go pollingPeriod (§A.4)
	commandValidationDelay  = 15 * time.Second // emptiness/consolidation validation (§A.4)
	versionPollPeriod       = 5 * time.Minute  // AWS provider controllers/providers/version
	amiRefreshPeriod        = 5 * time.Minute  // AWS provider controllers/nodeclass/ami.go
	terminationRequeue      = 1 * time.Second  // node/termination/controller.go
	instanceTerminateQuery  = 5 * time.Second  // awaitInstanceTermination requeue
	minDrainTime            = 5 * time.Second  // termination MinDrainTime
	evictionBaseDelay       = 100 * time.Millisecond
	evictionMaxDelay        = 10 * time.Second
	maxInstanceTypes        = 60 // scheduling.MaxInstanceTypes
)

// Well-known keys.
const (
	DisruptedTaintKey   = karpv1.DisruptedTaintKey // karpenter.sh/disrupted
	DoNotDisrupt        = karpv1.DoNotDisruptAnnotationKey
	unregisteredTaint   = karpv1.UnregisteredTaintKey
	nodeClassLabel      = "karpenter.k8s.aws/ec2nodeclass"
	ImageIDAnnotation   = "ladder.dev/image-id"
	nodeExcludeBalancer = corev1.LabelNodeExcludeBalancers
)

// Options configure the twin.
type Options struct {
	ClusterName string
	Timings     Timings
	// InstanceTypes is the EC2 catalog the cluster's region offers.
	InstanceTypes []catalog.InstanceType
	// ControlPlaneVersion returns the control plane's minor ("1.31"): what
	// Karpenter discovers every 5 minutes and resolves AMI aliases against.
	ControlPlaneVersion func() string
	// AMIs resolves ids and names the embedded catalog does not know
	// (a scenario's custom AMIs).
	ExtraAMIs []catalog.AMI
}

// Event is one line of Karpenter's log, or a Kubernetes event it emits.
type Event struct {
	Type      string // Normal or Warning
	Code      string // stable machine name, e.g. NodeClaimCreated
	Message   string // what Karpenter logs, e.g. "created nodeclaim"
	Reason    string // disruption reason, lower case as Karpenter logs it ("drifted")
	NodePool  string
	NodeClaim string
	Node      string
	Fields    []string // "key=value" details, in order
}

// Karpenter is the twin.
type Karpenter struct {
	eng   *sim.Engine
	kube  *kube.Cluster
	cloud *ec2.Cloud
	opts  Options

	pools    map[string]*pool
	byWeight []*pool // poolsByWeight() cache; nil when stale
	// podReqs caches a pod template's Karpenter requirements (podRequirements).
	podReqs      map[any]scheduling.Requirements
	classes      map[string]*nodeClass
	claims       map[string]*NodeClaim
	sortedClaims []*NodeClaim // NodeClaims() cache; nil when stale
	byNode       map[string]*NodeClaim
	nodes        nodeIndex // what simulations read of every node (nodeindex.go)
	// drifted counts the NodeClaims with a Drifted condition.
	drifted int
	// nodeGone holds NodeClaims whose node left the cluster while they
	// stayed (emptiness.mayDisrupt); emptyBuf is its reused list.
	nodeGone map[*NodeClaim]bool
	emptyBuf []*NodeClaim

	version string // the control-plane minor Karpenter last discovered

	batch batcher
	// methods are the disruption controller's, in the order it tries them.
	methods    []method
	queue      []*command
	disrupting *sim.Trigger
	emit       func(Event)
	// disruptingHooks hear each change of a pool's disrupting count.
	disruptingHooks []func(pool string, disrupting int)
	stats           map[string]*PoolStats
	blocked         map[string]*Blocked
	blockOrder      []string
	blockedByNode   map[string][]*Blocked
	// unschedulable is the provisioner's last reason per pending pod.
	unschedulable map[string]string
	// budgetBlocks holds, per NodePool/reason, why budgets stop disruption.
	budgetBlocks map[string]string
	// validating is true while an emptiness command waits its 15 s.
	validating bool
	// nominations (nominations.go): per pod, where a command plans it to go.
	nominations map[string]*nomination
	reservedOn  map[string]kube.Resources
	nominatedOn map[string]int
	// simNodes and simPtrs are existingCapacity's reused buffers.
	simNodes  []simNode
	simPtrs   []*simNode
	firstFits *firstFit // a released firstFit, reused by the next packing
	// packTouched records the nodes a packing changed, with what they
	// were: simulate and packBase pack on the pass's base capacity itself
	// and put it back afterwards (undoNodes).
	packTouched []nodeUndo
	// fitRows caches each node's taint and affinity results per pod
	// signature across simulations; a node's row is dropped when it changes.
	fitRows   map[string]*fitRow
	typeFacts map[string]*typeFacts
	// poolTypeCache holds each pool's instance types (poolTypes), and
	// claimTypes a new NodeClaim's per pod template (newClaimTypes).
	poolTypeCache map[*pool][]catalog.InstanceType
	claimTypes    map[newClaimTypeKey][]catalog.InstanceType
}

// PoolStats is what a rehearsal reports per NodePool.
type PoolStats struct {
	// Replaced counts nodes removed by a disruption (drift, emptiness,
	// expiration); Launched counts NodeClaims created.
	Replaced int
	Launched int
	// MaxConcurrentDisruptions is the most nodes that consumed the pool's
	// disruption budget at once: marked for deletion or deleting, until
	// their instance starts terminating (when Karpenter stops counting them).
	MaxConcurrentDisruptions int
	disruptingNow            map[string]bool
}

// Blocked is a pod that held up a node's disruption.
type Blocked struct {
	Node    string
	Pod     string // namespace/name
	PDB     string // namespace/name, or "" for do-not-disrupt
	Since   time.Time
	Until   time.Time // zero while still blocked
	Outcome string    // evicted, forced, blocked, disruption-blocked
	Message string
}

// New returns a Karpenter twin attached to a cluster.
func New(eng *sim.Engine, kc *kube.Cluster, cloud *ec2.Cloud, opts Options) *Karpenter {
	if opts.Timings == (Timings{}) {
		opts.Timings = DefaultTimings
	}
	k := &Karpenter{
		eng: eng, kube: kc, cloud: cloud, opts: opts,
		pools:   map[string]*pool{},
		classes: map[string]*nodeClass{},
		claims:  map[string]*NodeClaim{},
		byNode:  map[string]*NodeClaim{},
		emit:    func(Event) {},
		stats:   map[string]*PoolStats{},
		blocked: map[string]*Blocked{},

		blockedByNode: map[string][]*Blocked{},

		unschedulable: map[string]string{},
		budgetBlocks:  map[string]string{},
		nominations:   map[string]*nomination{},
		reservedOn:    map[string]kube.Resources{},
		nominatedOn:   map[string]int{},
		typeFacts:     map[string]*typeFacts{},
		poolTypeCache: map[*pool][]catalog.InstanceType{},
		claimTypes:    map[newClaimTypeKey][]catalog.InstanceType{},
		podReqs:       map[any]scheduling.Requirements{},
		fitRows:       map[string]*fitRow{},
		nodeGone:      map[*NodeClaim]bool{},
		nodes:         newNodeIndex(),
	}
	k.version = opts.ControlPlaneVersion()
	k.batch.k = k
	k.methods = []method{&emptiness{k: k}, &drift{k: k}}
	k.disrupting = eng.NewTrigger(k.disrupt)
	kc.OnUnschedulable(k.batch.trigger)
	kc.OnNodeChange(func(node string) {
		delete(k.fitRows, node)
		k.nodes.changed(node, kc.Node(node) == nil)
		if c := k.byNode[node]; c != nil && kc.Node(node) == nil {
			k.nodeGone[c] = true
		}
	})
	eng.Every(disruptionPollingPeriod, k.disrupt)
	eng.Every(versionPollPeriod, k.discoverVersion)
	eng.Every(amiRefreshPeriod, k.refreshAMIs)
	return k
}

// OnEvent sets the receiver of Karpenter's log lines.
func (k *Karpenter) OnEvent(fn func(Event)) { k.emit = fn }

func (k *Karpenter) log(e Event) {
	if e.Type == "" {
		e.Type = "Normal"
	}
	k.emit(e)
}

// discoverVersion is the AWS provider's version controller: every 5 minutes
// it reads the cluster version; AMI aliases resolve against it.
func (k *Karpenter) discoverVersion() {
	v := k.opts.ControlPlaneVersion()
	if v == k.version {
		return
	}
	k.version = v
	k.log(Event{Code: "VersionDiscovered", Message: "discovered kubernetes version", Fields: []string{"version=" + v}})
}

// ApplyNodeClass creates or updates an EC2NodeClass. Its status (AMIs) is
// resolved at once, as the nodeclass controller reconciles on a spec change.
func (k *Karpenter) ApplyNodeClass(nc *awsv1.EC2NodeClass) error {
	c := &nodeClass{obj: nc.DeepCopy()}
	if err := k.resolveAMIs(c); err != nil {
		return err
	}
	k.classes[nc.Name] = c
	k.evaluateDrift()
	return nil
}

// ApplyNodePool creates or updates a NodePool after applying the CRD
// defaults and validating its budgets (fail closed on what slips through).
func (k *Karpenter) ApplyNodePool(np *karpv1.NodePool) error {
	np = np.DeepCopy()
	disruption.DefaultNodePool(np)
	if errs := disruption.ValidateBudgets(np); len(errs) > 0 {
		return fmt.Errorf("NodePool %s: %v", np.Name, errs[0])
	}
	ref := np.Spec.Template.Spec.NodeClassRef
	if ref == nil || ref.Name == "" {
		return fmt.Errorf("NodePool %s: spec.template.spec.nodeClassRef.name is required", np.Name)
	}
	if _, ok := k.classes[ref.Name]; !ok {
		return fmt.Errorf("NodePool %s: spec.template.spec.nodeClassRef: EC2NodeClass %q not found (apply it first)", np.Name, ref.Name)
	}
	p, err := newPool(np)
	if err != nil {
		return err
	}
	delete(k.poolTypeCache, k.pools[np.Name])
	clear(k.claimTypes) // keyed by the pool being replaced too
	k.pools[np.Name] = p
	k.byWeight = nil
	if k.stats[np.Name] == nil {
		k.stats[np.Name] = &PoolStats{disruptingNow: map[string]bool{}}
	}
	k.evaluateDrift()
	k.batch.trigger()
	return nil
}

// NodePool returns the stored (defaulted) NodePool, or nil.
func (k *Karpenter) NodePool(name string) *karpv1.NodePool {
	if p, ok := k.pools[name]; ok {
		return p.obj
	}
	return nil
}

// NodeClass returns the stored EC2NodeClass, or nil.
func (k *Karpenter) NodeClass(name string) *awsv1.EC2NodeClass {
	if c, ok := k.classes[name]; ok {
		return c.obj
	}
	return nil
}

// NodePools lists NodePool names, sorted.
func (k *Karpenter) NodePools() []string {
	out := make([]string, 0, len(k.pools))
	for n := range k.pools {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// NodeClaims returns every NodeClaim, sorted by name. The slice is shared
// until the next NodeClaim is created or removed: do not modify it.
func (k *Karpenter) NodeClaims() []*NodeClaim {
	if k.sortedClaims == nil {
		k.sortedClaims = make([]*NodeClaim, 0, len(k.claims))
		for _, c := range k.claims {
			k.sortedClaims = append(k.sortedClaims, c)
		}
		sort.Slice(k.sortedClaims, func(i, j int) bool { return k.sortedClaims[i].Name < k.sortedClaims[j].Name })
	}
	return k.sortedClaims
}

// NodeClaimForNode returns the NodeClaim of a node, or nil.
func (k *Karpenter) NodeClaimForNode(node string) *NodeClaim { return k.byNode[node] }

// Stats returns a NodePool's counters.
func (k *Karpenter) Stats(pool string) PoolStats {
	if s, ok := k.stats[pool]; ok {
		return *s
	}
	return PoolStats{}
}

// BlockedPods lists what held up disruptions, in the order first seen.
func (k *Karpenter) BlockedPods() []Blocked {
	out := make([]Blocked, 0, len(k.blockOrder))
	for _, key := range k.blockOrder {
		out = append(out, *k.blocked[key])
	}
	return out
}

// Busy reports whether Karpenter still has work in flight: NodeClaims not
// yet initialized, deleting NodeClaims, queued commands or a pending batch.
func (k *Karpenter) Busy() bool {
	if len(k.queue) > 0 || k.batch.pending() {
		return true
	}
	for _, c := range k.claims {
		if c.Initialized.IsZero() || c.deleting {
			return true
		}
	}
	return false
}

// Drifted lists NodeClaims that are drifted and not yet being replaced.
func (k *Karpenter) Drifted() []*NodeClaim {
	if !k.AnyDrifted() {
		return nil
	}
	var out []*NodeClaim
	for _, c := range k.NodeClaims() {
		if c.Drifted != "" && !c.deleting {
			out = append(out, c)
		}
	}
	return out
}

// AnyDrifted reports whether some NodeClaim is drifted and not yet being
// deleted, without building the list.
func (k *Karpenter) AnyDrifted() bool {
	if k.drifted == 0 {
		return false
	}
	for _, c := range k.claims {
		if c.Drifted != "" && !c.deleting {
			return true
		}
	}
	return false
}

func (k *Karpenter) noteDisrupting(c *NodeClaim, on bool) {
	s := k.stats[c.NodePool]
	if s == nil {
		return
	}
	if on {
		s.disruptingNow[c.Name] = true
		if n := len(s.disruptingNow); n > s.MaxConcurrentDisruptions {
			s.MaxConcurrentDisruptions = n
		}
	} else {
		delete(s.disruptingNow, c.Name)
	}
	for _, h := range k.disruptingHooks {
		h(c.NodePool, len(s.disruptingNow))
	}
}

// OnDisrupting registers fn to hear a NodePool's count of nodes consuming
// its disruption budget (PoolStats.MaxConcurrentDisruptions counts the
// same) each time a node starts or stops counting.
func (k *Karpenter) OnDisrupting(fn func(pool string, disrupting int)) {
	k.disruptingHooks = append(k.disruptingHooks, fn)
}

func (k *Karpenter) addBlocked(key string, b *Blocked) {
	k.blocked[key] = b
	k.blockOrder = append(k.blockOrder, key)
	k.blockedByNode[b.Node] = append(k.blockedByNode[b.Node], b)
}
