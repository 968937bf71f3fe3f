package disruption

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// TestValidateSpec holds weight, consolidateAfter, expireAfter and limits
// to the NodePool CRD's minimum, maximum and pattern, and refuses a
// negative limit.
func TestValidateSpec(t *testing.T) {
	str := func(s string) *string { return &s }
	w := func(n int32) *int32 { return &n }
	cases := []struct {
		weight  *int32
		written *Written
		limits  karpv1.Limits
		want    string // the field refused, "" for none
	}{
		{weight: w(1)}, {weight: w(100)}, {},
		{weight: w(0), want: "spec.weight: 0 is out of range"},
		{weight: w(101), want: "spec.weight: 101 is out of range"},
		{weight: w(-5), want: "spec.weight: -5 is out of range"},
		{written: &Written{ConsolidateAfterText: str("1h30m")}},
		{written: &Written{ConsolidateAfterText: str("Never")}},
		{written: &Written{ConsolidateAfterText: str("1.5h")}, want: `spec.disruption.consolidateAfter: "1.5h" is not a duration the NodePool CRD takes`},
		{written: &Written{ConsolidateAfterText: str("-5m")}, want: `spec.disruption.consolidateAfter: "-5m"`},
		{written: &Written{ExpireAfterText: str("never")}, want: `spec.template.spec.expireAfter: "never"`},
		{limits: karpv1.Limits{corev1.ResourceCPU: resource.MustParse("0")}},
		{limits: karpv1.Limits{corev1.ResourceCPU: resource.MustParse("-4")}, want: "spec.limits.cpu: -4 is negative"},
	}
	for _, tc := range cases {
		np := &karpv1.NodePool{Spec: karpv1.NodePoolSpec{Weight: tc.weight, Limits: tc.limits}}
		errs := ValidateSpec(np, tc.written)
		switch {
		case tc.want == "" && len(errs) > 0:
			t.Errorf("%+v: refused: %v", tc, errs)
		case tc.want != "" && (len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tc.want)):
			t.Errorf("%+v: %v; want %q", tc, errs, tc.want)
		}
	}
}

// TestEmptyRequirements: requirements on one key whose intersection is
// empty are named, with the earlier one; what Karpenter can satisfy, or a
// requirement the CRD refuses on its own, is not.
func TestEmptyRequirements(t *testing.T) {
	req := func(key string, op corev1.NodeSelectorOperator, values ...string) karpv1.NodeSelectorRequirementWithMinValues {
		return karpv1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op, Values: values}
	}
	const arch, ct, cpu = "kubernetes.io/arch", "karpenter.sh/capacity-type", "karpenter.k8s.aws/instance-cpu"
	cases := []struct {
		reqs []karpv1.NodeSelectorRequirementWithMinValues
		want string // "" for none
	}{
		{[]karpv1.NodeSelectorRequirementWithMinValues{req(arch, "In", "amd64"), req(arch, "In", "amd64", "arm64")}, ""},
		{[]karpv1.NodeSelectorRequirementWithMinValues{req(arch, "In", "amd64"), req(arch, "In", "arm64")},
			"spec.template.spec.requirements[1]: kubernetes.io/arch In [arm64] and requirements[0] (In [amd64]) leave kubernetes.io/arch no value: their intersection is empty"},
		{[]karpv1.NodeSelectorRequirementWithMinValues{req(ct, "In", "spot"), req(arch, "Exists"), req(ct, "NotIn", "spot")}, "spec.template.spec.requirements[2]:"},
		{[]karpv1.NodeSelectorRequirementWithMinValues{req(cpu, "Gt", "8"), req(cpu, "Lt", "4")}, "spec.template.spec.requirements[1]:"},
		{[]karpv1.NodeSelectorRequirementWithMinValues{req(cpu, "Gt", "4"), req(cpu, "Lt", "8")}, ""},
		{[]karpv1.NodeSelectorRequirementWithMinValues{req("team", "NotIn", "a"), req("team", "DoesNotExist")}, ""},
		{[]karpv1.NodeSelectorRequirementWithMinValues{req(cpu, "Gt"), req(cpu, "Lt", "4")}, ""}, // the CRD's own rule
	}
	for _, tc := range cases {
		np := &karpv1.NodePool{}
		np.Spec.Template.Spec.Requirements = tc.reqs
		e := EmptyRequirements(np)
		switch {
		case tc.want == "" && e != nil:
			t.Errorf("%v: %v", tc.reqs, e)
		case tc.want != "" && (e == nil || !strings.HasPrefix(e.Error(), tc.want)):
			t.Errorf("%v: %v; want %q", tc.reqs, e, tc.want)
		}
	}
}
