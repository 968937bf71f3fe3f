package eviction

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// semantics.md §D.1: "invalid selector => no match; empty {} selector matches all".
func TestMatchingPDBs(t *testing.T) {
	bogus := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus", Values: []string{"web"}}}}
	inExpr := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"db", "web"}}}}
	cases := []struct {
		name string
		pod  *corev1.Pod
		pdbs []*policyv1.PodDisruptionBudget
		want []string
	}{
		{"matchLabels match", newPod("web-a"), []*policyv1.PodDisruptionBudget{newPDB("a")}, []string{"a"}},
		{"matchLabels mismatch", newPod("web-a", withLabels(map[string]string{"app": "db"})), []*policyv1.PodDisruptionBudget{newPDB("a")}, nil},
		{"empty selector matches every pod in the namespace", newPod("x", withLabels(nil)),
			[]*policyv1.PodDisruptionBudget{newPDB("all", selector(&metav1.LabelSelector{}))}, []string{"all"}},
		{"nil selector matches none", newPod("web-a"), []*policyv1.PodDisruptionBudget{newPDB("nil", selector(nil))}, nil},
		{"invalid selector matches none", newPod("web-a"), []*policyv1.PodDisruptionBudget{newPDB("bad", selector(bogus))}, nil},
		{"matchExpressions In", newPod("web-a"), []*policyv1.PodDisruptionBudget{newPDB("in", selector(inExpr))}, []string{"in"}},
		{"other namespace ignored, even with empty selector", newPod("web-a", inNamespace("team")),
			[]*policyv1.PodDisruptionBudget{newPDB("all", selector(&metav1.LabelSelector{}))}, nil},
		{"input order kept", newPod("web-a"), []*policyv1.PodDisruptionBudget{
			newPDB("z"), newPDB("skip", selector(nil)), nil, newPDB("a", selector(&metav1.LabelSelector{})), newPDB("m", selector(inExpr)),
		}, []string{"z", "a", "m"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, p := range MatchingPDBs(tc.pod, tc.pdbs) {
				got = append(got, p.Name)
			}
			if !equalStrings(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}
