package kube

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Rollouts: a Deployment, StatefulSet or DaemonSet whose pod template
// changes — through Apply of the changed object, or RolloutRestart —
// replaces its pods by its strategy (deployment.go, statefulset.go,
// daemonset.go). These are the kubectl rollout verbs around them.

// RestartedAtAnnotation is the pod-template annotation kubectl rollout
// restart sets to the time of the restart.
const RestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"

// rolloutResources are the kinds that roll out, by their resource name.
var rolloutResources = map[string]string{"Deployment": "deployments", "StatefulSet": "statefulsets", "DaemonSet": "daemonsets"}

// PodTemplate returns a copy of a workload's current pod template: the
// spec.template of a Deployment, StatefulSet or DaemonSet (what new pods
// are made from, mid-rollout too), or a bare pod's metadata and spec.
func (c *Cluster) PodTemplate(kind, namespace, name string) (*corev1.PodTemplateSpec, bool) {
	w, ok := c.workloads[kind+"/"+namespace+"/"+name]
	if !ok {
		return nil, false
	}
	return w.template.DeepCopy(), true
}

// RolloutRestart is kubectl rollout restart (kubectl polymorphichelpers
// objectRestarter): it sets the pod template's
// kubectl.kubernetes.io/restartedAt annotation to the current virtual time
// in RFC 3339, which rolls the workload out by its strategy. A paused
// Deployment is refused, as kubectl refuses it; a second restart within
// the same second changes nothing, as the same patch would.
func (c *Cluster) RolloutRestart(kind, namespace, name string) error {
	w, err := c.rolloutWorkload(kind, namespace, name)
	if err != nil {
		return err
	}
	if d, ok := w.obj.(*appsv1.Deployment); ok && d.Spec.Paused {
		return fmt.Errorf("deployments.apps %q can't restart paused deployment (run rollout resume first)", name)
	}
	t := *w.template.DeepCopy()
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[RestartedAtAnnotation] = c.eng.Now().Format(time.RFC3339)
	if apiequality.Semantic.DeepEqual(w.template, t) {
		return nil // the same template: nothing to roll out
	}
	c.setTemplate(w, t)
	w.bumpGeneration()
	w.kick()
	return nil
}

// RolloutStatus is kubectl rollout status without --watch (kubectl
// polymorphichelpers rollout_status.go: DeploymentStatusViewer,
// DaemonSetStatusViewer, StatefulSetStatusViewer): whether the rollout is
// done, and kubectl's message without its trailing newline, e.g.
// `Waiting for deployment "ui" rollout to finish: 1 of 3 updated replicas
// are available...` or `deployment "ui" successfully rolled out`. The
// errors are kubectl's: a Deployment that exceeded its
// progressDeadlineSeconds, or a DaemonSet or StatefulSet whose strategy is
// OnDelete (with done true).
func (c *Cluster) RolloutStatus(kind, namespace, name string) (done bool, message string, err error) {
	w, err := c.rolloutWorkload(kind, namespace, name)
	if err != nil {
		return false, "", err
	}
	switch kind {
	case "Deployment":
		return c.deploymentRolloutStatus(w)
	case "DaemonSet":
		return c.daemonSetRolloutStatus(w)
	}
	return c.statefulSetRolloutStatus(w)
}

func (c *Cluster) deploymentRolloutStatus(w *workload) (bool, string, error) {
	if w.generation > w.observed {
		return false, "Waiting for deployment spec update to be observed...", nil
	}
	if w.timedOut(c.eng.Now()) {
		return false, "", fmt.Errorf("deployment %q exceeded its progress deadline", w.name)
	}
	st := w.deploymentStatus()
	switch {
	case st.updated < w.replicas:
		return false, fmt.Sprintf("Waiting for deployment %q rollout to finish: %d out of %d new replicas have been updated...", w.name, st.updated, w.replicas), nil
	case st.replicas > st.updated:
		return false, fmt.Sprintf("Waiting for deployment %q rollout to finish: %d old replicas are pending termination...", w.name, st.replicas-st.updated), nil
	case st.available < st.updated:
		return false, fmt.Sprintf("Waiting for deployment %q rollout to finish: %d of %d updated replicas are available...", w.name, st.available, st.updated), nil
	}
	return true, fmt.Sprintf("deployment %q successfully rolled out", w.name), nil
}

func (c *Cluster) daemonSetRolloutStatus(w *workload) (bool, string, error) {
	if w.obj.(*appsv1.DaemonSet).Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType {
		return true, "", fmt.Errorf("rollout status is only available for %s strategy type", appsv1.RollingUpdateStatefulSetStrategyType)
	}
	if w.generation > w.observed {
		return false, "Waiting for daemon set spec update to be observed...", nil
	}
	st := c.daemonSetStatus(w)
	switch {
	case st.updated < st.desired:
		return false, fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...", w.name, st.updated, st.desired), nil
	case st.available < st.desired:
		return false, fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...", w.name, st.available, st.desired), nil
	}
	return true, fmt.Sprintf("daemon set %q successfully rolled out", w.name), nil
}

func (c *Cluster) statefulSetRolloutStatus(w *workload) (bool, string, error) {
	s := w.obj.(*appsv1.StatefulSet).Spec.UpdateStrategy
	if s.Type != appsv1.RollingUpdateStatefulSetStrategyType {
		return true, "", fmt.Errorf("rollout status is only available for %s strategy type", appsv1.RollingUpdateStatefulSetStrategyType)
	}
	if w.observed == 0 || w.generation > w.observed {
		return false, "Waiting for statefulset spec update to be observed...", nil
	}
	st := w.statefulSetStatus()
	if st.ready < w.replicas {
		return false, fmt.Sprintf("Waiting for %d pods to be ready...", w.replicas-st.ready), nil
	}
	if s.RollingUpdate != nil {
		if p := s.RollingUpdate.Partition; p != nil && st.updated < w.replicas-*p {
			return false, fmt.Sprintf("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...", st.updated, w.replicas-*p), nil
		}
		return true, fmt.Sprintf("partitioned roll out complete: %d new pods have been updated...", st.updated), nil
	}
	if w.cur != w.current {
		return false, fmt.Sprintf("waiting for statefulset rolling update to complete %d pods at revision %s...", st.updated, w.cur.name), nil
	}
	return true, fmt.Sprintf("statefulset rolling update complete %d pods at revision %s...", st.current, w.current.name), nil
}

// rolloutWorkload finds a Deployment, StatefulSet or DaemonSet, with the
// errors kubectl reports.
func (c *Cluster) rolloutWorkload(kind, namespace, name string) (*workload, error) {
	resource, ok := rolloutResources[kind]
	if !ok {
		return nil, fmt.Errorf("%s %s/%s: rollouts are not supported for kind %q (Deployment, StatefulSet and DaemonSet roll out)", kind, namespace, name, kind)
	}
	w, ok := c.workloads[kind+"/"+namespace+"/"+name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: appsv1.GroupName, Resource: resource}, name)
	}
	return w, nil
}
