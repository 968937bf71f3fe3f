package insights

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNewVolumeFoldsUsers(t *testing.T) {
	sc := "gp3"
	got := NewVolume("orders", "data", "us-west-2a", &sc, []VolumeUser{
		{Pod: "orders/mysql-1", Node: "ip-b", Workload: "StatefulSet orders/mysql"},
		{Pod: "orders/mysql-0", Node: "ip-a", Workload: "StatefulSet orders/mysql"},
		{Pod: "orders/debug"},
	})
	want := Volume{Namespace: "orders", Claim: "data", StorageClass: "gp3", Zone: "us-west-2a",
		Pods: []string{"orders/debug", "orders/mysql-0", "orders/mysql-1"}, Nodes: []string{"ip-a", "ip-b"},
		Workloads: []string{"StatefulSet orders/mysql"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NewVolume = %+v, want %+v", got, want)
	}
}

func TestSortVolumesByNamespaceThenClaim(t *testing.T) {
	vs := []Volume{{Namespace: "b", Claim: "a"}, {Namespace: "a", Claim: "z"}, {Namespace: "a", Claim: "c"}}
	SortVolumes(vs)
	var got []string
	for _, v := range vs {
		got = append(got, v.Namespace+"/"+v.Claim)
	}
	if want := []string{"a/c", "a/z", "b/a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("SortVolumes order = %v, want %v", got, want)
	}
}

func TestKubeProxyTag(t *testing.T) {
	pod := func(ns, name, image string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: image}}}}
	}
	for _, tc := range []struct {
		pod  *corev1.Pod
		want string
	}{
		{pod("kube-system", "kube-proxy", "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/kube-proxy:v1.30.14-minimal-eksbuild.28"), "v1.30.14-minimal-eksbuild.28"},
		{pod("kube-system", "kube-proxy", "registry:5000/eks/kube-proxy@sha256:abc"), ""},
		{pod("kube-system", "kube-proxy", "registry:5000/eks/kube-proxy:v1.31.0@sha256:abc"), "v1.31.0"},
		{pod("default", "kube-proxy", "eks/kube-proxy:v1.30.0"), ""},
		{pod("kube-system", "coredns", "eks/coredns:v1.11.1"), ""},
	} {
		if got := KubeProxyTag(tc.pod); got != tc.want {
			t.Errorf("KubeProxyTag(%s) = %q, want %q", tc.pod.Spec.Containers[0].Image, got, tc.want)
		}
	}
}
