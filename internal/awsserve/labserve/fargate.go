package labserve

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/twin/fargate"
	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// fargateCluster is the lab as EKS's Fargate scheduler sees it
// (fargate.Cluster): the twin's scheduler (semantics.md §E) runs over it,
// so that a pod a Fargate profile selects — a rollout restart's new pod —
// gets a new KWOK node of its own, named and labelled as EKS names and
// labels Fargate nodes, at the control plane's kubelet, and is bound to
// it; and a Fargate pod that goes takes its node with it. The lab has no
// admission webhook: materialize gives the profiles' workloads the
// fargate-scheduler already (materialize.FargateScheduler).
type fargateCluster struct {
	*Kube
	created, deleted []func(*corev1.Pod)
}

// newFargate runs the twin's Fargate scheduler, with the scenario's
// profiles, over the lab.
func newFargate(k *Kube, tw *twinbuild.Twin) (*fargateCluster, error) {
	c := &fargateCluster{Kube: k}
	f := fargate.New(tw.Engine, c, tw.Cloud, fargate.Options{Kubelet: tw.FargateKubelet})
	for _, p := range tw.Fargate.Profiles() {
		if err := f.AddProfile(p); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *fargateCluster) OnAdmit(func(*corev1.Pod) bool)    {}
func (c *fargateCluster) OnPodCreated(fn func(*corev1.Pod)) { c.created = append(c.created, fn) }
func (c *fargateCluster) OnPodDeleted(fn func(*corev1.Pod)) { c.deleted = append(c.deleted, fn) }

// Bind binds the pod through the binding subresource, as a scheduler does.
func (c *fargateCluster) Bind(namespace, name, node string) error {
	return c.cs.CoreV1().Pods(namespace).Bind(c.ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}, metav1.CreateOptions{})
}

// Pod reads a pod from the API server; nil if it is gone, or bound
// already — by materialize, which binds the scenario's Fargate pods to
// their materialized nodes while this scheduler may already see them
// pending: such a pod is not the scheduler's to start.
func (c *fargateCluster) Pod(namespace, name string) *corev1.Pod {
	p, err := c.cs.CoreV1().Pods(namespace).Get(c.ctx, name, metav1.GetOptions{})
	if err != nil || p.Spec.NodeName != "" {
		return nil
	}
	return p
}

// podCreated tells the scheduler of a pod waiting for it.
func (c *fargateCluster) podCreated(p *corev1.Pod) {
	if p.Spec.SchedulerName != fargate.SchedulerName || p.Spec.NodeName != "" {
		return
	}
	for _, fn := range c.created {
		fn(p)
	}
}

// podDeleted tells the scheduler a pod is gone. A Fargate node the
// scheduler did not start — the scenario's, materialized — goes with its
// pod too: the micro-VM lives and dies with it.
func (c *fargateCluster) podDeleted(ctx context.Context, p *corev1.Pod) {
	for _, fn := range c.deleted {
		fn(p)
	}
	if p.Spec.NodeName == "" {
		return
	}
	if n := c.Node(p.Spec.NodeName); n != nil && n.Labels[fargate.LabelComputeType] == fargate.ComputeTypeFargate {
		_ = c.RemoveNode(n.Name, "Fargate pod deleted")
	}
}
