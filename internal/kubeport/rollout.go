package kubeport

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Workload names a Deployment, StatefulSet or DaemonSet.
type Workload struct {
	Kind, Namespace, Name string
}

func (w Workload) String() string {
	return fmt.Sprintf("%s %s/%s", strings.ToLower(w.Kind), w.Namespace, w.Name)
}

// RolloutsComplete holds when kubectl rollout status says every workload
// has rolled out. A workload that is missing, or whose status kubectl
// cannot tell (an OnDelete strategy), keeps the gate closed, as a
// rollout status loop would keep failing.
type RolloutsComplete struct {
	Workloads []Workload
}

func (g RolloutsComplete) String() string {
	var names []string
	for _, w := range g.Workloads {
		names = append(names, w.String())
	}
	return "rollout of " + strings.Join(names, ", ")
}

// Condition reads each workload through the port and applies kubectl
// rollout status's rules (k8s.io/kubectl/pkg/polymorphichelpers,
// rollout_status.go: DeploymentStatusViewer, DaemonSetStatusViewer,
// StatefulSetStatusViewer) to its status. A workload whose status kubectl
// cannot tell (an OnDelete strategy) counts as not rolled out.
func (g RolloutsComplete) Condition(p Port) Condition {
	return func(ctx context.Context) (bool, error) {
		for _, w := range g.Workloads {
			done, err := rolledOut(ctx, p, w)
			if err != nil || !done {
				return false, err
			}
		}
		return true, nil
	}
}

func rolledOut(ctx context.Context, p Port, w Workload) (bool, error) {
	switch w.Kind {
	case "Deployment":
		list, err := p.ListDeployments(ctx, w.Namespace)
		d := find(list, w.Name)
		if err != nil || d == nil {
			return false, err
		}
		st := d.Status
		return d.Generation <= st.ObservedGeneration && !timedOut(d) &&
			(d.Spec.Replicas == nil || st.UpdatedReplicas >= *d.Spec.Replicas) &&
			st.Replicas <= st.UpdatedReplicas && st.AvailableReplicas >= st.UpdatedReplicas, nil
	case "DaemonSet":
		list, err := p.ListDaemonSets(ctx, w.Namespace)
		ds := find(list, w.Name)
		if err != nil || ds == nil {
			return false, err
		}
		st := ds.Status
		return ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType && ds.Generation <= st.ObservedGeneration &&
			st.UpdatedNumberScheduled >= st.DesiredNumberScheduled && st.NumberAvailable >= st.DesiredNumberScheduled, nil
	case "StatefulSet":
		list, err := p.ListStatefulSets(ctx, w.Namespace)
		sts := find(list, w.Name)
		if err != nil || sts == nil {
			return false, err
		}
		st, spec := sts.Status, sts.Spec
		if spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType || st.ObservedGeneration == 0 || sts.Generation > st.ObservedGeneration {
			return false, nil
		}
		if spec.Replicas != nil && st.ReadyReplicas < *spec.Replicas {
			return false, nil
		}
		if ru := spec.UpdateStrategy.RollingUpdate; ru != nil {
			return spec.Replicas == nil || ru.Partition == nil || st.UpdatedReplicas >= *spec.Replicas-*ru.Partition, nil
		}
		return st.UpdateRevision == st.CurrentRevision, nil
	}
	return false, fmt.Errorf("%s: rollouts are not supported for kind %q (Deployment, StatefulSet and DaemonSet roll out)", w, w.Kind)
}

// timedOut is a Deployment whose Progressing condition says
// ProgressDeadlineExceeded.
func timedOut(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing {
			return c.Reason == "ProgressDeadlineExceeded"
		}
	}
	return false
}

func find[T any, PT interface {
	*T
	GetName() string
}](list []T, name string) PT {
	for i := range list {
		if PT(&list[i]).GetName() == name {
			return PT(&list[i])
		}
	}
	return nil
}

