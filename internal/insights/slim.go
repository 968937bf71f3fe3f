package insights

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// slimWorkload drops from a decoded workload's pod template the container
// fields no check reads — resources, ports, environment, mounts, commands,
// liveness and startup probes, lifecycle hooks, security contexts — keeping
// each container's name, image and readinessProbe. They are most of what a
// Deployment costs in memory once decoded (its resources alone are a map of
// quantities), and a repository holds tens of thousands of Deployments.
// The pod-level fields (labels, affinity, spread constraints, node
// selector, tolerations, volumes) stay. A check that needs another
// container field adds it here; the check tests decode through this, so
// they see what a scan of a repository sees.
func slimWorkload(typed any) {
	switch t := typed.(type) {
	case *appsv1.Deployment:
		slimPodSpec(&t.Spec.Template.Spec)
	case *appsv1.StatefulSet:
		slimPodSpec(&t.Spec.Template.Spec)
	case *appsv1.ReplicaSet:
		slimPodSpec(&t.Spec.Template.Spec)
	case *appsv1.DaemonSet:
		slimPodSpec(&t.Spec.Template.Spec)
	case *corev1.Pod:
		slimPodSpec(&t.Spec)
	}
}

func slimPodSpec(s *corev1.PodSpec) {
	slimContainers(s.InitContainers)
	slimContainers(s.Containers)
}

func slimContainers(cs []corev1.Container) {
	for i := range cs {
		c := &cs[i]
		*c = corev1.Container{Name: c.Name, Image: c.Image, ReadinessProbe: c.ReadinessProbe}
	}
}
