package drain

import (
	corev1 "k8s.io/api/core/v1"
	kdrain "k8s.io/kubectl/pkg/drain"
)

// List is what the filters decided: every pod of the node with its status,
// in list order. It is k8s.io/kubectl/pkg/drain.PodDeleteList with its items
// exported (upstream keeps them private and fills them only inside
// GetPodsForDeletion, which needs a clientset); Pods and Warnings behave as
// upstream's.
type List struct {
	Items []kdrain.PodDelete
}

// Pods returns the pods to evict or delete, as upstream's Pods() does.
func (l *List) Pods() []corev1.Pod {
	pods := []corev1.Pod{}
	if l == nil {
		return pods
	}
	for _, i := range l.Items {
		if i.Status.Delete {
			pods = append(pods, i.Pod)
		}
	}
	return pods
}

// Warnings is upstream's Warnings() with messages in order of first
// appearance instead of map order: "msg: ns/a, ns/b; msg2: ns/c".
func (l *List) Warnings() string {
	if l == nil {
		return ""
	}
	return StableWarnings(l.Items)
}
