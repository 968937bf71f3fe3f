// Package fargate is the twin of EKS on Fargate (semantics.md §E): Fargate
// profiles select pods by namespace and labels; EKS's admission webhook
// hands a selected pod to the Fargate scheduler, which runs it in its own
// micro-VM — one node per pod, named fargate-ip-…, whose kubelet is the
// control plane's version at the moment the pod starts. Nothing upgrades a
// running Fargate pod: "Existing Fargate Pods aren't changed"; a rolling
// restart brings them to the new version (workshop §6.5).
package fargate

import (
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/ladder-eks/ladder/internal/drain"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/ec2"
)

// SchedulerName is the scheduler EKS assigns to pods a profile selects.
const SchedulerName = "fargate-scheduler"

// Labels and taints of Fargate pods and nodes, as EKS sets them.
const (
	LabelComputeType    = "eks.amazonaws.com/compute-type"
	ComputeTypeFargate  = "fargate"
	LabelFargateProfile = "eks.amazonaws.com/fargate-profile"
)

// DefaultProvision is how long Fargate takes from a pod's creation to its
// node registering Ready. AWS gives no figure; pods on Fargate typically
// start within a minute (the seed's node is 60 s old after a restart).
const DefaultProvision = 45 * time.Second

// Cluster is what the Fargate scheduler needs from Kubernetes: the
// admission hook, pod events, the binding subresource and nodes.
type Cluster interface {
	OnAdmit(fn func(pod *corev1.Pod) (changed bool))
	OnPodCreated(fn func(pod *corev1.Pod))
	OnPodDeleted(fn func(pod *corev1.Pod))
	Bind(namespace, name, node string) error
	AddNode(node *corev1.Node, ready bool) error
	RemoveNode(name, reason string) error
	Pod(namespace, name string) *corev1.Pod
}

// Profile is a Fargate profile.
type Profile struct {
	Name      string
	Selectors []Selector
	// Zones are the zones of the profile's private subnets; default: the
	// cluster's.
	Zones []string
}

// Selector matches pods of a namespace and, optionally, with labels.
type Selector struct {
	Namespace string
	Labels    map[string]string
}

// Options configure the twin.
type Options struct {
	// Kubelet returns the kubelet version a Fargate node starts with: the
	// control plane's minor, newest patch.
	Kubelet   func() string
	Provision time.Duration
}

// Fargate is the twin.
type Fargate struct {
	eng      *sim.Engine
	kube     Cluster
	cloud    *ec2.Cloud
	opts     Options
	profiles []Profile
	// nodes maps a pod (namespace/name) to its node; instances a node to its
	// micro-VM's address.
	nodes     map[string]string
	instances map[string]ec2.Instance
	// profileOfNode maps a node to its profile.
	profileOfNode map[string]string
	pending       map[string]*corev1.Pod
	emit          func(Event)
	stats         map[string]*Stats
}

// Stats count a profile's micro-VMs during the run: Launched for pods
// created after Bootstrap, Removed for nodes that went with their pod.
type Stats struct {
	Launched, Removed int
}

// Event is a line of the Fargate scheduler's log.
type Event struct {
	Type    string
	Reason  string
	Profile string
	Pod     string
	Node    string
	Message string
}

// New returns the twin and registers its hooks with the cluster.
func New(eng *sim.Engine, kc Cluster, cloud *ec2.Cloud, opts Options) *Fargate {
	if opts.Provision <= 0 {
		opts.Provision = DefaultProvision
	}
	f := &Fargate{eng: eng, kube: kc, cloud: cloud, opts: opts,
		nodes: map[string]string{}, instances: map[string]ec2.Instance{}, profileOfNode: map[string]string{},
		pending: map[string]*corev1.Pod{}, emit: func(Event) {}, stats: map[string]*Stats{}}
	kc.OnAdmit(f.admit)
	kc.OnPodCreated(f.created)
	kc.OnPodDeleted(f.deleted)
	return f
}

// OnEvent sets the event sink.
func (f *Fargate) OnEvent(fn func(Event)) { f.emit = fn }

// AddProfile registers a Fargate profile; pods created from now on that it
// selects run on Fargate.
func (f *Fargate) AddProfile(p Profile) error {
	if p.Name == "" || len(p.Selectors) == 0 {
		return fmt.Errorf("fargate profile %q needs a name and at least one selector", p.Name)
	}
	for _, q := range f.profiles {
		if q.Name == p.Name {
			return fmt.Errorf("fargate profile %s already exists", p.Name)
		}
	}
	if len(p.Zones) == 0 {
		p.Zones = f.cloud.Zones()
	}
	f.profiles = append(f.profiles, p)
	return nil
}

