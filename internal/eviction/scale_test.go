package eviction

import (
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestScaleError: the controllers without a scale subresource give the
// error upstream's getScaleController words
// (pkg/controller/disruption/disruption.go); those whose scale the
// disruption controller reads give none.
func TestScaleError(t *testing.T) {
	for _, tc := range []struct {
		apiVersion, kind, want string
	}{
		{"apps/v1", "DaemonSet", "daemonsets.apps does not implement the scale subresource"},
		{"batch/v1", "Job", "jobs.batch does not implement the scale subresource"},
		{"v1", "Node", "nodes does not implement the scale subresource"},
		{"apps/v1", "Deployment", ""},
		{"apps/v1", "ReplicaSet", ""},
		{"apps/v1", "StatefulSet", ""},
		{"v1", "ReplicationController", ""},
		{"argoproj.io/v1alpha1", "Rollout", ""}, // unknown: may have a scale
		{"apps/v1/x", "DaemonSet", "unexpected GroupVersion string: apps/v1/x"},
	} {
		err := ScaleError(tc.apiVersion, tc.kind)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("ScaleError(%q, %q) = %q, want %q", tc.apiVersion, tc.kind, got, tc.want)
		}
	}
}

// TestNeedsScale: getExpectedPodCount reads the scale for maxUnavailable
// and a percentage minAvailable, not for an integer minAvailable
// (semantics.md §D.2).
func TestNeedsScale(t *testing.T) {
	i, pct := intstr.FromInt32(1), intstr.FromString("50%")
	for _, tc := range []struct {
		name string
		spec policyv1.PodDisruptionBudgetSpec
		want bool
	}{
		{"maxUnavailable 1", policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &i}, true},
		{"maxUnavailable 50%", policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &pct}, true},
		{"minAvailable 50%", policyv1.PodDisruptionBudgetSpec{MinAvailable: &pct}, true},
		{"minAvailable 1", policyv1.PodDisruptionBudgetSpec{MinAvailable: &i}, false},
		{"neither", policyv1.PodDisruptionBudgetSpec{}, false},
	} {
		if got := NeedsScale(&tc.spec); got != tc.want {
			t.Errorf("%s: NeedsScale = %v, want %v", tc.name, got, tc.want)
		}
	}
}
