package kubeport

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestControllerOf: a pod's workload is its controller's StatefulSet or
// DaemonSet, or the Deployment whose ReplicaSet is named
// <deployment>-<pod-template-hash>; anything else has none.
func TestControllerOf(t *testing.T) {
	yes := true
	pod := func(kind, owner, hash string, controller bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "p"}}
		if hash != "" {
			p.Labels = map[string]string{"pod-template-hash": hash}
		}
		if kind != "" {
			ref := metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: owner}
			if controller {
				ref.Controller = &yes
			}
			p.OwnerReferences = []metav1.OwnerReference{ref}
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want Workload
		ok   bool
	}{
		{"a Deployment's pod", pod("ReplicaSet", "ui-web-7d9c8b6f5", "7d9c8b6f5", true), Workload{"Deployment", "shop", "ui-web"}, true},
		{"a StatefulSet's pod", pod("StatefulSet", "db", "", true), Workload{"StatefulSet", "shop", "db"}, true},
		{"a DaemonSet's pod", pod("DaemonSet", "agent", "", true), Workload{"DaemonSet", "shop", "agent"}, true},
		{"a ReplicaSet of no Deployment (no hash label)", pod("ReplicaSet", "bare-rs", "", true), Workload{}, false},
		{"a ReplicaSet not named after the hash", pod("ReplicaSet", "ui-web-other", "7d9c8b6f5", true), Workload{}, false},
		{"an owner that is not the controller", pod("StatefulSet", "db", "", false), Workload{}, false},
		{"a Job's pod", pod("Job", "migrate", "", true), Workload{}, false},
		{"a bare pod", pod("", "", "", false), Workload{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ControllerOf(tc.pod)
			if got != tc.want || ok != tc.ok {
				t.Errorf("ControllerOf = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
