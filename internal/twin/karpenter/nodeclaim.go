package karpenter

import (
	"fmt"
	"sort"
	"strings"
	"time"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/disruption"
	"github.com/ladder-eks/ladder/internal/rules/nodeclass"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/ec2"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// pool is a NodePool with what the twin derives from it.
type pool struct {
	obj          *karpv1.NodePool
	requirements scheduling.Requirements // spec.template requirements + labels + nodepool label
	taints       []corev1.Taint
	startup      []corev1.Taint
	// overhead caches the DaemonSets' requests on a node of this pool.
	overhead    kube.Resources
	overheadGen uint64
	overheadSet bool
	// verdicts caches poolCompatibility per pod template (TemplateKey).
	verdicts map[any]poolVerdict
}

func newPool(np *karpv1.NodePool) (*pool, error) {
	if err := nodeclass.CheckRequirements(np); err != nil {
		return nil, err
	}
	disruption.StampNodePoolHash(np) // the nodepool hash controller (semantics.md §A.3)
	return &pool{
		obj:          np,
		requirements: nodeclass.PoolRequirements(np),
		taints:       np.Spec.Template.Spec.Taints,
		startup:      np.Spec.Template.Spec.StartupTaints,
	}, nil
}

// stampedHashes are a NodeClaim's hash annotations: the NodePool's hash
// and version from pool, the EC2NodeClass's from class, each when given.
func stampedHashes(pool, class map[string]string) map[string]string {
	out := map[string]string{}
	for _, key := range []string{karpv1.NodePoolHashAnnotationKey, karpv1.NodePoolHashVersionAnnotationKey} {
		if v, ok := pool[key]; ok {
			out[key] = v
		}
	}
	for _, key := range []string{awsv1.AnnotationEC2NodeClassHash, awsv1.AnnotationEC2NodeClassHashVersion} {
		if v, ok := class[key]; ok {
			out[key] = v
		}
	}
	return out
}

// NodeClaim is the twin's NodeClaim: a request for one instance, then the
// instance and its node.
type NodeClaim struct {
	// What the disruption loop reads of every NodeClaim on every pass
	// (eligibleAmong, budgetMapping, the methods' tests) comes first, side by
	// side, so a pass over thousands of claims reads a line or two of each.
	command           *command
	node              *corev1.Node // the Node object once registered (see nodeOf)
	Initialized       time.Time
	NodePool          string
	Node              string
	Drifted           string // the drift reason (NodePoolDrifted, RequirementsDrifted, NodeClassDrift, AMIDrift)
	deleting          bool
	markedForDeletion bool
	terminating       bool // InstanceTerminating condition

	Name         string
	NodeClass    string
	Created      time.Time
	InstanceType catalog.InstanceType
	CapacityType string
	Zone         string
	AMI          catalog.AMI
	ProviderID   string
	instanceID   string

	Launched, Registered time.Time

	// DriftedSince is when the Drifted condition last turned.
	DriftedSince time.Time

	// options are the instance types this claim may launch as, cheapest first.
	options      []catalog.InstanceType
	requirements scheduling.Requirements
	labels       map[string]string

	// Copied from the NodePool at creation (changing the pool drifts them).
	ExpireAfter            *time.Duration
	TerminationGracePeriod *time.Duration
	// annotations are the hash annotations Karpenter stamps: the
	// NodePool's at creation, the EC2NodeClass's at launch (drift compares
	// them, driftReason).
	annotations map[string]string

	deletionStarted  time.Time
	terminationTime  *time.Time // deletionTimestamp + terminationGracePeriod
	instanceGone     bool
	drainStarted     time.Time
	reconcile        *sim.Trigger
	disruptionReason string
	evictions        map[string]*evictionState
	// proto is what the node will look like, for in-flight capacity.
	proto *corev1.Node
	// sim is "nodeclaim/NAME", the claim's name in scheduling simulations.
	sim string
}

// simName is the NodeClaim's name in scheduling simulations.
func (c *NodeClaim) simName() string {
	if c.sim == "" {
		c.sim = "nodeclaim/" + c.Name
	}
	return c.sim
}

// nodeOf returns a NodeClaim's Node: nil before registration and once
// Karpenter deleted it; the object registered until then, as Karpenter's
// cluster state keeps a node until its NodeClaim is gone.
func (k *Karpenter) nodeOf(c *NodeClaim) *corev1.Node { return c.node }

// nodeActivity is the cluster's ActivePods and LastPodEvent for the
// NodeClaim's node.
func (k *Karpenter) nodeActivity(c *NodeClaim) (int, time.Time) {
	return k.kube.ActivePods(c.Node), k.kube.LastPodEvent(c.Node)
}

func (c *NodeClaim) String() string { return c.Name }

// launchedType is "node/type/capacity" as Karpenter prints a candidate.
func (c *NodeClaim) launchedType() string {
	return fmt.Sprintf("%s/%s/%s", c.Node, c.InstanceType.Name, c.CapacityType)
}

// typeFacts are per-instance-type values the simulation needs often.
type typeFacts struct {
	requirements scheduling.Requirements
	allocatable  kube.Resources
	capacity     corev1.ResourceList // read only: NodePool limits compare it
}

// facts returns an instance type's requirements and allocatable, computed
// once per type.
func (k *Karpenter) facts(it catalog.InstanceType) *typeFacts {
	f, ok := k.typeFacts[it.Name]
	if !ok {
		f = &typeFacts{requirements: nodeclass.InstanceTypeRequirements(it, k.cloud.Zones()), allocatable: kube.FromList(it.Allocatable()), capacity: it.Capacity()}
		k.typeFacts[it.Name] = f
	}
	return f
}

// offering is one (instance type, zone, capacity type) EC2 sells.
type offering struct {
	it           catalog.InstanceType
	zone         string
	capacityType string
	price        float64
}

// cheapestOffering is the launch decision: among the claim's instance types,
// the zones and capacity types its requirements allow, the lowest price —
// spot before on-demand when both are allowed, as Karpenter prioritises
// spot. Ties are broken by the seeded random source (EC2 Fleet's choice).
func (k *Karpenter) cheapestOffering(claim *NodeClaim) (offering, bool) {
	zones := claim.requirements.Get(corev1.LabelTopologyZone)
	caps := claim.requirements.Get(karpv1.CapacityTypeLabelKey)
	var best []offering
	for _, it := range claim.options {
		for _, ct := range []string{karpv1.CapacityTypeSpot, karpv1.CapacityTypeOnDemand} {
			if !caps.Has(ct) {
				continue
			}
			for _, z := range k.cloud.Zones() {
				if !zones.Has(z) {
					continue
				}
				o := offering{it: it, zone: z, capacityType: ct, price: it.Price(ct)}
				switch {
				case len(best) == 0 || o.price < best[0].price:
					best = []offering{o}
				case o.price == best[0].price:
					best = append(best, o)
				}
			}
		}
	}
	if len(best) == 0 {
		return offering{}, false
	}
	return best[k.eng.Rand().IntN(len(best))], true
}

// newNodeClaimName is "<nodepool>-<5 random characters>".
func (k *Karpenter) newNodeClaimName(poolName string) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	for {
		b := make([]byte, 5)
		for i := range b {
			b[i] = alphabet[k.eng.Rand().IntN(len(alphabet))]
		}
		name := poolName + "-" + string(b)
		if _, taken := k.claims[name]; !taken {
			return name
		}
	}
}