// profileFor returns the first profile, in creation order, that selects a
// pod. EKS evaluates profiles in an undefined order; scenarios should not
// overlap them.
func (f *Fargate) profileFor(pod *corev1.Pod) (Profile, bool) {
	for _, p := range f.profiles {
		for _, s := range p.Selectors {
			if s.Namespace == pod.Namespace && labels.SelectorFromSet(s.Labels).Matches(labels.Set(pod.Labels)) {
				return p, true
			}
		}
	}
	return Profile{}, false
}

// admit is EKS's mutating webhook: a pod a profile selects gets the Fargate
// scheduler and the profile's label.
//
// A DaemonSet's pod never runs on Fargate ("DaemonSets aren't supported on
// Fargate", EKS user guide, Fargate considerations). The DaemonSet
// controller pins each of its pods to one node (a matchFields
// metadata.name affinity): a pod pinned to an EC2 node is left to the
// default scheduler even when a profile selects its namespace (a
// kube-system profile for CoreDNS). A Fargate node carries the NoSchedule
// taint eks.amazonaws.com/compute-type=fargate, which keeps off any
// DaemonSet that does not tolerate it (EKS's own DaemonSets also exclude it
// by node affinity, compute-type NotIn [fargate]); the pod of a DaemonSet
// that tolerates every taint is created for the Fargate node and stays
// Pending there for good (aws/amazon-cloudwatch-agent-operator#183). The
// twin holds it with the Fargate scheduler, which never binds it, so that
// it cannot preempt the one pod the micro-VM runs.
func (f *Fargate) admit(pod *corev1.Pod) bool {
	if drain.IsDaemonSetPod(pod) {
		if _, fargateNode := f.profileOfNode[daemonPodNode(pod)]; fargateNode && pod.Spec.NodeName == "" {
			pod.Spec.SchedulerName = SchedulerName
			return true
		}
		return false
	}
	p, ok := f.profileFor(pod)
	if !ok || pod.Spec.NodeName != "" {
		return false
	}
	pod.Spec.SchedulerName = SchedulerName
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[LabelFargateProfile] = p.Name
	return true
}

// daemonPodNode is the node a DaemonSet's pod is pinned to by its
// matchFields metadata.name affinity, or "".
func daemonPodNode(pod *corev1.Pod) string {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, req := range t.MatchFields {
			if req.Key == metav1.ObjectNameField && req.Operator == corev1.NodeSelectorOpIn && len(req.Values) == 1 {
				return req.Values[0]
			}
		}
	}
	return ""
}

// created is the Fargate scheduler seeing a new pod: it provisions the pod's
// micro-VM, whose node registers Ready, then binds the pod to it.
func (f *Fargate) created(pod *corev1.Pod) {
	if pod.Spec.SchedulerName != SchedulerName || pod.Spec.NodeName != "" {
		return
	}
	if drain.IsDaemonSetPod(pod) {
		f.emit(Event{Type: "Warning", Reason: "FailedScheduling", Pod: pod.Namespace + "/" + pod.Name, Node: daemonPodNode(pod),
			Message: fmt.Sprintf("pod %s/%s: DaemonSets aren't supported on Fargate; it stays Pending", pod.Namespace, pod.Name)})
		return
	}
	key := pod.Namespace + "/" + pod.Name
	f.pending[key] = pod
	f.eng.After(f.opts.Provision, func() {
		if _, still := f.pending[key]; !still {
			return
		}
		delete(f.pending, key)
		if p := f.kube.Pod(pod.Namespace, pod.Name); p == nil || p.DeletionTimestamp != nil {
			return
		}
		if err := f.start(pod, f.eng.Now(), false); err != nil {
			f.emit(Event{Type: "Warning", Reason: "FailedScheduling", Pod: key, Message: fmt.Sprintf("pod %s: %v", key, err)})
		}
	})
}

