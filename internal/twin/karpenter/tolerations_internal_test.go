package karpenter

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	podutil "sigs.k8s.io/karpenter/pkg/utils/pod"
)

// TestToleratesDisruptedMatchesUpstream: the allocation-free
// toleratesDisrupted answers as Karpenter's
// podutil.ToleratesDisruptedNoScheduleTaint for every kind of toleration.
func TestToleratesDisruptedMatchesUpstream(t *testing.T) {
	cases := map[string][]corev1.Toleration{
		"none":                 nil,
		"exists, any key":      {{Operator: corev1.TolerationOpExists}},
		"exists, the key":      {{Key: DisruptedTaintKey, Operator: corev1.TolerationOpExists}},
		"exists, NoExecute":    {{Key: DisruptedTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
		"exists, NoSchedule":   {{Key: DisruptedTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		"equal, empty value":   {{Key: DisruptedTaintKey, Operator: corev1.TolerationOpEqual}},
		"equal, other value":   {{Key: DisruptedTaintKey, Operator: corev1.TolerationOpEqual, Value: "x"}},
		"other key":            {{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "CheckoutApp", Effect: corev1.TaintEffectNoSchedule}},
		"other key, then ours": {{Key: "dedicated", Operator: corev1.TolerationOpExists}, {Key: DisruptedTaintKey, Operator: corev1.TolerationOpExists}},
	}
	for name, tolerations := range cases {
		p := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: tolerations}}
		if got, want := toleratesDisrupted(p), podutil.ToleratesDisruptedNoScheduleTaint(p); got != want {
			t.Errorf("%s: toleratesDisrupted = %v, upstream says %v", name, got, want)
		}
	}
}
