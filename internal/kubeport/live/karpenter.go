package live

import (
	"context"
	"errors"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/kubeport"
)

// Karpenter's objects are custom resources: the port reads and patches
// them with client-go's dynamic client (Options.Dynamic) and converts
// between unstructured and the upstream types with
// runtime.DefaultUnstructuredConverter, so it needs neither Karpenter's
// generated clientset nor a scheme. Errors are the API server's, as they
// come: a cluster without Karpenter's CRDs answers 404 NotFound.

var errNoDynamic = errors.New("live port: Karpenter's objects and Patch need a dynamic client (live.Options.Dynamic)")

func (p *Port) resource(gvr schema.GroupVersionResource) (dynamic.NamespaceableResourceInterface, error) {
	if p.opts.Dynamic == nil {
		return nil, errNoDynamic
	}
	return p.opts.Dynamic.Resource(gvr), nil
}

// getCR reads one cluster-scoped custom resource into a T.
func getCR[T any](ctx context.Context, p *Port, gvr schema.GroupVersionResource, name string) (*T, error) {
	r, err := p.resource(gvr)
	if err != nil {
		return nil, err
	}
	u, err := r.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return fromUnstructured[T](u)
}

// listCRs lists every object of a cluster-scoped custom resource, page by
// page, sorted by name.
func listCRs[T any, PT interface {
	*T
	metav1.Object
}](ctx context.Context, p *Port, gvr schema.GroupVersionResource) ([]T, error) {
	r, err := p.resource(gvr)
	if err != nil {
		return nil, err
	}
	us, err := listAll[unstructured.Unstructured](ctx, p.opts.ChunkSize, metav1.ListOptions{}, r.List)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(us))
	for i := range us {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(us[i].Object, &out[i]); err != nil {
			return nil, err
		}
	}
	kubeport.SortObjects[T, PT](out)
	return out, nil
}

// patchCR patches one cluster-scoped custom resource and returns it as
// stored afterwards.
func patchCR[T any](ctx context.Context, p *Port, gvr schema.GroupVersionResource, name string, pt types.PatchType, data []byte) (*T, error) {
	r, err := p.resource(gvr)
	if err != nil {
		return nil, err
	}
	u, err := r.Patch(ctx, name, pt, data, metav1.PatchOptions{})
	if err != nil {
		return nil, err
	}
	return fromUnstructured[T](u)
}

func fromUnstructured[T any](u *unstructured.Unstructured) (*T, error) {
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return nil, err
	}
	return out, nil
}

// GetNodePool implements kubeport.Port.
func (p *Port) GetNodePool(ctx context.Context, name string) (*karpv1.NodePool, error) {
	return getCR[karpv1.NodePool](ctx, p, kubeport.NodePools, name)
}

// ListNodePools implements kubeport.Port.
func (p *Port) ListNodePools(ctx context.Context) ([]karpv1.NodePool, error) {
	return listCRs[karpv1.NodePool](ctx, p, kubeport.NodePools)
}

// PatchNodePool implements kubeport.Port.
func (p *Port) PatchNodePool(ctx context.Context, name string, pt types.PatchType, data []byte) (*karpv1.NodePool, error) {
	return patchCR[karpv1.NodePool](ctx, p, kubeport.NodePools, name, pt, data)
}

// GetEC2NodeClass implements kubeport.Port.
func (p *Port) GetEC2NodeClass(ctx context.Context, name string) (*awsv1.EC2NodeClass, error) {
	return getCR[awsv1.EC2NodeClass](ctx, p, kubeport.EC2NodeClasses, name)
}

// ListEC2NodeClasses implements kubeport.Port.
func (p *Port) ListEC2NodeClasses(ctx context.Context) ([]awsv1.EC2NodeClass, error) {
	return listCRs[awsv1.EC2NodeClass](ctx, p, kubeport.EC2NodeClasses)
}

// PatchEC2NodeClass implements kubeport.Port.
func (p *Port) PatchEC2NodeClass(ctx context.Context, name string, pt types.PatchType, data []byte) (*awsv1.EC2NodeClass, error) {
	return patchCR[awsv1.EC2NodeClass](ctx, p, kubeport.EC2NodeClasses, name, pt, data)
}

// GetNodeClaim implements kubeport.Port.
func (p *Port) GetNodeClaim(ctx context.Context, name string) (*karpv1.NodeClaim, error) {
	return getCR[karpv1.NodeClaim](ctx, p, kubeport.NodeClaims, name)
}

// ListNodeClaims implements kubeport.Port.
func (p *Port) ListNodeClaims(ctx context.Context) ([]karpv1.NodeClaim, error) {
	return listCRs[karpv1.NodeClaim](ctx, p, kubeport.NodeClaims)
}

// PatchNodeClaim implements kubeport.Port.
func (p *Port) PatchNodeClaim(ctx context.Context, name string, pt types.PatchType, data []byte) (*karpv1.NodeClaim, error) {
	return patchCR[karpv1.NodeClaim](ctx, p, kubeport.NodeClaims, name, pt, data)
}

// NewForConfig returns the port of the cluster cfg reaches: a clientset for
// the core API and, unless opts already has one, a dynamic client for
// Karpenter's objects.
func NewForConfig(cfg *rest.Config, opts Options) (*Port, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	if opts.Dynamic == nil {
		if opts.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
			return nil, err
		}
	}
	return New(cs, opts), nil
}
