package drain

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kdrain "k8s.io/kubectl/pkg/drain"
)

// One answer to "is this a DaemonSet pod": the controller reference is
// apps/v1 DaemonSet, as kubectl's daemonSetFilter and Karpenter's
// IsOwnedByDaemonSet require (semantics.md §D.3).
func TestIsDaemonSetPod(t *testing.T) {
	cases := []struct {
		name string
		pod  corev1.Pod
		want bool
	}{
		{"apps/v1 DaemonSet controller", mkPod("kube-system", "aws-node-x", daemonSet("aws-node")), true},
		{"ReplicaSet controller", mkPod("default", "web-1", replicaSet("web-abc")), false},
		{"no owner", mkPod("default", "bare"), false},
		{"DaemonSet owner that is not the controller", mkPod("default", "adopted", nonControllerOwner("DaemonSet", "ds")), false},
		{"DaemonSet of another API group version", mkPod("default", "old", owner("extensions/v1beta1", "DaemonSet", "ds")), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsDaemonSetPod(&tc.pod); got != tc.want {
				t.Fatalf("IsDaemonSetPod = %v, want %v", got, tc.want)
			}
		})
	}
}

// The chains the mechanisms build (chain.go's Select doc) over one node's
// pods: which pods each one moves.
func TestSelectChains(t *testing.T) {
	now := time.Date(2026, 3, 30, 9, 0, 0, 0, time.UTC)
	pods := []corev1.Pod{
		mkPod("default", "web-1", replicaSet("web-abc")),
		mkPod("default", "web-2", replicaSet("web-abc"), deletingSince(now, time.Second)),
		mkPod("default", "job-done", replicaSet("job"), phase(corev1.PodSucceeded)),
		mkPod("kube-system", "aws-node-x", daemonSet("aws-node")),
		mkPod("kube-system", "static-x", mirror),
		mkPod("default", "bare"),
	}
	ptrs := make([]*corev1.Pod, len(pods))
	for i := range pods {
		ptrs[i] = &pods[i]
	}
	cases := []struct {
		name  string
		chain []Filter
		want  []string
	}{
		{"no filter: every pod", nil, []string{"web-1", "web-2", "job-done", "aws-node-x", "static-x", "bare"}},
		{"EKS managed node group: terminating pods count until gone",
			[]Filter{SkipTerminal, SkipMirror, SkipDaemonSet}, []string{"web-1", "web-2", "bare"}},
		{"pods that need a new home", []Filter{SkipTerminating, SkipDaemonSet, SkipMirror, SkipTerminal}, []string{"web-1", "bare"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, p := range Select(ptrs, tc.chain...) {
				got = append(got, p.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Select = %v, want %v", got, tc.want)
			}
		})
	}
}

// Decide keeps the status of the first filter that does not delete the
// pod, as GetPodsForDeletion does.
func TestDecideStopsAtTheFirstSkip(t *testing.T) {
	pod := mkPod("kube-system", "aws-node-x", daemonSet("aws-node"), phase(corev1.PodFailed))
	called := false
	never := func(*corev1.Pod) kdrain.PodDeleteStatus { called = true; return kdrain.MakePodDeleteStatusOkay() }
	got := Decide(&pod, []Filter{SkipDaemonSet, SkipTerminal, never})
	if got.Delete || got.Message != DaemonSetWarning || called {
		t.Fatalf("Decide = %+v (later filter called: %v), want the DaemonSet skip and no later filter", got, called)
	}
}
