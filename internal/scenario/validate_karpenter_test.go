package scenario

import "testing"

// NodePool requirements are checked by the NodePool CRD's rules
// (karpenter.CheckRequirements), the operators Karpenter v1 has included.
func TestValidateNodePoolRequirements(t *testing.T) {
	req := func(r string) []string { return []string{"requirements: []", "requirements: [" + r + "]"} }
	runValidateCases(t, []validateCase{
		{name: "Gte", replace: req(`{key: karpenter.k8s.aws/instance-cpu, operator: Gte, values: ["2"]}`)},
		{name: "Lt", replace: req(`{key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: ["16"]}`)},
		{name: "In with minValues", replace: req(`{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5, m6i], minValues: 2}`)},
		{name: "Gt of two values", replace: req(`{key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: ["1", "2"]}`),
			want: `NodePool default: spec.template.spec.requirements[0].values: requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value (give one integer, e.g. values: ["4"])`},
		{name: "an operator Karpenter lacks", replace: req(`{key: karpenter.k8s.aws/instance-cpu, operator: Between, values: ["1"]}`),
			want: `NodePool default: spec.template.spec.requirements[0].operator: "Between" is not one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte`},
	})
}
