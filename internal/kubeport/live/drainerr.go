package live

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/kubernetes"
	policyv1client "k8s.io/client-go/kubernetes/typed/policy/v1"
)

// kubectl's drain formats an eviction's error into its own with %v
// ("error when evicting pods/%q -n %q: %v"), which keeps the words and
// loses the *apierrors.StatusError. recordingClient passes every call
// through to the clientset unchanged and notes the eviction errors kubectl
// gives up on, so that Drain's error can unwrap to them.

// recordingClient is the clientset, with policy/v1 evictions recorded.
type recordingClient struct {
	kubernetes.Interface
	rec *evictionErrors
}

func (c recordingClient) PolicyV1() policyv1client.PolicyV1Interface {
	return recordingPolicy{PolicyV1Interface: c.Interface.PolicyV1(), rec: c.rec}
}

type recordingPolicy struct {
	policyv1client.PolicyV1Interface
	rec *evictionErrors
}

func (p recordingPolicy) Evictions(namespace string) policyv1client.EvictionInterface {
	return recordingEvictions{EvictionInterface: p.PolicyV1Interface.Evictions(namespace), rec: p.rec}
}

type recordingEvictions struct {
	policyv1client.EvictionInterface
	rec *evictionErrors
}

func (e recordingEvictions) Evict(ctx context.Context, eviction *policyv1.Eviction) error {
	err := e.EvictionInterface.Evict(ctx, eviction)
	e.rec.add(err)
	return err
}

// evictionErrors collects, safely for kubectl's concurrent evictions, the
// API errors that end a pod's eviction loop in kubectl's evictPods: all
// but success, 404 (the pod is gone), 429 (retried) and the 403 of a
// terminating namespace (retried, or waited out).
type evictionErrors struct {
	mu   sync.Mutex
	errs []error
}

func (r *evictionErrors) add(err error) {
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsTooManyRequests(err) ||
		(apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)) {
		return
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return // a transport error: kubectl's message says it all
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

func (r *evictionErrors) all() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

// drainError turns RunNodeDrain's error into Drain's. An aggregate of one
// API error (GetPodsForDeletion's list refused, say) is that error: the
// aggregate's message is its message. Otherwise the error keeps kubectl's
// message and unwraps to what it aggregates and to the eviction errors
// recorded on the way.
func drainError(err error, evictions []error) error {
	if err == nil {
		return nil
	}
	var parts []error
	if agg, ok := err.(utilerrors.Aggregate); ok {
		parts = agg.Errors()
	} else {
		parts = []error{err}
	}
	if len(parts) == 1 && len(evictions) == 0 {
		if _, ok := parts[0].(apierrors.APIStatus); ok {
			return parts[0]
		}
	}
	if len(evictions) == 0 {
		if _, ok := err.(utilerrors.Aggregate); !ok {
			return err
		}
	}
	// kubectl's evictions run concurrently and finish in any order; a
	// refusal for want of permission is what a caller most needs to find
	// (errors.As, apierrors.IsForbidden take the first), so it goes first.
	slices.SortStableFunc(evictions, func(a, b error) int {
		return cmp.Compare(b2i(!apierrors.IsForbidden(a)), b2i(!apierrors.IsForbidden(b)))
	})
	return &kubectlError{err: err, causes: append(evictions, parts...)}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// kubectlError is an error of kubectl's drain library, with its message,
// that unwraps to the errors behind it. It is a utilerrors.Aggregate, as
// kubectl's drain errors are.
type kubectlError struct {
	err    error
	causes []error
}

func (e *kubectlError) Error() string   { return e.err.Error() }
func (e *kubectlError) Unwrap() []error { return e.causes }

// Errors is the aggregate's errors, when kubectl returned an aggregate.
func (e *kubectlError) Errors() []error {
	if agg, ok := e.err.(utilerrors.Aggregate); ok {
		return agg.Errors()
	}
	return []error{e.err}
}

// Is is the aggregate's: whether any of its errors is target.
func (e *kubectlError) Is(target error) bool {
	if agg, ok := e.err.(utilerrors.Aggregate); ok {
		return agg.Is(target)
	}
	return false
}

var _ utilerrors.Aggregate = (*kubectlError)(nil)