// createNodeClaim records a NodeClaim for a simulated claim and launches it
// after the CreateFleet latency.
func (k *Karpenter) createNodeClaim(sc *simClaim) *NodeClaim {
	p := sc.pool
	np := p.obj
	claim := &NodeClaim{
		Name:         k.newNodeClaimName(np.Name),
		NodePool:     np.Name,
		NodeClass:    np.Spec.Template.Spec.NodeClassRef.Name,
		Created:      k.eng.Now(),
		options:      sc.options,
		requirements: sc.requirements,
		annotations:  stampedHashes(np.Annotations, nil),
		evictions:    map[string]*evictionState{},
	}
	if d := np.Spec.Template.Spec.ExpireAfter.Duration; d != nil {
		v := *d
		claim.ExpireAfter = &v
	}
	if tgp := np.Spec.Template.Spec.TerminationGracePeriod; tgp != nil {
		v := tgp.Duration
		claim.TerminationGracePeriod = &v
	}
	k.claims[claim.Name] = claim
	k.sortedClaims = nil
	k.stats[np.Name].Launched++
	k.scheduleExpiry(claim)
	k.log(Event{Code: "NodeClaimCreated", Message: "created nodeclaim", NodePool: np.Name, NodeClaim: claim.Name,
		Fields: []string{"requests=" + sc.used.String(), "instance-types=" + typeList(sc.options, 5)}})
	k.eng.After(k.opts.Timings.Launch, func() { k.launch(claim) })
	return claim
}

