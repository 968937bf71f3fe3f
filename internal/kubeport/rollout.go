package kubeport

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
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
