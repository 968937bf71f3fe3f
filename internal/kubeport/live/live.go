// Package live implements the Kubernetes port (internal/kubeport) on a real
// cluster through client-go's kubernetes.Interface.
//
// Cordon, Uncordon and Drain are kubectl's own library,
// k8s.io/kubectl/pkg/drain (RunCordonOrUncordon, RunNodeDrain on a Helper
// configured as kubectl drain configures it), not a re-implementation, so a
// live drain behaves exactly as `kubectl drain` does. Everything else is
// one client-go call, or one paginated list (client-go's pager through
// internal/kubelist: Limit/Continue, kubectl's default chunk of 500), so the
// lists work on clusters of any size.
//
// Errors are client-go's *apierrors.StatusError, returned as they come: a
// missing RBAC permission is the API server's 403 Forbidden itself, not an
// error wrapping it. Drain's errors are kubectl's, word for word; they also
// unwrap (errors.As, apierrors.IsForbidden, ...) to the API errors behind
// them.
package live

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	kdrain "k8s.io/kubectl/pkg/drain"

	"github.com/ladder-eks/ladder/internal/kubelist"
	"github.com/ladder-eks/ladder/internal/kubeport"
)

// EvictErrorRetryDelay is how long a drain waits before retrying an
// eviction refused with 429: kubectl drain's default (semantics.md §D.3).
// The library's zero value would retry in a tight loop, so it is set
// explicitly.
const EvictErrorRetryDelay = 5 * time.Second

// Options tune the live port.
type Options struct {
	// PollInterval is how often Wait checks its condition (default 200 ms).
	PollInterval time.Duration
	// Out receives kubectl drain's progress ("evicting pod ns/name") and
	// ErrOut its warnings and retries; nil discards them.
	Out, ErrOut io.Writer
	// ChunkSize is the page size (metav1.ListOptions.Limit) of every list,
	// Drain's included (kubectl drain --chunk-size). Default 500, kubectl's
	// cmdutil.DefaultChunkSize; negative lists in one request.
	ChunkSize int64
	// Dynamic is the client for Karpenter's custom resources
	// (karpenter.go) and Patch (patch.go); without it those calls fail.
	Dynamic dynamic.Interface
}

// Port is kubeport.Port on a real cluster.
type Port struct {
	cs   kubernetes.Interface
	opts Options
}

var _ kubeport.Port = (*Port)(nil)

// New returns the port of the cluster cs talks to.
func New(cs kubernetes.Interface, opts Options) *Port {
	if opts.PollInterval <= 0 {
		opts.PollInterval = 200 * time.Millisecond
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	if opts.ErrOut == nil {
		opts.ErrOut = io.Discard
	}
	switch {
	case opts.ChunkSize == 0:
		opts.ChunkSize = cmdutil.DefaultChunkSize
	case opts.ChunkSize < 0:
		opts.ChunkSize = 0
	}
	return &Port{cs: cs, opts: opts}
}

// Client is the clientset behind the port.
func (p *Port) Client() kubernetes.Interface { return p.cs }

// Now is the wall clock.
func (p *Port) Now() time.Time { return time.Now() }

// GetNode implements kubeport.Port.
func (p *Port) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	return p.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}

// ListNodes implements kubeport.Port.
func (p *Port) ListNodes(ctx context.Context) ([]corev1.Node, error) {
	return listAll[corev1.Node](ctx, p.opts.ChunkSize, metav1.ListOptions{}, p.cs.CoreV1().Nodes().List)
}

// GetPod implements kubeport.Port.
func (p *Port) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	return p.cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
}

// ListPods implements kubeport.Port with server-side label and field
// selectors (spec.nodeName), as kubectl drain lists a node's pods.
func (p *Port) ListPods(ctx context.Context, q kubeport.PodQuery) ([]corev1.Pod, error) {
	opts := metav1.ListOptions{}
	if q.Selector != nil {
		opts.LabelSelector = q.Selector.String()
	}
	if q.Node != "" {
		opts.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", q.Node).String()
	}
	return listAll[corev1.Pod](ctx, p.opts.ChunkSize, opts, p.cs.CoreV1().Pods(q.Namespace).List)
}

