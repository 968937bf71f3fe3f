package insights

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/manifest"
)

// emptyV1beta1BudgetAdvice is the recommendation for a policy/v1beta1
// PodDisruptionBudget whose selector is empty. It selects no pod — kube-
// apiserver stores it with a requirement no pod meets (manifest.
// PDBFromV1beta1) — but rewritten as policy/v1, as the migration to the
// served version would have it, the same {} selects every pod in the
// namespace (semantics.md §D.1): it would start blocking drains, and with
// any other budget in the namespace put two budgets on one pod, so every
// eviction of it fails with 500. ok is false for any other object.
func emptyV1beta1BudgetAdvice(in *Input, o *Object) (string, bool) {
	if o.APIVersion != "policy/v1beta1" || o.Kind != "PodDisruptionBudget" {
		return "", false
	}
	// Manifests keep the spec converted to policy/v1 (summarizePDB), as
	// scenario objects arrive (manifest.Decode).
	var sel *metav1.LabelSelector
	if sum := summarizePDB(o.Typed); sum != nil {
		sel = sum.spec.Selector
	}
	if !manifest.SelectsNoPodAsV1beta1(sel) {
		return "", false
	}
	var others []string
	for _, p := range in.PDBs() {
		if p.Object.Namespace == o.Namespace && p.Object.Name != o.Name && !manifest.SelectsNoPodAsV1beta1(p.Spec.Selector) {
			others = append(others, p.Object.Name)
		}
	}
	s := fmt.Sprintf("Delete %s rather than migrate it: its empty spec.selector selects no pod in policy/v1beta1, so it guards nothing, "+
		"but in policy/v1 the same {} selects every pod in namespace %s and would block their evictions", o, nsOrDefault(o.Namespace))
	if len(others) > 0 {
		s += fmt.Sprintf(", and with PodDisruptionBudget %s put two budgets on one pod, which makes every eviction of it fail with 500", strings.Join(others, ", "))
	}
	return s + "; to keep a budget, write policy/v1 with a selector.matchLabels of the pods it should guard.", true
}