// start creates the pod's node and binds the pod to it.
func (f *Fargate) start(pod *corev1.Pod, created time.Time, boot bool) error {
	p, ok := f.profileFor(pod)
	if !ok {
		return fmt.Errorf("no Fargate profile selects it any more")
	}
	zone := p.Zones[f.eng.Rand().IntN(len(p.Zones))]
	inst, err := f.cloud.Launch(zone)
	if err != nil {
		return err
	}
	name := "fargate-" + inst.Hostname
	kubelet := f.opts.Kubelet()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, CreationTimestamp: metav1.NewTime(created),
			Labels: map[string]string{
				corev1.LabelHostname:       inst.Hostname,
				corev1.LabelTopologyZone:   zone,
				corev1.LabelTopologyRegion: f.cloud.Region(),
				corev1.LabelArchStable:     "amd64",
				corev1.LabelOSStable:       "linux",
				LabelComputeType:           ComputeTypeFargate,
				LabelFargateProfile:        p.Name,
			},
		},
		Spec: corev1.NodeSpec{
			ProviderID: inst.ProviderID,
			Taints:     []corev1.Taint{{Key: LabelComputeType, Value: ComputeTypeFargate, Effect: corev1.TaintEffectNoSchedule}},
		},
		Status: corev1.NodeStatus{
			// The micro-VM is sized to the pod; the node reports room for it.
			Capacity:    podCapacity(pod),
			Allocatable: podCapacity(pod),
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: kubelet,
				//lint:ignore SA1019 deprecated upstream, but EKS nodes still report it
				KubeProxyVersion: kubelet, OperatingSystem: "linux", Architecture: "amd64"},
		},
	}
	if err := f.kube.AddNode(node, true); err != nil {
		f.cloud.Terminate(inst.ID)
		return err
	}
	f.instances[name] = inst
	f.profileOfNode[name] = p.Name
	key := pod.Namespace + "/" + pod.Name
	f.nodes[key] = name
	if !boot {
		f.statsOf(p.Name).Launched++
	}
	if err := f.kube.Bind(pod.Namespace, pod.Name, name); err != nil {
		return err
	}
	f.emit(Event{Type: "Normal", Reason: "Scheduled", Profile: p.Name, Pod: key, Node: name,
		Message: fmt.Sprintf("Successfully assigned %s to %s (Fargate profile %s, kubelet %s)", key, name, p.Name, kubelet)})
	return nil
}

// deleted removes a pod's node once the pod is gone: the micro-VM lives and
// dies with it.
func (f *Fargate) deleted(pod *corev1.Pod) {
	key := pod.Namespace + "/" + pod.Name
	delete(f.pending, key)
	node, ok := f.nodes[key]
	if !ok {
		return
	}
	delete(f.nodes, key)
	if inst, ok := f.instances[node]; ok {
		f.cloud.Terminate(inst.ID)
		delete(f.instances, node)
	}
	f.statsOf(f.profileOfNode[node]).Removed++
	delete(f.profileOfNode, node)
	_ = f.kube.RemoveNode(node, "Fargate pod deleted")
}

// Bootstrap runs every pending Fargate pod on a node created at created,
// as a cluster that has been running a while has them.
func (f *Fargate) Bootstrap(created time.Time) error {
	for _, k := range slices.Sorted(maps.Keys(f.pending)) {
		pod := f.pending[k]
		delete(f.pending, k)
		if err := f.start(pod, created, true); err != nil {
			return fmt.Errorf("fargate pod %s: %v", k, err)
		}
	}
	return nil
}

// Profiles lists the profiles (EKS ListFargateProfiles reads them).
func (f *Fargate) Profiles() []Profile { return append([]Profile(nil), f.profiles...) }

// ProfileOf returns the profile of a Fargate node.
func (f *Fargate) ProfileOf(node string) (string, bool) {
	p, ok := f.profileOfNode[node]
	return p, ok
}

// Stats returns a profile's counts.
func (f *Fargate) Stats(profile string) Stats { return *f.statsOf(profile) }

func (f *Fargate) statsOf(profile string) *Stats {
	s, ok := f.stats[profile]
	if !ok {
		s = &Stats{}
		f.stats[profile] = s
	}
	return s
}

// podCapacity is a micro-VM sized for a pod (fargate-pod-configuration):
// the pod's requests, at least the smallest Fargate size (0.25 vCPU,
// 0.5 GB), plus the 256 MB Fargate adds for the Kubernetes components, and
// room for that one pod. Fargate would round up to its vCPU/memory
// combinations; the twin only needs the pod to fit.
func podCapacity(pod *corev1.Pod) corev1.ResourceList {
	req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	cpu := max(req.Cpu().MilliValue(), 250)
	mem := max(req.Memory().Value(), 512<<20) + 256<<20
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(mem, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(1, resource.DecimalSI),
	}
}
