package kube

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Hooks for components outside the twin's own controllers — an external
// scheduler such as EKS Fargate's, which a mutating webhook selects by
// setting spec.schedulerName, and which binds each pod to a node of its own.
//
// Hooks run synchronously, inside whichever controller pass creates or
// removes the pod. A hook may read the cluster and call Bind; anything that
// takes time or changes other objects belongs on the engine (eng.After),
// as a real component reacts to a watch event after the API call returned.
// Hooks run in registration order.

// OnAdmit registers a mutating admission hook: fn sees, and may change,
// every pod the cluster creates (controllers' pods and applied bare pods)
// after the API server's defaulting (schedulerName, grace period) and
// before the pod is stored and scheduled — where a mutating admission
// webhook runs — and reports whether it changed the pod (a pod no hook
// changed shares its template's requests and scheduling signature). A pod
// whose schedulerName a hook sets to another scheduler is left Pending by
// the default scheduler until Bind.
func (c *Cluster) OnAdmit(fn func(pod *corev1.Pod) (changed bool)) {
	c.admitHooks = append(c.admitHooks, fn)
}

// OnPodCreated registers fn to run after a pod is stored (and bound, when
// it named its node). fn must not keep the pod beyond read-only use.
func (c *Cluster) OnPodCreated(fn func(pod *corev1.Pod)) {
	c.createdHooks = append(c.createdHooks, fn)
}

// OnPodDeleted registers fn to run after a pod object is removed from the
// store — when it exited after a graceful deletion, was deleted while
// unbound, or went with its node — not when it merely starts terminating.
func (c *Cluster) OnPodDeleted(fn func(pod *corev1.Pod)) {
	c.deletedHooks = append(c.deletedHooks, fn)
}

// OnPodUpdate registers fn to run after a stored pod changes in a way a
// watch on pods would show: bound to a node, Ready or not, terminating.
// With OnPodCreated and OnPodDeleted it is every change of a pod, for a
// recorder; fn must not keep the pod beyond read-only use nor change the
// cluster.
func (c *Cluster) OnPodUpdate(fn func(pod *corev1.Pod)) {
	c.updatedHooks = append(c.updatedHooks, fn)
}

// admit runs the admission hooks on a new pod and reports whether any
// changed it.
func (c *Cluster) admit(pod *corev1.Pod) bool {
	changed := false
	for _, h := range c.admitHooks {
		if h(pod) {
			changed = true
		}
	}
	if len(c.admitHooks) > 0 && pod.Spec.SchedulerName == "" {
		pod.Spec.SchedulerName = corev1.DefaultSchedulerName
	}
	return changed
}

func (c *Cluster) podCreated(ps *podState) {
	for _, h := range c.createdHooks {
		h(ps.pod)
	}
}

func (c *Cluster) podUpdated(ps *podState) {
	for _, h := range c.updatedHooks {
		h(ps.pod)
	}
}

func (c *Cluster) podDeleted(ps *podState) {
	for _, h := range c.deletedHooks {
		h(ps.pod)
	}
}

// sameSchedulingConstraints reports whether an admitted pod kept the
// template's tolerations, node selector and required node affinity — the
// fields its scheduling signature is made of.
func sameSchedulingConstraints(pod, tmpl *corev1.PodSpec) bool {
	return apiequality.Semantic.DeepEqual(pod.Tolerations, tmpl.Tolerations) &&
		apiequality.Semantic.DeepEqual(pod.NodeSelector, tmpl.NodeSelector) &&
		apiequality.Semantic.DeepEqual(pod.Affinity, tmpl.Affinity)
}

// Bind is POST pods/NAME/binding, what a scheduler calls once it picked a
// node: the pod is assigned to the node and starts there as a pod the
// default scheduler bound does. As the API server does
// (pkg/registry/core/pod/storage BindingREST.setPodHostAndAnnotations), it
// refuses with 409 Conflict a pod being deleted or already bound, and 404
// for a missing pod. Unlike the API server, which does not look the node
// up (the kubelet would reject the pod), it also refuses a missing node
// with 404. The kubelet's admission (does the pod fit?) is not modelled.
func (c *Cluster) Bind(namespace, name, node string) error {
	ps, ok := c.pods[string(c.podKey(namespace, name))]
	if !ok {
		return apierrors.NewNotFound(corev1.Resource("pods"), name)
	}
	if ps.deleting {
		return apierrors.NewConflict(corev1.Resource("pods/binding"), name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", name))
	}
	if ps.node != nil {
		return apierrors.NewConflict(corev1.Resource("pods/binding"), name, fmt.Errorf("pod %v is already assigned to node %q", name, ps.pod.Spec.NodeName))
	}
	ns, ok := c.nodes[node]
	if !ok {
		return apierrors.NewNotFound(corev1.Resource("nodes"), node)
	}
	c.bind(ps, ns)
	return nil
}
