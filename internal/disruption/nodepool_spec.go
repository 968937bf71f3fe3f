package disruption

import (
	"fmt"
	"regexp"
	"sort"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// The karpenter.sh/v1 NodePool CRD's rules on the fields outside the
// budgets, as its OpenAPI schema states them (sigs.k8s.io/karpenter v1.14
// pkg/apis/v1/nodepool.go kubebuilder markers, generated into
// pkg/apis/crds/karpenter.sh_nodepools.yaml):
//
//   - spec.weight: +kubebuilder:validation:Minimum:=1, Maximum:=100;
//   - spec.disruption.consolidateAfter and spec.template.spec.expireAfter:
//     +kubebuilder:validation:Pattern=`^(([0-9]+(s|m|h))+|Never)$`
//     (a Go duration such as "1.5h" or "-5m" does not match);
//   - spec.limits: a resource.Quantity each. The schema's quantity pattern
//     takes a sign, so the API server stores a negative limit; Karpenter then
//     launches nothing from the pool (every instance type's capacity exceeds
//     it: scheduler.go filterByRemainingResources), so Ladder refuses it.
var nillableDurationPattern = regexp.MustCompile(`^(([0-9]+(s|m|h))+|Never)$`)

// ValidateSpec checks a NodePool's weight, durations and limits against the
// CRD; w is the manifest as written (WrittenFromManifest), nil if unknown.
func ValidateSpec(np *karpv1.NodePool, w *Written) []BudgetError {
	var errs []BudgetError
	bad := func(field, msg, fix string) {
		errs = append(errs, BudgetError{Kind: Rejected, Index: -1, Field: field, Msg: msg, Fix: fix})
	}
	if wt := np.Spec.Weight; wt != nil && (*wt < 1 || *wt > 100) {
		bad("spec.weight", fmt.Sprintf("%d is out of range: the NodePool CRD allows 1 to 100 (Minimum 1, Maximum 100)", *wt),
			"use a weight from 1 to 100 (higher is tried first), or leave it out")
	}
	if w != nil {
		for _, d := range []struct {
			field string
			text  *string
		}{
			{"spec.disruption.consolidateAfter", w.ConsolidateAfterText},
			{"spec.template.spec.expireAfter", w.ExpireAfterText},
		} {
			if d.text != nil && !nillableDurationPattern.MatchString(*d.text) {
				bad(d.field, fmt.Sprintf("%q is not a duration the NodePool CRD takes (pattern ^(([0-9]+(s|m|h))+|Never)$)", *d.text),
					"use whole numbers with h, m or s (30s, 1h30m) or Never")
			}
		}
	}
	names := make([]string, 0, len(np.Spec.Limits))
	for name := range np.Spec.Limits {
		names = append(names, string(name))
	}
	sort.Strings(names)
	for _, name := range names {
		q := np.Spec.Limits[corev1.ResourceName(name)]
		if q.Sign() < 0 {
			errs = append(errs, BudgetError{Kind: Broken, Index: -1, Field: "spec.limits." + name,
				Msg: fmt.Sprintf("%s is negative: Karpenter would launch no node from this NodePool (every instance type exceeds the limit)", q.String()),
				Fix: "set a limit of zero or more, or remove it for no limit"})
		}
	}
	return errs
}
