package manifest

import (
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PDBV1beta1Label is the reserved label key kube-apiserver uses to keep a
// policy/v1beta1 PodDisruptionBudget's selector meaning the same when it is
// read through policy/v1 (kubernetes/kubernetes pkg/apis/policy/helper.go,
// PDBV1beta1Label).
const PDBV1beta1Label = "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match"

// v1beta1MatchNone is what an empty selector ({}) written in policy/v1beta1
// becomes in policy/v1: a requirement no pod meets, because in v1beta1 an
// empty selector selects no pod while in v1 it selects every pod in the
// namespace (pkg/apis/policy/helper.go, NonV1beta1MatchNoneSelector).
var v1beta1MatchNone = metav1.LabelSelector{
	MatchExpressions: []metav1.LabelSelectorRequirement{{Key: PDBV1beta1Label, Operator: metav1.LabelSelectorOpExists}},
}

// v1beta1MatchAll is how policy/v1beta1 spells "every pod" — what an empty
// v1 selector reads as through v1beta1 (helper.go, V1beta1MatchAllSelector).
var v1beta1MatchAll = metav1.LabelSelector{
	MatchExpressions: []metav1.LabelSelectorRequirement{{Key: PDBV1beta1Label, Operator: metav1.LabelSelectorOpDoesNotExist}},
}

// PDBFromV1beta1 converts a policy/v1beta1 PodDisruptionBudget to the
// policy/v1 object kube-apiserver stores and enforces for it, so the twin
// and the checks treat both versions alike. The fields are the same; only
// the selector changes, as Convert_v1beta1_PodDisruptionBudget_To_policy_
// PodDisruptionBudget (pkg/apis/policy/v1beta1/conversion.go, Kubernetes
// 1.21+) changes it: an empty selector becomes v1beta1MatchNone (it selects
// nothing), the v1beta1 match-all selector becomes an empty one, and the
// reserved label is stripped from every other selector. A nil selector
// selects nothing in both versions.
func PDBFromV1beta1(in *policyv1beta1.PodDisruptionBudget) *policyv1.PodDisruptionBudget {
	out := &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: policyv1.SchemeGroupVersion.String(), Kind: "PodDisruptionBudget"},
		ObjectMeta: *in.ObjectMeta.DeepCopy(),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable:   in.Spec.MinAvailable,
			MaxUnavailable: in.Spec.MaxUnavailable,
			Selector:       in.Spec.Selector.DeepCopy(),
		},
		Status: policyv1.PodDisruptionBudgetStatus{
			ObservedGeneration: in.Status.ObservedGeneration,
			DisruptedPods:      in.Status.DisruptedPods,
			DisruptionsAllowed: in.Status.DisruptionsAllowed,
			CurrentHealthy:     in.Status.CurrentHealthy,
			DesiredHealthy:     in.Status.DesiredHealthy,
			ExpectedPods:       in.Status.ExpectedPods,
			Conditions:         in.Status.Conditions,
		},
	}
	if p := in.Spec.UnhealthyPodEvictionPolicy; p != nil {
		v := policyv1.UnhealthyPodEvictionPolicyType(*p)
		out.Spec.UnhealthyPodEvictionPolicy = &v
	}
	sel := out.Spec.Selector
	switch {
	case sel == nil:
	case apiequality.Semantic.DeepEqual(*sel, metav1.LabelSelector{}):
		out.Spec.Selector = v1beta1MatchNone.DeepCopy()
	case apiequality.Semantic.DeepEqual(*sel, v1beta1MatchAll):
		out.Spec.Selector = &metav1.LabelSelector{}
	default:
		kept := sel.MatchExpressions[:0]
		for _, r := range sel.MatchExpressions {
			if r.Key != PDBV1beta1Label {
				kept = append(kept, r)
			}
		}
		sel.MatchExpressions = kept
	}
	return out
}

// SelectsNoPodAsV1beta1 reports whether a policy/v1 selector is the one an
// empty policy/v1beta1 selector converts to: it selects no pod.
//
// It compares the fields directly (Semantic.DeepEqual's equality, nil and
// empty alike): the checks ask it of every budget.
func SelectsNoPodAsV1beta1(sel *metav1.LabelSelector) bool {
	if sel == nil || len(sel.MatchLabels) != 0 || len(sel.MatchExpressions) != 1 {
		return false
	}
	r := sel.MatchExpressions[0]
	return r.Key == PDBV1beta1Label && r.Operator == metav1.LabelSelectorOpExists && len(r.Values) == 0
}
