package kube

import (
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// This file serves internal/kubeport/twinport, the twin's implementation
// of the Kubernetes port: the workloads as the API returns them (spec and
// status), and the kubelet's readiness verdict for the conformance suite.

// SetPodReady sets a Running pod's Ready condition, as its kubelet does
// when a readiness probe starts failing or passes again. From then on the
// pod's readiness is what the caller said: a Ready transition still pending
// from its startup is cancelled. The PDBs covering the pod see the change
// at once (the twin's disruption controller is instantaneous).
func (c *Cluster) SetPodReady(namespace, name string, ready bool) error {
	ps, ok := c.pods[string(c.podKey(namespace, name))]
	if !ok {
		return apierrors.NewNotFound(corev1.Resource("pods"), name)
	}
	if ps.deleting {
		return fmt.Errorf("pod %s/%s is terminating: only a Running pod that is not terminating has a readiness to set", namespace, name)
	}
	if ps.pod.Status.Phase != corev1.PodRunning {
		return fmt.Errorf("pod %s/%s is %s: only a Running pod has a readiness to set (wait until it runs)", namespace, name, ps.pod.Status.Phase)
	}
	for _, t := range ps.timers {
		t.Cancel()
	}
	ps.timers = nil
	if !ready {
		c.takeDown(ps, DropUnready, "SetPodReady")
	}
	c.setPodReady(ps, ready, c.eng.Now())
	return nil
}

// Deployments returns copies of the Deployments of a namespace ("" for
// all), sorted by namespace/name, with the status the deployment controller
// would write (sync.go calculateStatus).
func (c *Cluster) Deployments(namespace string) []*appsv1.Deployment {
	var out []*appsv1.Deployment
	for _, w := range c.workloadsOf("Deployment", namespace) {
		d := w.obj.(*appsv1.Deployment).DeepCopy()
		st := w.deploymentStatus()
		var total int32
		for _, rs := range w.revs {
			total += rs.replicas
		}
		d.Status = appsv1.DeploymentStatus{
			ObservedGeneration:  w.observed,
			Replicas:            st.replicas,
			UpdatedReplicas:     st.updated,
			ReadyReplicas:       st.ready,
			AvailableReplicas:   st.available,
			UnavailableReplicas: max(0, total-st.available),
		}
		out = append(out, d)
	}
	return out
}

// StatefulSets returns copies of the StatefulSets of a namespace ("" for
// all), sorted by namespace/name, with their status.
func (c *Cluster) StatefulSets(namespace string) []*appsv1.StatefulSet {
	var out []*appsv1.StatefulSet
	for _, w := range c.workloadsOf("StatefulSet", namespace) {
		s := w.obj.(*appsv1.StatefulSet).DeepCopy()
		st := w.statefulSetStatus()
		var available int32
		for _, ps := range w.activePods() {
			if ps.available {
				available++
			}
		}
		s.Status = appsv1.StatefulSetStatus{
			ObservedGeneration: w.observed,
			Replicas:           st.replicas,
			ReadyReplicas:      st.ready,
			CurrentReplicas:    st.current,
			UpdatedReplicas:    st.updated,
			AvailableReplicas:  available,
		}
		if w.cur != nil {
			s.Status.UpdateRevision = w.cur.name
		}
		if w.current != nil {
			s.Status.CurrentRevision = w.current.name
		}
		out = append(out, s)
	}
	return out
}

// DaemonSets returns copies of the DaemonSets of a namespace ("" for all),
// sorted by namespace/name, with the status daemon_controller.go
// updateDaemonSetStatus writes: per node that should run the daemon, its
// oldest pod there speaks for the node.
func (c *Cluster) DaemonSets(namespace string) []*appsv1.DaemonSet {
	var out []*appsv1.DaemonSet
	for _, w := range c.workloadsOf("DaemonSet", namespace) {
		d := w.obj.(*appsv1.DaemonSet).DeepCopy()
		st := c.daemonSetStatus(w)
		var current, ready int32
		for _, ns := range c.nodeList {
			if !w.daemonNodes[ns.node.Name] {
				continue
			}
			for _, ps := range w.daemonPods[ns.node.Name] {
				if ps.gone {
					continue
				}
				current++
				if ps.ready {
					ready++
				}
				break
			}
		}
		d.Status = appsv1.DaemonSetStatus{
			ObservedGeneration:     w.observed,
			DesiredNumberScheduled: st.desired,
			CurrentNumberScheduled: current,
			NumberReady:            ready,
			UpdatedNumberScheduled: st.updated,
			NumberAvailable:        st.available,
			NumberUnavailable:      st.desired - st.available,
		}
		out = append(out, d)
	}
	return out
}

// workloadsOf lists the workloads of a kind in a namespace ("" for all),
// sorted by namespace/name.
func (c *Cluster) workloadsOf(kind, namespace string) []*workload {
	var out []*workload
	for _, w := range c.workloadOrder {
		if w.kind == kind && (namespace == "" || w.namespace == namespace) {
			out = append(out, w)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].namespace != out[j].namespace {
			return out[i].namespace < out[j].namespace
		}
		return out[i].name < out[j].name
	})
	return out
}
