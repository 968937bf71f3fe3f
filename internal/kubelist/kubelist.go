// Package kubelist reads every object of a kind from an API server in
// pages, through client-go's pager (k8s.io/client-go/tools/pager), as
// kubectl get does: Limit, then the Continue token of each page until the
// server sends none. When a continue token has expired (410 Expired: etcd
// compacted the revision the first page was read at) the pager lists
// everything again in one request (its FullListIfExpired), so a list of a
// busy cluster completes, without the first pages' items twice.
package kubelist

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/pager"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// ChunkSize is the page size Ladder lists with: kubectl's --chunk-size
// default.
const ChunkSize = cmdutil.DefaultChunkSize

// Page adapts a client's List (a clientset's, the dynamic or the metadata
// client's) to the pager.
func Page[L runtime.Object](list func(context.Context, metav1.ListOptions) (L, error)) pager.ListPageFunc {
	return func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		l, err := list(ctx, opts)
		if err != nil {
			return nil, err
		}
		return l, nil
	}
}

// Each lists with opts in pages of chunk items (0: one request) and calls
// fn with each item, in the server's order, once the whole list is read.
// Errors are the API server's as they come, or fn's.
func Each[PT runtime.Object](ctx context.Context, chunk int64, opts metav1.ListOptions, page pager.ListPageFunc, fn func(PT) error) error {
	p := pager.New(page)
	p.PageSize = chunk
	list, _, err := p.List(ctx, opts)
	if err != nil {
		return err
	}
	return meta.EachListItem(list, func(o runtime.Object) error {
		item, ok := o.(PT)
		if !ok {
			return fmt.Errorf("the list holds a %T, not a %T", o, item)
		}
		return fn(item)
	})
}

// All lists like Each and returns the items.
func All[T any, PT interface {
	*T
	runtime.Object
}](ctx context.Context, chunk int64, opts metav1.ListOptions, page pager.ListPageFunc) ([]T, error) {
	var out []T
	err := Each(ctx, chunk, opts, page, func(item PT) error {
		out = append(out, *item)
		return nil
	})
	return out, err
}
