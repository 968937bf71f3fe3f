package live

import (
	"context"
	"testing"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/kubeport"
)

func unstructuredOf(t *testing.T, obj any, apiVersion, kind string) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u
}

// The live port reads and patches Karpenter's objects through the dynamic
// client and hands back the upstream types; NotFound is the API server's.
func TestKarpenterThroughDynamicClient(t *testing.T) {
	ctx := context.Background()
	weight := int32(3)
	objs := []runtime.Object{
		unstructuredOf(t, &karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: karpv1.NodePoolSpec{Weight: &weight}}, "karpenter.sh/v1", "NodePool"),
		unstructuredOf(t, &karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, "karpenter.sh/v1", "NodePool"),
		unstructuredOf(t, &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: awsv1.EC2NodeClassSpec{AMISelectorTerms: []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}}}}, "karpenter.k8s.aws/v1", "EC2NodeClass"),
		unstructuredOf(t, &karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "a-x1", Annotations: map[string]string{karpv1.NodePoolHashAnnotationKey: "123"}}}, "karpenter.sh/v1", "NodeClaim"),
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		kubeport.NodePools:      "NodePoolList",
		kubeport.EC2NodeClasses: "EC2NodeClassList",
		kubeport.NodeClaims:     "NodeClaimList",
	}, objs...)
	p := New(fake.NewClientset(), Options{Dynamic: dyn})

	pools, err := p.ListNodePools(ctx)
	if err != nil || len(pools) != 2 || pools[0].Name != "a" || pools[1].Name != "b" || *pools[1].Spec.Weight != 3 {
		t.Fatalf("ListNodePools = %+v, %v; want a then b (weight 3)", pools, err)
	}
	np, err := p.PatchNodePool(ctx, "a", types.MergePatchType, []byte(`{"spec":{"weight":9}}`))
	if err != nil || np.Spec.Weight == nil || *np.Spec.Weight != 9 {
		t.Fatalf("PatchNodePool = %+v, %v; want weight 9", np, err)
	}
	nc, err := p.GetEC2NodeClass(ctx, "default")
	if err != nil || nc.Spec.AMISelectorTerms[0].Alias != "al2023@latest" {
		t.Fatalf("GetEC2NodeClass = %+v, %v", nc, err)
	}
	claims, err := p.ListNodeClaims(ctx)
	if err != nil || len(claims) != 1 || claims[0].Annotations[karpv1.NodePoolHashAnnotationKey] != "123" {
		t.Fatalf("ListNodeClaims = %+v, %v", claims, err)
	}
	if _, err := p.GetNodeClaim(ctx, "missing"); !apierrors.IsNotFound(err) {
		t.Fatalf("GetNodeClaim(missing) = %v, want NotFound", err)
	}
	if _, err := New(fake.NewClientset(), Options{}).GetNodePool(ctx, "a"); err != errNoDynamic {
		t.Fatalf("without a dynamic client: %v, want %v", err, errNoDynamic)
	}
}
