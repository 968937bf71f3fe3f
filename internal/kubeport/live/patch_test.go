package live

import (
	"context"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
)

// Patch by resource goes through the dynamic client, to the namespace for
// a namespaced resource and to the cluster for a cluster-scoped one.
func TestPatchThroughDynamicClient(t *testing.T) {
	ctx := context.Background()
	one := intstr.FromInt32(1)
	dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(),
		unstructuredOf(t, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}, Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one}}, "policy/v1", "PodDisruptionBudget"),
		unstructuredOf(t, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000}, "scheduling.k8s.io/v1", "PriorityClass"),
	)
	p := New(fake.NewClientset(), Options{Dynamic: dyn})

	pdbs := policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets")
	u, err := p.Patch(ctx, pdbs, "shop", "web", types.MergePatchType, []byte(`{"spec":{"minAvailable":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "minAvailable"); got != int64(2) || u.GetNamespace() != "shop" {
		t.Fatalf("PDB after the patch: spec.minAvailable %v in %q, want 2 in shop", got, u.GetNamespace())
	}
	pc, err := p.Patch(ctx, schedulingv1.SchemeGroupVersion.WithResource("priorityclasses"), "", "high", types.JSONPatchType, []byte(`[{"op":"replace","path":"/value","value":2000}]`))
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedInt64(pc.Object, "value"); v != 2000 {
		t.Fatalf("PriorityClass after the patch: value %d, want 2000", v)
	}
	if _, err := p.Patch(ctx, pdbs, "other", "web", types.MergePatchType, []byte(`{}`)); !apierrors.IsNotFound(err) {
		t.Fatalf("patch of web in another namespace: %v, want NotFound", err)
	}
	if _, err := New(fake.NewClientset(), Options{}).Patch(ctx, pdbs, "shop", "web", types.MergePatchType, []byte(`{}`)); err != errNoDynamic {
		t.Fatalf("without a dynamic client: %v, want %v", err, errNoDynamic)
	}
}
