package labserve

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeport/live"
	"github.com/ladder-eks/ladder/internal/materialize"
	"github.com/ladder-eks/ladder/internal/twin/eks"
)

// Add-ons on the lab: an accepted UpdateAddon (eks.ApplyAddon) writes the
// new images into the add-on's DaemonSets and Deployments on the API
// server, the real controllers roll them out on the KWOK nodes, and the
// update is Successful once kubectl rollout status would say so.

var _ eks.AddonKube = (*Kube)(nil)

// UpdatePodTemplate implements eks.AddonKube: read, mutate and write the
// workload, again on a conflict.
func (k *Kube) UpdatePodTemplate(kind, namespace, name string, mutate func(*corev1.PodTemplateSpec) bool) error {
	apps := k.cs.AppsV1()
	switch kind {
	case "Deployment":
		return updateTemplate(k, apps.Deployments(namespace), name, func(d *appsv1.Deployment) *corev1.PodTemplateSpec { return &d.Spec.Template }, mutate)
	case "DaemonSet":
		return updateTemplate(k, apps.DaemonSets(namespace), name, func(d *appsv1.DaemonSet) *corev1.PodTemplateSpec { return &d.Spec.Template }, mutate)
	case "StatefulSet":
		return updateTemplate(k, apps.StatefulSets(namespace), name, func(s *appsv1.StatefulSet) *corev1.PodTemplateSpec { return &s.Spec.Template }, mutate)
	}
	return fmt.Errorf("%s %s/%s: not a workload with a pod template", kind, namespace, name)
}

// workloadClient is the typed client of one workload kind.
type workloadClient[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

func updateTemplate[T any](k *Kube, c workloadClient[T], name string, template func(T) *corev1.PodTemplateSpec, mutate func(*corev1.PodTemplateSpec) bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := c.Get(k.ctx, name, metav1.GetOptions{})
		if err != nil || !mutate(template(obj)) {
			return err
		}
		_, err = c.Update(k.ctx, obj, metav1.UpdateOptions{FieldManager: materialize.FieldManager})
		return err
	})
}

// RolledOut implements eks.AddonKube with kubectl rollout status's rules
// (kubeport.RolloutsComplete) on what the API server reports.
func (k *Kube) RolledOut(kind, namespace, name string) bool {
	w := kubeport.Workload{Kind: kind, Namespace: namespace, Name: name}
	done, err := kubeport.RolloutsComplete{Workloads: []kubeport.Workload{w}}.Condition(live.New(k.cs, live.Options{}))(k.ctx)
	return err == nil && done
}
