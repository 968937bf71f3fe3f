package live

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Patch implements kubeport.Port with the dynamic client
// (Options.Dynamic), as kubectl patch does for a kind of any group.
func (p *Port) Patch(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	r, err := p.resource(gvr)
	if err != nil {
		return nil, err
	}
	if namespace == "" {
		return r.Patch(ctx, name, pt, data, metav1.PatchOptions{})
	}
	return r.Namespace(namespace).Patch(ctx, name, pt, data, metav1.PatchOptions{})
}
