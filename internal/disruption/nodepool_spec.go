package disruption

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"
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

// EmptyRequirements reports the first of a NodePool's requirements that has
// no value in common with the earlier ones on its key (arch In [amd64] and arch In [arm64]; capacity-type In
// [spot] and NotIn [spot]; Gt 8 and Lt 4) while one of them needs the
// label: Karpenter intersects a key's requirements
// (sigs.k8s.io/karpenter pkg/scheduling Requirements.Add, Intersection),
// the result allows no value, and no instance type is ever compatible. It
// says so, rather than the "all available instance types exceed limits"
// Karpenter logs for a pool with limits and nothing left to launch. A
// requirement the CRD refuses on its own (In without a value, Gt without
// one integer) is left to the CRD's rule (nodeclass.CheckRequirements).
func EmptyRequirements(np *karpv1.NodePool) *BudgetError {
	reqs := np.Spec.Template.Spec.Requirements
	acc := map[string]*scheduling.Requirement{}
	first := map[string]int{}
	needs := map[string]bool{}
	say := func(r karpv1.NodeSelectorRequirementWithMinValues) string {
		if len(r.Values) == 0 {
			return string(r.Operator)
		}
		return fmt.Sprintf("%s [%s]", r.Operator, strings.Join(r.Values, ", "))
	}
	for i, r := range reqs {
		switch r.Operator {
		case corev1.NodeSelectorOpIn:
			if len(r.Values) == 0 {
				continue
			}
		case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt, karpv1.NodeSelectorOpGte, karpv1.NodeSelectorOpLte:
			if len(r.Values) != 1 {
				continue
			}
			if n, err := strconv.Atoi(r.Values[0]); err != nil || n < 0 {
				continue
			}
		case corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		default:
			continue
		}
		req := scheduling.NewRequirementWithFlexibility(r.Key, r.Operator, r.MinValues, r.Values...)
		if r.Operator != corev1.NodeSelectorOpDoesNotExist && r.Operator != corev1.NodeSelectorOpNotIn {
			needs[r.Key] = true
		}
		prev, ok := acc[r.Key]
		if !ok {
			acc[r.Key], first[r.Key] = req, i
			continue
		}
		both := prev.Intersection(req)
		if needs[r.Key] && both.Operator() == corev1.NodeSelectorOpDoesNotExist {
			return &BudgetError{Kind: Broken, Index: -1, Field: fmt.Sprintf("spec.template.spec.requirements[%d]", i),
				Msg: fmt.Sprintf("%s %s and requirements[%d] (%s) leave %s no value: their intersection is empty, so Karpenter can launch no node from this NodePool",
					r.Key, say(r), first[r.Key], say(reqs[first[r.Key]]), r.Key),
				Fix: "keep one requirement per key, or values the requirements on " + r.Key + " share"}
		}
		acc[r.Key] = both
	}
	return nil
}
