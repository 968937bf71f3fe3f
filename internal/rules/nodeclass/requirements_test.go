package nodeclass_test

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/rules/nodeclass"
)

// Which NodePool requirements the NodePool CRD refuses, by field, and the
// requirements an accepted pool's nodes meet.
func TestCheckRequirements(t *testing.T) {
	two := 2
	for _, c := range []struct {
		name  string
		req   karpv1.NodeSelectorRequirementWithMinValues
		field string // "" when accepted
	}{
		{name: "In", req: karpv1.NodeSelectorRequirementWithMinValues{Key: "karpenter.sh/capacity-type", Operator: "In", Values: []string{"on-demand"}}},
		{name: "In without values", req: karpv1.NodeSelectorRequirementWithMinValues{Key: "karpenter.sh/capacity-type", Operator: "In"}, field: ".values"},
		{name: "minValues above the values", req: karpv1.NodeSelectorRequirementWithMinValues{Key: "karpenter.k8s.aws/instance-family", Operator: "In", Values: []string{"m5"}, MinValues: &two}, field: ".minValues"},
		{name: "Exists", req: karpv1.NodeSelectorRequirementWithMinValues{Key: "karpenter.k8s.aws/instance-family", Operator: "Exists"}},
		{name: "Gte", req: karpv1.NodeSelectorRequirementWithMinValues{Key: "karpenter.k8s.aws/instance-cpu", Operator: "Gte", Values: []string{"2"}}},
		{name: "Gt of no integer", req: karpv1.NodeSelectorRequirementWithMinValues{Key: "karpenter.k8s.aws/instance-cpu", Operator: "Gt", Values: []string{"four"}}, field: ".values"},
		{name: "Lt of a negative integer", req: karpv1.NodeSelectorRequirementWithMinValues{Key: "karpenter.k8s.aws/instance-cpu", Operator: "Lt", Values: []string{"-1"}}, field: ".values"},
		{name: "Gt of two values", req: karpv1.NodeSelectorRequirementWithMinValues{Key: "karpenter.k8s.aws/instance-cpu", Operator: "Gt", Values: []string{"1", "2"}}, field: ".values"},
		{name: "an operator Karpenter lacks", req: karpv1.NodeSelectorRequirementWithMinValues{Key: "karpenter.k8s.aws/instance-cpu", Operator: "Between", Values: []string{"1"}}, field: ".operator"},
	} {
		t.Run(c.name, func(t *testing.T) {
			np := &karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
			np.Spec.Template.Labels = map[string]string{"team": "a"}
			np.Spec.Template.Spec.Requirements = []karpv1.NodeSelectorRequirementWithMinValues{c.req}
			err := nodeclass.CheckRequirements(np)
			if c.field != "" {
				var reqErr *nodeclass.RequirementError
				if want := "spec.template.spec.requirements[0]" + c.field; !errors.As(err, &reqErr) || reqErr.Field != want {
					t.Fatalf("got %v; want a refusal of %s", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			reqs := nodeclass.PoolRequirements(np)
			if !reqs.Has(c.req.Key) {
				t.Errorf("no requirement on %s: %v", c.req.Key, reqs)
			}
			for key, value := range map[string]string{"team": "a", karpv1.NodePoolLabelKey: "default"} {
				if got := reqs.Get(key); got.Operator() != corev1.NodeSelectorOpIn || !got.Has(value) {
					t.Errorf("requirement %s: %v, want In %s", key, got, value)
				}
			}
		})
	}
}
