// Package worker is the life of an EKS worker node outside Karpenter: an EC2
// instance that boots the EKS-optimized AMI, registers its Node, turns Ready,
// and later is terminated. The managed node group and Auto Scaling group
// twins launch and terminate their nodes through it; Karpenter's twin keeps
// its own NodeClaim lifecycle.
package worker

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/ec2"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// ImageIDAnnotation records the AMI a node booted, as the twin's nodes all do
// (a real node has it in its EC2 instance, not its Node object).
const ImageIDAnnotation = "ladder.dev/image-id"

// Timings are a node's latencies. They are the same as Karpenter's: EC2
// launch, instance boot to kubelet registration, registration to Ready, and
// EC2 shutting-down to terminated.
type Timings struct {
	Launch    time.Duration
	Register  time.Duration
	Ready     time.Duration
	Terminate time.Duration
}

// DefaultTimings match the Karpenter twin's defaults.
var DefaultTimings = Timings{
	Launch:    2 * time.Second,
	Register:  30 * time.Second,
	Ready:     10 * time.Second,
	Terminate: 30 * time.Second,
}

// Spec is what a node is launched with.
type Spec struct {
	Zone         string
	InstanceType catalog.InstanceType
	AMI          catalog.AMI
	// Labels and Taints are the node's own (EKS and the group's) besides the
	// well-known labels every node gets (hostname, instance type, arch, os,
	// zone, region).
	Labels map[string]string
	Taints []corev1.Taint
}

// Kube is what a worker node does to Kubernetes: its kubelet registers the
// Node, reports it Ready, stops reporting when the instance shuts down, and
// the Node goes when the instance is terminated. The twin's in-memory
// cluster (*kube.Cluster) is one body for it; a client of a real API server
// is another.
type Kube interface {
	AddNode(node *corev1.Node, ready bool) error
	Node(name string) *corev1.Node
	SetNodeReady(name string, ready bool) error
	RemoveNode(name, reason string) error
}

var _ Kube = (*kube.Cluster)(nil)

// Pool launches and terminates worker nodes.
type Pool struct {
	eng     *sim.Engine
	kube    Kube
	cloud   *ec2.Cloud
	timings Timings
	// instances maps node name to its EC2 instance.
	instances map[string]ec2.Instance
}

// New returns a pool. Zero timings take the defaults.
func New(eng *sim.Engine, kc Kube, cloud *ec2.Cloud, t Timings) *Pool {
	if t.Launch == 0 {
		t.Launch = DefaultTimings.Launch
	}
	if t.Register == 0 {
		t.Register = DefaultTimings.Register
	}
	if t.Ready == 0 {
		t.Ready = DefaultTimings.Ready
	}
	if t.Terminate == 0 {
		t.Terminate = DefaultTimings.Terminate
	}
	return &Pool{eng: eng, kube: kc, cloud: cloud, timings: t, instances: map[string]ec2.Instance{}}
}

// Timings are the pool's latencies.
func (p *Pool) Timings() Timings { return p.timings }

// Existing creates a node that was running before the rehearsal began:
// created at created, Ready now.
func (p *Pool) Existing(spec Spec, created time.Time) (*corev1.Node, error) {
	inst, err := p.cloud.Launch(spec.Zone)
	if err != nil {
		return nil, err
	}
	node := p.nodeFor(inst, spec, created)
	if err := p.kube.AddNode(node, true); err != nil {
		p.cloud.Terminate(inst.ID)
		return nil, err
	}
	p.instances[node.Name] = inst
	return p.kube.Node(node.Name), nil
}

// Launch starts an instance now. After the launch and boot latencies its
// Node registers NotReady (registered is called with the node's name), and
// after the ready latency it turns Ready (ready is called). Either callback
// may be nil. The instance is returned at once; its hostname is the node's
// name.
func (p *Pool) Launch(spec Spec, registered, ready func(node string)) (ec2.Instance, error) {
	inst, err := p.cloud.Launch(spec.Zone)
	if err != nil {
		return ec2.Instance{}, err
	}
	p.instances[inst.Hostname] = inst
	p.eng.After(p.timings.Launch+p.timings.Register, func() {
		if _, alive := p.instances[inst.Hostname]; !alive {
			return // terminated before it registered
		}
		node := p.nodeFor(inst, spec, p.eng.Now())
		if err := p.kube.AddNode(node, false); err != nil {
			panic(fmt.Sprintf("worker: registering %s: %v", node.Name, err)) // names come from ec2 and are unique
		}
		if registered != nil {
			registered(node.Name)
		}
		p.eng.After(p.timings.Ready, func() {
			if _, alive := p.instances[node.Name]; !alive || p.kube.Node(node.Name) == nil {
				return // terminated before it turned Ready
			}
			_ = p.kube.SetNodeReady(node.Name, true)
			if ready != nil {
				ready(node.Name)
			}
		})
	})
	return inst, nil
}

// Instance returns the EC2 instance behind a node.
func (p *Pool) Instance(node string) (ec2.Instance, bool) {
	inst, ok := p.instances[node]
	return inst, ok
}

// Terminate is TerminateInstances on the node's instance: the kubelet stops
// at once (the node turns NotReady), and when EC2 reports the instance
// terminated the Node object is deleted and the pod garbage collector
// removes what still ran there — a Ready pod among them is recorded as
// killed, never evicted. done, if not nil, runs then.
func (p *Pool) Terminate(node, reason string, done func()) error {
	inst, ok := p.instances[node]
	if !ok {
		return fmt.Errorf("node %s has no instance in this pool", node)
	}
	delete(p.instances, node)
	if p.kube.Node(node) != nil {
		_ = p.kube.SetNodeReady(node, false)
	}
	p.eng.After(p.timings.Terminate, func() {
		p.cloud.Terminate(inst.ID)
		if p.kube.Node(node) != nil {
			_ = p.kube.RemoveNode(node, reason)
		}
		if done != nil {
			done()
		}
	})
	return nil
}

func (p *Pool) nodeFor(inst ec2.Instance, spec Spec, created time.Time) *corev1.Node {
	it := spec.InstanceType
	labels := map[string]string{
		corev1.LabelHostname:           inst.Hostname,
		corev1.LabelInstanceTypeStable: it.Name,
		corev1.LabelArchStable:         it.Arch,
		corev1.LabelOSStable:           "linux",
		corev1.LabelTopologyZone:       inst.Zone,
		corev1.LabelTopologyRegion:     p.cloud.Region(),
	}
	for k, v := range spec.Labels {
		labels[k] = v
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:              inst.Hostname,
			Labels:            labels,
			Annotations:       map[string]string{ImageIDAnnotation: spec.AMI.ID},
			CreationTimestamp: metav1.NewTime(created),
		},
		Spec: corev1.NodeSpec{ProviderID: inst.ProviderID, Taints: append([]corev1.Taint(nil), spec.Taints...)},
		Status: corev1.NodeStatus{
			Capacity:    it.Capacity(),
			Allocatable: it.Allocatable(),
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion: spec.AMI.KubeletVersion,
				//lint:ignore SA1019 deprecated upstream, but EKS nodes still report it and kube-proxy skew checks read it
				KubeProxyVersion: spec.AMI.KubeletVersion,
				OperatingSystem:  "linux",
				Architecture:     it.Arch,
			},
		},
	}
}
