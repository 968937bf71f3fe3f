package twinport

import (
	"context"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ladder-eks/ladder/internal/kubeport"
)

// Workload patches: the patched object is applied to the twin as the API
// server stores an update, which the twin defaults and validates (422
// Invalid) as the API server does; a changed pod template rolls the
// workload out there by its strategy, as a changed manifest does.

// PatchDeployment implements kubeport.Port.
func (p *Port) PatchDeployment(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) (*appsv1.Deployment, error) {
	return patchWorkload(p, "deployments", namespace, name, pt, data, p.c.Deployments, func(d *appsv1.Deployment) { d.Status = appsv1.DeploymentStatus{} })
}

// PatchStatefulSet implements kubeport.Port.
func (p *Port) PatchStatefulSet(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) (*appsv1.StatefulSet, error) {
	return patchWorkload(p, "statefulsets", namespace, name, pt, data, p.c.StatefulSets, func(s *appsv1.StatefulSet) { s.Status = appsv1.StatefulSetStatus{} })
}

// PatchDaemonSet implements kubeport.Port.
func (p *Port) PatchDaemonSet(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) (*appsv1.DaemonSet, error) {
	return patchWorkload(p, "daemonsets", namespace, name, pt, data, p.c.DaemonSets, func(d *appsv1.DaemonSet) { d.Status = appsv1.DaemonSetStatus{} })
}

// patchWorkload finds the workload in its namespace's list, patches it
// (kubeport.PatchObject), drops the status a patch does not write, applies
// it to the twin and reads it back with its status.
func patchWorkload[T any, PT interface {
	*T
	metav1.Object
}](p *Port, resource, namespace, name string, pt types.PatchType, data []byte, list func(string) []*T, clearStatus func(PT)) (*T, error) {
	old := findIn[T, PT](list(namespace), name)
	if old == nil {
		return nil, apierrors.NewNotFound(appsv1.Resource(resource), name)
	}
	patched := PT(new(T))
	if err := kubeport.PatchObject(name, pt, data, PT(old), patched); err != nil {
		return nil, err
	}
	if patched.GetNamespace() != namespace {
		return nil, apierrors.NewBadRequest("the namespace of the object (" + patched.GetNamespace() + ") does not match the namespace on the URL (" + namespace + ")")
	}
	clearStatus(patched)
	if err := p.c.Apply(patched); err != nil {
		return nil, err
	}
	return findIn[T, PT](list(namespace), name), nil
}

// UpdateScale implements kubeport.Port: the twin's Deployment or
// StatefulSet takes the count, as its scale subresource's PUT sets
// spec.replicas.
func (p *Port) UpdateScale(ctx context.Context, w kubeport.Workload, replicas int32) (*autoscalingv1.Scale, error) {
	if w.Kind != "Deployment" && w.Kind != "StatefulSet" {
		return nil, apierrors.NewNotFound(appsv1.Resource(strings.ToLower(w.Kind)+"s/scale"), w.Name)
	}
	if t, err := kubeport.PodTemplate(ctx, p, w); err != nil || t == nil {
		return nil, apierrors.NewNotFound(appsv1.Resource(strings.ToLower(w.Kind)+"s"), w.Name)
	}
	if replicas < 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: autoscalingv1.GroupName, Kind: "Scale"}, w.Name,
			field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), replicas, "must be greater than or equal to 0")})
	}
	if err := p.c.Scale(w.Kind, w.Namespace, w.Name, replicas); err != nil {
		return nil, err
	}
	return &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace}, Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}, nil
}

func findIn[T any, PT interface {
	*T
	metav1.Object
}](items []*T, name string) *T {
	for _, v := range items {
		if PT(v).GetName() == name {
			return v
		}
	}
	return nil
}