// launch is the cloud provider's Create: pick the offering, the AMI and an
// instance; the node registers after the boot latency.
func (k *Karpenter) launch(claim *NodeClaim) {
	if claim.deleting {
		return
	}
	o, ok := k.cheapestOffering(claim)
	class := k.classes[claim.NodeClass]
	var ami catalog.AMI
	if ok && class != nil {
		ami, ok = class.amiFor(o.it.Arch)
	}
	var inst ec2.Instance
	var err error
	if ok {
		inst, err = k.cloud.Launch(o.zone)
	}
	if !ok || err != nil {
		msg := "no offering or AMI matches the nodeclaim's requirements"
		if err != nil {
			msg = err.Error()
		}
		k.log(Event{Type: "Warning", Code: "LaunchFailed", Message: "failed launching nodeclaim: " + msg, NodePool: claim.NodePool, NodeClaim: claim.Name})
		delete(k.claims, claim.Name)
		delete(k.fitRows, "nodeclaim/"+claim.Name)
		k.sortedClaims = nil
		k.commandProgress() // a command waiting for this replacement fails now
		k.batch.trigger()
		return
	}
	claim.InstanceType, claim.Zone, claim.CapacityType, claim.AMI = o.it, o.zone, o.capacityType, ami
	claim.Node, claim.ProviderID, claim.instanceID = inst.Hostname, inst.ProviderID, inst.ID
	claim.annotations = stampedHashes(claim.annotations, class.obj.Annotations)
	claim.Launched = k.eng.Now()
	k.linkNode(claim)
	claim.labels = k.nodeLabels(claim)
	k.log(Event{Code: "NodeClaimLaunched", Message: "launched nodeclaim", NodePool: claim.NodePool, NodeClaim: claim.Name,
		Fields: []string{"provider-id=" + claim.ProviderID, "instance-type=" + o.it.Name, "zone=" + o.zone, "capacity-type=" + o.capacityType}})
	k.eng.After(k.opts.Timings.Register, func() { k.register(claim) })
}

func (k *Karpenter) nodeLabels(claim *NodeClaim) map[string]string {
	p := k.pools[claim.NodePool]
	labels := map[string]string{}
	if p != nil {
		for key, v := range p.obj.Spec.Template.Labels {
			labels[key] = v
		}
	}
	for key, v := range nodeclass.InstanceLabels(claim.InstanceType) {
		labels[key] = v
	}
	labels[karpv1.NodePoolLabelKey] = claim.NodePool
	labels[karpv1.CapacityTypeLabelKey] = claim.CapacityType
	labels[corev1.LabelTopologyZone] = claim.Zone
	labels[corev1.LabelTopologyRegion] = k.cloud.Region()
	labels[corev1.LabelHostname] = claim.Node
	labels[nodeClassLabel] = claim.NodeClass
	return labels
}

