package manifest

import (
	"reflect"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestPDBFromV1beta1 follows upstream's conversion cases
// (kubernetes/kubernetes pkg/apis/policy/v1beta1/conversion_test.go).
func TestPDBFromV1beta1(t *testing.T) {
	tests := []struct {
		name string
		in   *metav1.LabelSelector
		want *metav1.LabelSelector
		// pod labels the converted selector must and must not select
		selects, ignores labels.Set
	}{
		{name: "empty selects nothing", in: &metav1.LabelSelector{}, want: &v1beta1MatchNone, ignores: labels.Set{"app": "web"}},
		{name: "nil stays nil", in: nil, want: nil},
		{name: "matchLabels unchanged", in: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			want: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, selects: labels.Set{"app": "web"}, ignores: labels.Set{"app": "api"}},
		{name: "v1beta1 match-all is v1's empty", in: v1beta1MatchAll.DeepCopy(), want: &metav1.LabelSelector{}, selects: labels.Set{"app": "web"}},
		{name: "the reserved label is stripped", in: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: PDBV1beta1Label, Operator: metav1.LabelSelectorOpDoesNotExist}}},
			want: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}, MatchExpressions: []metav1.LabelSelectorRequirement{}}, selects: labels.Set{"app": "web"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &policyv1beta1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}, Spec: policyv1beta1.PodDisruptionBudgetSpec{Selector: tt.in}}
			got := PDBFromV1beta1(in)
			if !reflect.DeepEqual(got.Spec.Selector, tt.want) {
				t.Fatalf("selector %+v, want %+v", got.Spec.Selector, tt.want)
			}
			if got.Name != "web" || got.Namespace != "shop" || got.APIVersion != "policy/v1" {
				t.Errorf("meta %s %s/%s", got.APIVersion, got.Namespace, got.Name)
			}
			sel, err := metav1.LabelSelectorAsSelector(got.Spec.Selector)
			if err != nil {
				t.Fatal(err)
			}
			if tt.selects != nil && !sel.Matches(tt.selects) {
				t.Errorf("does not select %v", tt.selects)
			}
			if tt.ignores != nil && sel.Matches(tt.ignores) {
				t.Errorf("selects %v", tt.ignores)
			}
		})
	}
}

// TestDecodeV1beta1PDB checks the scenario path: a policy/v1beta1 budget
// is kept as the policy/v1 object the twin enforces, under its own GVK.
func TestDecodeV1beta1PDB(t *testing.T) {
	objs, err := Decode("pdb.yaml", []byte(`apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata: {name: all}
spec:
  maxUnavailable: 0
  unhealthyPodEvictionPolicy: AlwaysAllow
  selector: {}
`))
	if err != nil || len(objs) != 1 {
		t.Fatalf("%d objects, %v", len(objs), err)
	}
	o := objs[0]
	pdb, ok := o.Object.(*policyv1.PodDisruptionBudget)
	if !ok || o.Ignored {
		t.Fatalf("decoded as %T (ignored %v)", o.Object, o.Ignored)
	}
	if o.GVK.GroupVersion().String() != "policy/v1beta1" || pdb.Namespace != "default" {
		t.Errorf("GVK %s, namespace %q", o.GVK, pdb.Namespace)
	}
	if !SelectsNoPodAsV1beta1(pdb.Spec.Selector) || pdb.Spec.MaxUnavailable.IntValue() != 0 ||
		pdb.Spec.UnhealthyPodEvictionPolicy == nil || *pdb.Spec.UnhealthyPodEvictionPolicy != policyv1.AlwaysAllow {
		t.Errorf("spec %+v", pdb.Spec)
	}
}
