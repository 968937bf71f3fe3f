// Package labserve puts the twin's EKS services in front of a lab's real
// kube-apiserver: eks.ControlPlane, mng.Service and worker.Pool run
// unchanged on a simulation engine advanced with the wall clock, and what
// they do to Kubernetes — cordons, evictions, Node objects — goes to the
// API server through client-go. Drains therefore meet the real Eviction API
// with real PodDisruptionBudgets, and the real scheduler places the evicted
// pods' replacements.
package labserve

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/ladder-eks/ladder/internal/eviction"
	"github.com/ladder-eks/ladder/internal/materialize"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/mng"
	"github.com/ladder-eks/ladder/internal/twin/worker"
)

// Kube is the lab's body for the managed node groups and the worker pool:
// each call is one synchronous request to the API server (the serve loop
// holds one lock, and the lab is small).
type Kube struct {
	ctx  context.Context
	cs   kubernetes.Interface
	opts kube.Options
	// podHooks are told the node a pod left; whoever watches the lab's pods
	// calls PodChanged.
	podHooks []func(node string)
	// lock runs a function holding the endpoints' lock, for a drain that
	// reports back from its own goroutine; timeScale is theirs too.
	lock      func(func())
	timeScale float64
}

var (
	_ mng.Kube    = (*Kube)(nil)
	_ worker.Kube = (*Kube)(nil)
)

// NewKube returns the body over a clientset. opts are the twin cluster's
// options, of which mng reads the zones.
func NewKube(ctx context.Context, cs kubernetes.Interface, opts kube.Options) *Kube {
	return &Kube{ctx: ctx, cs: cs, opts: opts}
}

// Options are the cluster's options the body was built with.
func (k *Kube) Options() kube.Options { return k.opts }

// OnPodChange registers fn to be told the node a pod left or joined.
func (k *Kube) OnPodChange(fn func(node string)) { k.podHooks = append(k.podHooks, fn) }

// PodChanged tells the registered hooks a pod left or joined node.
func (k *Kube) PodChanged(node string) {
	for _, fn := range k.podHooks {
		fn(node)
	}
}

// Node returns the node, or nil if the API server has none by that name.
func (k *Kube) Node(name string) *corev1.Node {
	n, err := k.cs.CoreV1().Nodes().Get(k.ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return n
}

// Kubelets returns every node's kubelet version by node name, for the
// control plane's update precondition; nil if the nodes cannot be listed.
func (k *Kube) Kubelets() map[string]string {
	list, err := k.cs.CoreV1().Nodes().List(k.ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	out := make(map[string]string, len(list.Items))
	for _, n := range list.Items {
		out[n.Name] = n.Status.NodeInfo.KubeletVersion
	}
	return out
}

// PodsOnNode returns the pods bound to node that are not yet gone, by
// namespace and name.
func (k *Kube) PodsOnNode(node string) []*corev1.Pod {
	list, err := k.cs.CoreV1().Pods(metav1.NamespaceAll).List(k.ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
	})
	if err != nil {
		return nil
	}
	var out []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		// A client that ignores field selectors (a fake) still gets
		// only the node's pods.
		if p.Spec.NodeName == node {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *corev1.Pod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// UpdateNode reads, mutates and writes a node, again on a conflict.
func (k *Kube) UpdateNode(name string, mutate func(*corev1.Node)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := k.cs.CoreV1().Nodes().Get(k.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(n)
		_, err = k.cs.CoreV1().Nodes().Update(k.ctx, n, metav1.UpdateOptions{FieldManager: materialize.FieldManager})
		return err
	})
}

// Cordon marks a node unschedulable, as kubectl cordon does; the real node
// lifecycle controller adds the node.kubernetes.io/unschedulable taint.
func (k *Kube) Cordon(name string) error {
	return k.UpdateNode(name, func(n *corev1.Node) { n.Spec.Unschedulable = true })
}

// Evict posts a policy/v1 Eviction. The API server's refusal is returned as
// client-go gives it, an *apierrors.StatusError (429 with the budget's
// DisruptionBudget cause, 500 for a pod under two budgets), the same type
// and shape the twin's cluster returns, so mng records the same blocked
// outcome and eviction.BlockingMessage the same message (semantics.md §D.1).
func (k *Kube) Evict(namespace, name string) error {
	return k.cs.PolicyV1().Evictions(namespace).Evict(k.ctx, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
	})
}

// DeletePod deletes a pod without the Eviction API. by is recorded only by
// the twin; the API server has no field for it.
func (k *Kube) DeletePod(namespace, name string, grace *int64, by string) error {
	return k.cs.CoreV1().Pods(namespace).Delete(k.ctx, name, metav1.DeleteOptions{GracePeriodSeconds: grace})
}

// PDBsForPod returns the budgets in the pod's namespace that select it, by
// the eviction subresource's own matching (eviction.MatchingPDBs,
// semantics.md §D.1): an empty selector selects every pod of the namespace.
func (k *Kube) PDBsForPod(namespace, name string) []*policyv1.PodDisruptionBudget {
	pod, err := k.cs.CoreV1().Pods(namespace).Get(k.ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	list, err := k.cs.PolicyV1().PodDisruptionBudgets(namespace).List(k.ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	pdbs := make([]*policyv1.PodDisruptionBudget, len(list.Items))
	for i := range list.Items {
		pdbs[i] = &list.Items[i]
	}
	out := eviction.MatchingPDBs(pod, pdbs)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// AddNode creates the Node a new instance's kubelet registers, shaped as
// materialize shapes the scenario's nodes, for KWOK to manage. ready is
// KWOK's to report: its node-initialize stage turns the node Ready.
func (k *Kube) AddNode(node *corev1.Node, ready bool) error {
	_, err := k.cs.CoreV1().Nodes().Create(k.ctx, materialize.KWOKNode(node), metav1.CreateOptions{FieldManager: materialize.FieldManager})
	return err
}

// SetNodeReady(false) is a terminating instance's kubelet going silent: the
// node leaves KWOK's management, so KWOK does not report it Ready again, and
// its Ready condition turns False. Ready again is KWOK's to report, by
// putting the node back under its management.
func (k *Kube) SetNodeReady(name string, ready bool) error {
	if ready {
		return k.UpdateNode(name, func(n *corev1.Node) {
			if n.Annotations == nil {
				n.Annotations = map[string]string{}
			}
			n.Annotations[materialize.KwokAnnotation] = materialize.KwokValue
		})
	}
	if err := k.UpdateNode(name, func(n *corev1.Node) { delete(n.Annotations, materialize.KwokAnnotation) }); err != nil {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := k.cs.CoreV1().Nodes().Get(k.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		setCondition(n, corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse,
			Reason: "KubeletNotReady", Message: "instance shutting down", LastHeartbeatTime: now, LastTransitionTime: now})
		_, err = k.cs.CoreV1().Nodes().UpdateStatus(k.ctx, n, metav1.UpdateOptions{FieldManager: materialize.FieldManager})
		return err
	})
}

// RemoveNode deletes the Node; the pod garbage collector deletes the pods
// still bound to it. reason is recorded only by the twin.
func (k *Kube) RemoveNode(name, reason string) error {
	err := k.cs.CoreV1().Nodes().Delete(k.ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete node/%s: %w", name, err)
	}
	return nil
}

func setCondition(n *corev1.Node, c corev1.NodeCondition) {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == c.Type {
			n.Status.Conditions[i] = c
			return
		}
	}
	n.Status.Conditions = append(n.Status.Conditions, c)
}
