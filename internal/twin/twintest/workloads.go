package twintest

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The workloads the twins' tests run, in the upstream Go types.

// PodOption changes a workload's pod template.
type PodOption func(*corev1.PodTemplateSpec)

// PodSpec is one busybox container requesting cpu and 128Mi.
func PodSpec(cpu string) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", Image: "public.ecr.aws/docker/library/busybox:1",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(cpu),
			corev1.ResourceMemory: resource.MustParse("128Mi"),
		}},
	}}}
}

// Deployment is a Deployment in namespace default selecting app=name,
// whose pods are PodSpec(cpu) changed by opts.
func Deployment(name string, replicas int32, cpu string, opts ...PodOption) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: PodSpec(cpu)},
		},
	}
	for _, o := range opts {
		o(&d.Spec.Template)
	}
	return d
}

// Pod is a bare pod in namespace default labelled app=name.
func Pod(name, cpu string, opts ...PodOption) *corev1.Pod {
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}}, Spec: PodSpec(cpu)}
	for _, o := range opts {
		o(&tmpl)
	}
	tmpl.ObjectMeta.Name, tmpl.ObjectMeta.Namespace = name, metav1.NamespaceDefault
	return &corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
}
