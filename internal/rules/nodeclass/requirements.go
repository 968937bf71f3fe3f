package nodeclass

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

// RequirementError is a NodePool requirement the NodePool CRD refuses: the
// field it is about and the CRD's message.
type RequirementError struct {
	NodePool string
	Field    string // e.g. spec.template.spec.requirements[0].values
	Msg      string
	Fix      string
}

func (e *RequirementError) Error() string {
	return fmt.Sprintf("NodePool %s: %s: %s", e.NodePool, e.Field, e.Msg)
}

// CheckRequirements is the NodePool CRD's validation of
// spec.template.spec.requirements (sigs.k8s.io/karpenter pkg/apis/v1
// NodeClaimTemplateSpec.Requirements and NodeSelectorRequirementWithMinValues):
// the operator one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte;
// In with a value; Gt, Lt, Gte and Lte with a single non-negative integer;
// minValues at most the number of In values. The API server refuses the
// NodePool otherwise, so the twin does when it is applied, and a
// scenario's validation does first.
func CheckRequirements(np *karpv1.NodePool) error {
	for i, r := range np.Spec.Template.Spec.Requirements {
		f := fmt.Sprintf("spec.template.spec.requirements[%d]", i)
		fail := func(field, msg, fix string) error {
			return &RequirementError{NodePool: np.Name, Field: f + field, Msg: msg, Fix: fix}
		}
		switch r.Operator {
		case corev1.NodeSelectorOpIn:
			if len(r.Values) == 0 {
				return fail(".values", "requirements with operator 'In' must have a value defined", "list at least one value, or use operator Exists")
			}
			if r.MinValues != nil && len(r.Values) < *r.MinValues {
				return fail(".minValues", "requirements with 'minValues' must have at least that many values specified in the 'values' field", fmt.Sprintf("list at least %d values, or lower minValues", *r.MinValues))
			}
		case corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt, karpv1.NodeSelectorOpGte, karpv1.NodeSelectorOpLte:
			if len(r.Values) != 1 {
				return fail(".values", "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value", `give one integer, e.g. values: ["4"]`)
			}
			if n, err := strconv.Atoi(r.Values[0]); err != nil || n < 0 {
				return fail(".values", "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value", `give one integer, e.g. values: ["4"]`)
			}
		default:
			return fail(".operator", fmt.Sprintf("%q is not one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte", r.Operator), "")
		}
	}
	return nil
}

// PoolRequirements are the requirements a NodePool's nodes meet, the part
// of Karpenter's NodeClaimTemplate requirements the twin models
// (sigs.k8s.io/karpenter pkg/controllers/provisioning/scheduling
// NewNodeClaimTemplate): spec.template.spec.requirements, the template's
// labels, and the karpenter.sh/nodepool label. np is only read.
func PoolRequirements(np *karpv1.NodePool) scheduling.Requirements {
	reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(np.Spec.Template.Spec.Requirements...)
	reqs.Add(scheduling.NewLabelRequirements(np.Spec.Template.Labels).Values()...)
	reqs.Add(scheduling.NewRequirement(karpv1.NodePoolLabelKey, corev1.NodeSelectorOpIn, np.Name))
	return reqs
}
