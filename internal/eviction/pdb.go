// Package eviction holds the pure decision code of the Kubernetes Eviction
// API (pods/eviction subresource) and of the disruption controller that
// maintains PodDisruptionBudget status.
//
// Nothing here performs I/O or reads a clock: the current time is always a
// parameter, so the digital twin can drive it with virtual time.
//
// Sources: semantics.md §D.1 (eviction subresource), §D.2 (PDB controller
// status) and §F pitfalls 7 and 8; upstream
// kubernetes/kubernetes pkg/registry/core/pod/storage/eviction.go and
// pkg/controller/disruption/disruption.go.
package eviction

import (
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// MatchingPDBs returns the PodDisruptionBudgets in pdbs that select pod, in
// input order. Only PDBs in the pod's namespace are considered.
//
// Selector rules (semantics.md §D.1, policy/v1): an empty selector `{}`
// matches every pod in the namespace; a nil selector matches nothing
// (metav1.LabelSelectorAsSelector(nil) is labels.Nothing()); an invalid
// selector matches nothing.
//
// Note: the stored upstream eviction.go also skipped empty selectors
// ("should match nothing, not everything"); that is the policy/v1beta1-era
// behaviour. semantics.md §D.1 describes the newer code, which we follow.
func MatchingPDBs(pod *corev1.Pod, pdbs []*policyv1.PodDisruptionBudget) []*policyv1.PodDisruptionBudget {
	if pod == nil {
		return nil
	}
	var out []*policyv1.PodDisruptionBudget
	for _, pdb := range pdbs {
		if pdb == nil || pdb.Namespace != pod.Namespace {
			continue
		}
		sel, ok := pdbSelector(pdb)
		if !ok || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, pdb)
	}
	return out
}

// pdbSelector converts the PDB's selector. ok is false for an invalid
// selector. A nil selector yields labels.Nothing(), an empty one
// labels.Everything().
func pdbSelector(pdb *policyv1.PodDisruptionBudget) (labels.Selector, bool) {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return labels.Nothing(), false
	}
	return sel, true
}