// register is the node joining: the kubelet creates the Node (NotReady,
// with karpenter.sh/unregistered:NoExecute), Karpenter syncs labels and
// taints from the NodeClaim and removes the unregistered taint.
func (k *Karpenter) register(claim *NodeClaim) {
	if claim.deleting {
		return
	}
	p := k.pools[claim.NodePool]
	node := k.newNode(claim, p)
	if err := k.kube.AddNode(node, false); err != nil {
		k.log(Event{Type: "Warning", Code: "RegistrationFailed", Message: err.Error(), NodeClaim: claim.Name})
		return
	}
	claim.Registered = k.eng.Now()
	claim.node = k.kube.Node(claim.Node)
	k.log(Event{Code: "NodeClaimRegistered", Message: "registered nodeclaim", NodePool: claim.NodePool, NodeClaim: claim.Name, Node: claim.Node})
	k.eng.After(k.opts.Timings.Initialize, func() { k.initialize(claim) })
}

func (k *Karpenter) newNode(claim *NodeClaim, p *pool) *corev1.Node {
	alloc := claim.InstanceType.Allocatable()
	labels := map[string]string{}
	for key, v := range claim.labels {
		labels[key] = v
	}
	labels[karpv1.NodeRegisteredLabelKey] = "true"
	var taints []corev1.Taint
	if p != nil {
		taints = append(taints, p.taints...)
		taints = append(taints, p.startup...)
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        claim.Node,
			Labels:      labels,
			Annotations: map[string]string{ImageIDAnnotation: claim.AMI.ID},
			Finalizers:  []string{karpv1.TerminationFinalizer},
		},
		Spec: corev1.NodeSpec{ProviderID: claim.ProviderID, Taints: taints},
		Status: corev1.NodeStatus{
			Capacity:    claim.InstanceType.Capacity(),
			Allocatable: alloc,
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion: claim.AMI.KubeletVersion,
				//lint:ignore SA1019 deprecated upstream, but EKS nodes still report it and kube-proxy skew checks read it
				KubeProxyVersion:        claim.AMI.KubeletVersion,
				OSImage:                 osImage(claim.AMI),
				OperatingSystem:         "linux",
				Architecture:            claim.InstanceType.Arch,
				ContainerRuntimeVersion: "containerd://1.7.27",
			},
		},
	}
}

func osImage(a catalog.AMI) string {
	switch a.Family {
	case catalog.FamilyAL2023:
		return "Amazon Linux 2023"
	case catalog.FamilyAL2:
		return "Amazon Linux 2"
	case catalog.FamilyBottlerocket:
		return "Bottlerocket OS " + strings.TrimPrefix(a.Release, "v")
	}
	return a.Name
}

// initialize is the node turning Ready; Karpenter then marks the NodeClaim
// initialized (label karpenter.sh/initialized=true), once startup taints are
// gone — the twin removes them at this point.
func (k *Karpenter) initialize(claim *NodeClaim) {
	if claim.deleting || k.kube.Node(claim.Node) == nil {
		return
	}
	_ = k.kube.SetNodeReady(claim.Node, true)
	p := k.pools[claim.NodePool]
	_ = k.kube.UpdateNode(claim.Node, func(n *corev1.Node) {
		if p != nil {
			for _, t := range p.startup {
				kube.RemoveNodeTaint(n, t.Key)
			}
		}
		n.Labels[karpv1.NodeInitializedLabelKey] = "true"
	})
	claim.Initialized = k.eng.Now()
	alloc := kube.FromList(claim.InstanceType.Allocatable())
	k.log(Event{Code: "NodeClaimInitialized", Message: "initialized nodeclaim", NodePool: claim.NodePool, NodeClaim: claim.Name, Node: claim.Node,
		Fields: []string{fmt.Sprintf("allocatable={cpu: %dm, memory: %dMi, pods: %d}", alloc.MilliCPU, alloc.Memory>>20, alloc.Pods)}})
	k.commandProgress()
}