// ListPDBs implements kubeport.Port.
func (p *Port) ListPDBs(ctx context.Context, namespace string) ([]policyv1.PodDisruptionBudget, error) {
	return listAll[policyv1.PodDisruptionBudget](ctx, p.opts.ChunkSize, metav1.ListOptions{}, p.cs.PolicyV1().PodDisruptionBudgets(namespace).List)
}

// ListDeployments implements kubeport.Port.
func (p *Port) ListDeployments(ctx context.Context, namespace string) ([]appsv1.Deployment, error) {
	return listAll[appsv1.Deployment](ctx, p.opts.ChunkSize, metav1.ListOptions{}, p.cs.AppsV1().Deployments(namespace).List)
}

// ListStatefulSets implements kubeport.Port.
func (p *Port) ListStatefulSets(ctx context.Context, namespace string) ([]appsv1.StatefulSet, error) {
	return listAll[appsv1.StatefulSet](ctx, p.opts.ChunkSize, metav1.ListOptions{}, p.cs.AppsV1().StatefulSets(namespace).List)
}

// ListDaemonSets implements kubeport.Port.
func (p *Port) ListDaemonSets(ctx context.Context, namespace string) ([]appsv1.DaemonSet, error) {
	return listAll[appsv1.DaemonSet](ctx, p.opts.ChunkSize, metav1.ListOptions{}, p.cs.AppsV1().DaemonSets(namespace).List)
}

// PatchDeployment implements kubeport.Port.
func (p *Port) PatchDeployment(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) (*appsv1.Deployment, error) {
	return p.cs.AppsV1().Deployments(namespace).Patch(ctx, name, pt, data, metav1.PatchOptions{})
}

// PatchStatefulSet implements kubeport.Port.
func (p *Port) PatchStatefulSet(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) (*appsv1.StatefulSet, error) {
	return p.cs.AppsV1().StatefulSets(namespace).Patch(ctx, name, pt, data, metav1.PatchOptions{})
}

// PatchDaemonSet implements kubeport.Port.
func (p *Port) PatchDaemonSet(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) (*appsv1.DaemonSet, error) {
	return p.cs.AppsV1().DaemonSets(namespace).Patch(ctx, name, pt, data, metav1.PatchOptions{})
}

// UpdateScale implements kubeport.Port with the workload's scale
// subresource.
func (p *Port) UpdateScale(ctx context.Context, w kubeport.Workload, replicas int32) (*autoscalingv1.Scale, error) {
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace}, Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
	switch w.Kind {
	case "Deployment":
		return p.cs.AppsV1().Deployments(w.Namespace).UpdateScale(ctx, w.Name, scale, metav1.UpdateOptions{})
	case "StatefulSet":
		return p.cs.AppsV1().StatefulSets(w.Namespace).UpdateScale(ctx, w.Name, scale, metav1.UpdateOptions{})
	}
	return nil, apierrors.NewNotFound(appsv1.Resource(strings.ToLower(w.Kind)+"s/scale"), w.Name)
}

// listAll lists in pages of chunk items (0: one request) with client-go's
// pager (internal/kubelist: an expired continue token lists everything in
// one request) and sorts the result as the port promises. Errors are
// returned as the API sent them.
func listAll[T any, PT interface {
	*T
	metav1.Object
	runtime.Object
}, L runtime.Object](ctx context.Context, chunk int64, opts metav1.ListOptions, list func(context.Context, metav1.ListOptions) (L, error)) ([]T, error) {
	out, err := kubelist.All[T, PT](ctx, chunk, opts, kubelist.Page(list))
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []T{}
	}
	kubeport.SortObjects[T, PT](out)
	return out, nil
}

// Cordon implements kubeport.Port with kubectl's RunCordonOrUncordon.
func (p *Port) Cordon(ctx context.Context, node string) error { return p.cordon(ctx, node, true) }

// Uncordon implements kubeport.Port with kubectl's RunCordonOrUncordon.
func (p *Port) Uncordon(ctx context.Context, node string) error { return p.cordon(ctx, node, false) }

func (p *Port) cordon(ctx context.Context, name string, desired bool) error {
	node, err := p.GetNode(ctx, name)
	if err != nil {
		return err
	}
	return unwrapCordon(kdrain.RunCordonOrUncordon(p.helper(ctx, kubeport.DrainOptions{}, p.cs), node, desired))
}