// PodTemplate is a workload's pod template as the API stores it, nil when
// there is no such workload.
func PodTemplate(ctx context.Context, p Port, w Workload) (*corev1.PodTemplateSpec, error) {
	switch w.Kind {
	case "Deployment":
		list, err := p.ListDeployments(ctx, w.Namespace)
		if d := find(list, w.Name); d != nil {
			return &d.Spec.Template, err
		}
		return nil, err
	case "StatefulSet":
		list, err := p.ListStatefulSets(ctx, w.Namespace)
		if sts := find(list, w.Name); sts != nil {
			return &sts.Spec.Template, err
		}
		return nil, err
	case "DaemonSet":
		list, err := p.ListDaemonSets(ctx, w.Namespace)
		if ds := find(list, w.Name); ds != nil {
			return &ds.Spec.Template, err
		}
		return nil, err
	}
	return nil, fmt.Errorf("%s: %q is not a workload kind (Deployment, StatefulSet, DaemonSet)", w, w.Kind)
}

// RestartedAtAnnotation is the pod-template annotation kubectl rollout
// restart sets to the time of the restart.
const RestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"

// RolloutRestart is kubectl rollout restart of a workload
// (k8s.io/kubectl/pkg/polymorphichelpers objectRestarter, cmd/rollout
// rollout_restart.go): the pod template's restartedAt annotation set to
// the port's clock in RFC 3339, sent as a strategic merge patch, which
// rolls the workload out by its strategy. A paused Deployment is refused,
// as kubectl refuses it. A second restart within the same second changes
// nothing (kubectl finds an empty patch and says so; the template stays
// the same either way).
func RolloutRestart(ctx context.Context, p Port, w Workload) error {
	at := p.Now().Format(time.RFC3339)
	var t *corev1.PodTemplateSpec
	switch w.Kind {
	case "Deployment":
		list, err := p.ListDeployments(ctx, w.Namespace)
		if err != nil {
			return err
		}
		d := find(list, w.Name)
		if d == nil {
			return apierrors.NewNotFound(appsv1.Resource("deployments"), w.Name)
		}
		if d.Spec.Paused {
			return fmt.Errorf("deployments.apps %q can't restart paused deployment (run rollout resume first)", w.Name)
		}
		t = &d.Spec.Template
	case "StatefulSet", "DaemonSet":
		var err error
		if t, err = PodTemplate(ctx, p, w); err != nil {
			return err
		}
		if t == nil {
			return apierrors.NewNotFound(appsv1.Resource(strings.ToLower(w.Kind)+"s"), w.Name)
		}
	default:
		return fmt.Errorf("%s: rollouts are not supported for kind %q (Deployment, StatefulSet and DaemonSet roll out)", w, w.Kind)
	}
	if t.Annotations[RestartedAtAnnotation] == at {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{RestartedAtAnnotation: at}}}}})
	return PatchWorkload(ctx, p, w, types.StrategicMergePatchType, patch)
}

// PatchWorkload sends a patch to a Deployment, StatefulSet or DaemonSet
// by its kind.
func PatchWorkload(ctx context.Context, p Port, w Workload, pt types.PatchType, data []byte) error {
	var err error
	switch w.Kind {
	case "Deployment":
		_, err = p.PatchDeployment(ctx, w.Namespace, w.Name, pt, data)
	case "StatefulSet":
		_, err = p.PatchStatefulSet(ctx, w.Namespace, w.Name, pt, data)
	case "DaemonSet":
		_, err = p.PatchDaemonSet(ctx, w.Namespace, w.Name, pt, data)
	default:
		err = fmt.Errorf("%s: %q is not a workload kind (Deployment, StatefulSet, DaemonSet)", w, w.Kind)
	}
	return err
}

// ControllerOf is the workload a pod belongs to: the StatefulSet or
// DaemonSet its controller reference names, or the Deployment of its
// ReplicaSet. The deployment controller names a ReplicaSet
// <deployment>-<pod-template-hash> and labels its pods with that hash
// (pkg/controller/deployment sync.go getNewReplicaSet), so the Deployment
// is read off the pod without a request for the ReplicaSet. false for a
// pod with no controller, or one of another kind (a Job, a bare
// ReplicaSet).
func ControllerOf(pod *corev1.Pod) (Workload, bool) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return Workload{}, false
	}
	switch ref.Kind {
	case "StatefulSet", "DaemonSet":
		return Workload{Kind: ref.Kind, Namespace: pod.Namespace, Name: ref.Name}, true
	case "ReplicaSet":
		hash := pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
		if name, ok := strings.CutSuffix(ref.Name, "-"+hash); ok && hash != "" {
			return Workload{Kind: "Deployment", Namespace: pod.Namespace, Name: name}, true
		}
	}
	return Workload{}, false
}