// Adopt registers an existing, initialized node of a NodePool, for the
// starting state of a scenario: created age ago, on the given instance type,
// zone and capacity type, running ami (empty: what the EC2NodeClass
// resolves to now).
func (k *Karpenter) Adopt(poolName, instanceType, zone, capacityType, amiID string, created time.Time) (*NodeClaim, error) {
	p, ok := k.pools[poolName]
	if !ok {
		return nil, fmt.Errorf("NodePool %q not found", poolName)
	}
	it, ok := k.lookupInstanceType(instanceType)
	if !ok {
		return nil, fmt.Errorf("instance type %q is not in the catalog", instanceType)
	}
	class := k.classes[p.obj.Spec.Template.Spec.NodeClassRef.Name]
	var ami catalog.AMI
	if amiID != "" {
		if ami, ok = k.lookupAMI(amiID); !ok {
			return nil, fmt.Errorf("AMI %s is not in the catalog", amiID)
		}
	} else if ami, ok = class.amiFor(it.Arch); !ok {
		return nil, fmt.Errorf("EC2NodeClass %s resolves to no %s AMI", class.obj.Name, it.Arch)
	}
	if capacityType == "" {
		capacityType = karpv1.CapacityTypeOnDemand
	}
	inst, err := k.cloud.Launch(zone)
	if err != nil {
		return nil, err
	}
	claim := &NodeClaim{
		Name: k.newNodeClaimName(poolName), NodePool: poolName, NodeClass: class.obj.Name,
		Created: created, InstanceType: it, CapacityType: capacityType, Zone: zone, AMI: ami,
		Node: inst.Hostname, ProviderID: inst.ProviderID, instanceID: inst.ID,
		Launched: created, Registered: created, Initialized: created,
		options: []catalog.InstanceType{it}, annotations: stampedHashes(p.obj.Annotations, class.obj.Annotations),
		evictions: map[string]*evictionState{},
	}
	claim.requirements = scheduling.NewLabelRequirements(map[string]string{})
	if d := p.obj.Spec.Template.Spec.ExpireAfter.Duration; d != nil {
		v := *d
		claim.ExpireAfter = &v
	}
	if tgp := p.obj.Spec.Template.Spec.TerminationGracePeriod; tgp != nil {
		v := tgp.Duration
		claim.TerminationGracePeriod = &v
	}
	claim.labels = k.nodeLabels(claim)
	node := k.newNode(claim, p)
	node.CreationTimestamp = metav1.NewTime(created)
	node.Labels[karpv1.NodeInitializedLabelKey] = "true"
	for _, t := range p.startup {
		kube.RemoveNodeTaint(node, t.Key)
	}
	if err := k.kube.AddNode(node, true); err != nil {
		return nil, err
	}
	claim.node = k.kube.Node(claim.Node)
	k.claims[claim.Name] = claim
	k.sortedClaims = nil
	k.linkNode(claim)
	k.scheduleExpiry(claim)
	k.evaluateDriftOf(claim)
	return claim, nil
}

func (k *Karpenter) lookupInstanceType(name string) (catalog.InstanceType, bool) {
	for _, it := range k.opts.InstanceTypes {
		if it.Name == name {
			return it, true
		}
	}
	return catalog.InstanceType{}, false
}

// typeList prints instance types as Karpenter's log does: the first n, then
// "and N other(s)".
func typeList(its []catalog.InstanceType, n int) string {
	names := make([]string, 0, n)
	for i, it := range its {
		if i == n {
			break
		}
		names = append(names, it.Name)
	}
	s := strings.Join(names, ", ")
	if len(its) > n {
		s += fmt.Sprintf(" and %d other(s)", len(its)-n)
	}
	return s
}

func sortByPrice(its []catalog.InstanceType, capacityTypes []string) {
	price := func(it catalog.InstanceType) float64 {
		best := -1.0
		for _, ct := range capacityTypes {
			if p := it.Price(ct); best < 0 || p < best {
				best = p
			}
		}
		return best
	}
	sort.SliceStable(its, func(i, j int) bool {
		pi, pj := price(its[i]), price(its[j])
		if pi != pj {
			return pi < pj
		}
		return its[i].Name < its[j].Name
	})
}