// unwrapCordon returns the API error behind RunCordonOrUncordon's
// "cordon error: %w" (a 403 on the patch, say) as it came, so Cordon
// fails as every other method does; other errors stay kubectl's.
func unwrapCordon(err error) error {
	if u, ok := err.(interface{ Unwrap() error }); ok {
		if st, ok := u.Unwrap().(*apierrors.StatusError); ok {
			return st
		}
	}
	return err
}

// PatchNode implements kubeport.Port as a read-modify-write retried on
// conflict: taints are a list without a merge key, so a strategic merge
// patch would replace them all and race with the node lifecycle
// controller, which edits them too.
func (p *Port) PatchNode(ctx context.Context, name string, patch kubeport.NodePatch) (*corev1.Node, error) {
	var out *corev1.Node
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := p.GetNode(ctx, name)
		if err != nil {
			return err
		}
		patch.ApplyTo(n)
		out, err = p.cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Evict implements kubeport.Port with a policy/v1 Eviction, as kubectl
// drain sends it (its Helper.EvictPod, whose DeleteOptions are empty with
// the default grace period: the server reads nil and empty alike).
func (p *Port) Evict(ctx context.Context, namespace, name string) error {
	return p.cs.PolicyV1().Evictions(namespace).Evict(ctx, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
	})
}

// DeletePod implements kubeport.Port.
func (p *Port) DeletePod(ctx context.Context, namespace, name string, grace *int64) error {
	return p.cs.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: grace})
}

// Drain implements kubeport.Port: kubectl drain's own sequence,
// RunCordonOrUncordon then RunNodeDrain, on a Helper configured as
// `kubectl drain` configures it.
//
// The error is kubectl's, word for word. kubectl formats an eviction's
// error into its message with %v, so the error also unwraps (Go's
// multi-error Unwrap) to the API errors behind it: apierrors.IsForbidden
// holds for a drain refused a permission, and errors.As finds the
// *apierrors.StatusError. A drain that fails with one API error alone
// (the pod list forbidden, say) returns that error itself.
func (p *Port) Drain(ctx context.Context, name string, opts kubeport.DrainOptions) error {
	node, err := p.GetNode(ctx, name)
	if err != nil {
		return err
	}
	rec := &evictionErrors{}
	h := p.helper(ctx, opts, recordingClient{Interface: p.cs, rec: rec})
	if err := kdrain.RunCordonOrUncordon(h, node, true); err != nil {
		return unwrapCordon(err)
	}
	return drainError(kdrain.RunNodeDrain(h, name), rec.all())
}

// helper configures kubectl's drain Helper as `kubectl drain` does by
// default (pkg/cmd/drain NewDrainCmdOptions): the pod's own grace period,
// eviction rather than delete, a 5 s retry after a 429, lists in chunks of
// 500 — and the flags of opts.
func (p *Port) helper(ctx context.Context, opts kubeport.DrainOptions, cs kubernetes.Interface) *kdrain.Helper {
	return &kdrain.Helper{
		Ctx:                             ctx,
		Client:                          cs,
		Force:                           opts.Force,
		GracePeriodSeconds:              -1,
		IgnoreAllDaemonSets:             opts.IgnoreDaemonSets,
		DeleteEmptyDirData:              opts.DeleteEmptyDirData,
		SkipWaitForDeleteTimeoutSeconds: opts.SkipWaitForDeleteTimeoutSeconds,
		Timeout:                         opts.Timeout,
		ChunkSize:                       p.opts.ChunkSize,
		EvictErrorRetryDelay:            EvictErrorRetryDelay,
		Out:                             p.opts.Out,
		ErrOut:                          p.opts.ErrOut,
	}
}

// Wait implements kubeport.Port by polling cond every PollInterval of wall
// time (wait.PollUntilContextCancel), first at once.
func (p *Port) Wait(ctx context.Context, timeout time.Duration, cond kubeport.Condition) error {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := wait.PollUntilContextCancel(wctx, p.opts.PollInterval, true, wait.ConditionWithContextFunc(cond))
	if err != nil && wctx.Err() != nil {
		// The deadline (or ctx) ended the wait; a condition that failed
		// because its own API call was cut short is part of that.
		return fmt.Errorf("%w after %s: %w", kubeport.ErrWaitTimeout, timeout, wctx.Err())
	}
	return err
}
