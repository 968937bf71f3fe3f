// Package drain ports the pod filters of kubectl drain
// (k8s.io/kubectl/pkg/drain, filters.go and GetPodsForDeletion in drain.go)
// as pure functions over a node's pods: no clientset, and the clock is a
// parameter (semantics.md §D.3).
//
// The statuses are upstream's own types (PodDelete, PodDeleteStatus, the
// MakePodDeleteStatus* helpers); List mirrors PodDeleteList. The
// differential test compares this port with (&drain.Helper{...})
// .GetPodsForDeletion against a fake clientset.
package drain

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kdrain "k8s.io/kubectl/pkg/drain"
)

// Messages of the upstream filters (filters.go; unexported there).
const (
	DaemonSetFatal      = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
	DaemonSetWarning    = "ignoring DaemonSet-managed Pods"
	LocalStorageFatal   = "Pods with local storage (use --delete-emptydir-data to override)"
	LocalStorageWarning = "deleting Pods with local storage"
	UnmanagedFatal      = "Pods that declare no controller (use --force to override)"
	UnmanagedWarning    = "deleting Pods that declare no controller"
)

// Options are the kubectl drain flags that influence the filters.
type Options struct {
	Force               bool // --force
	IgnoreAllDaemonSets bool // --ignore-daemonsets
	DeleteEmptyDirData  bool // --delete-emptydir-data
	// SkipWaitForDeleteTimeoutSeconds is --skip-wait-for-delete-timeout:
	// pods whose deletionTimestamp is more than N seconds old are skipped
	// (0 = off).
	SkipWaitForDeleteTimeoutSeconds int
}

// DaemonSetLookup reports whether the DaemonSet namespace/name exists (the
// upstream filter GETs it). A nil lookup means no DaemonSet exists.
type DaemonSetLookup func(namespace, name string) (exists bool)

// PodsForDeletion is GetPodsForDeletion after the pod list: pods are the
// pods bound to the node, in list order (the apiserver lists by
// namespace/name). Each pod goes through skipDeleted, daemonSet, mirrorPod,
// localStorage and unreplicated, stopping at the first filter that does not
// delete it; only that filter's status is kept (semantics.md §D.3).
//
// errs is nil when no pod has an Error status; otherwise it holds one
// "cannot delete <message>: ns/pod, ns/pod" error per distinct message, like
// upstream's unexported PodDeleteList.errors(). Upstream builds them from a
// map, so its order is random; here they come in order of first appearance,
// which is one of the orders upstream can produce. Any error aborts a drain
// before anything is evicted.
func PodsForDeletion(pods []corev1.Pod, opts Options, daemonSetExists DaemonSetLookup, now time.Time) (*List, []error) {
	f := filters{opts: opts, dsExists: daemonSetExists, now: now}
	chain := []Filter{
		f.skipDeletedFilter,
		f.daemonSetFilter,
		SkipMirror, // upstream mirrorPodFilter
		f.localStorageFilter,
		f.unreplicatedFilter,
	}
	items := make([]kdrain.PodDelete, 0, len(pods))
	for _, pod := range pods {
		status := Decide(&pod, chain)
		pod.Kind = "Pod"
		pod.APIVersion = "v1"
		items = append(items, kdrain.PodDelete{Pod: pod, Status: status})
	}
	list := &List{Items: items}
	if errs := listErrors(items); len(errs) > 0 {
		return list, errs
	}
	return list, nil
}

type filters struct {
	opts     Options
	dsExists DaemonSetLookup
	now      time.Time
}

func hasLocalStorage(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir != nil {
			return true
		}
	}
	return false
}

// shouldSkipPod is upstream shouldSkipPod with time.Now replaced by now.
// Note the truncation to whole seconds before the strict comparison.
func shouldSkipPod(pod *corev1.Pod, skipDeletedTimeoutSeconds int, now time.Time) bool {
	return skipDeletedTimeoutSeconds > 0 &&
		!pod.DeletionTimestamp.IsZero() &&
		int(now.Sub(pod.GetDeletionTimestamp().Time).Seconds()) > skipDeletedTimeoutSeconds
}

func (f filters) skipDeletedFilter(pod *corev1.Pod) kdrain.PodDeleteStatus {
	if shouldSkipPod(pod, f.opts.SkipWaitForDeleteTimeoutSeconds, f.now) {
		return kdrain.MakePodDeleteStatusSkip()
	}
	return kdrain.MakePodDeleteStatusOkay()
}

func (f filters) daemonSetFilter(pod *corev1.Pod) kdrain.PodDeleteStatus {
	if !IsDaemonSetPod(pod) {
		return kdrain.MakePodDeleteStatusOkay()
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if IsTerminal(pod) {
		return kdrain.MakePodDeleteStatusOkay()
	}
	if f.dsExists == nil || !f.dsExists(pod.Namespace, ref.Name) {
		// The apiserver's NotFound text: daemonsets.apps "NAME" not found.
		err := apierrors.NewNotFound(appsv1.Resource("daemonsets"), ref.Name)
		if f.opts.Force {
			return kdrain.MakePodDeleteStatusWithWarning(true, err.Error())
		}
		return kdrain.MakePodDeleteStatusWithError(err.Error())
	}
	if !f.opts.IgnoreAllDaemonSets {
		return kdrain.MakePodDeleteStatusWithError(DaemonSetFatal)
	}
	return kdrain.MakePodDeleteStatusWithWarning(false, DaemonSetWarning)
}

func (f filters) localStorageFilter(pod *corev1.Pod) kdrain.PodDeleteStatus {
	if !hasLocalStorage(pod) {
		return kdrain.MakePodDeleteStatusOkay()
	}
	if IsTerminal(pod) {
		return kdrain.MakePodDeleteStatusOkay()
	}
	if !f.opts.DeleteEmptyDirData {
		return kdrain.MakePodDeleteStatusWithError(LocalStorageFatal)
	}
	// Upstream: this warning is overwritten by the next filter's Okay.
	return kdrain.MakePodDeleteStatusWithWarning(true, LocalStorageWarning)
}

func (f filters) unreplicatedFilter(pod *corev1.Pod) kdrain.PodDeleteStatus {
	if IsTerminal(pod) {
		return kdrain.MakePodDeleteStatusOkay()
	}
	if metav1.GetControllerOfNoCopy(pod) != nil {
		return kdrain.MakePodDeleteStatusOkay()
	}
	if f.opts.Force {
		return kdrain.MakePodDeleteStatusWithWarning(true, UnmanagedWarning)
	}
	return kdrain.MakePodDeleteStatusWithError(UnmanagedFatal)
}

// listErrors is upstream PodDeleteList.errors() with a stable order.
func listErrors(items []kdrain.PodDelete) []error {
	msgs, byMsg := groupByMessage(items, kdrain.PodDeleteStatusTypeError, "unexpected error")
	errs := make([]error, 0, len(msgs))
	for _, m := range msgs {
		errs = append(errs, fmt.Errorf("cannot delete %s: %s", m, strings.Join(byMsg[m], ", ")))
	}
	return errs
}

// StableWarnings is upstream PodDeleteList.Warnings() with messages in order
// of first appearance instead of map order: "msg: ns/a, ns/b; msg2: ns/c".
// Upstream's Warnings() returns the same parts, possibly in another order.
func StableWarnings(items []kdrain.PodDelete) string {
	msgs, byMsg := groupByMessage(items, kdrain.PodDeleteStatusTypeWarning, "")
	parts := make([]string, 0, len(msgs))
	for _, m := range msgs {
		parts = append(parts, fmt.Sprintf("%s: %s", m, strings.Join(byMsg[m], ", ")))
	}
	return strings.Join(parts, "; ")
}

func groupByMessage(items []kdrain.PodDelete, reason, emptyMsg string) ([]string, map[string][]string) {
	var order []string
	byMsg := map[string][]string{}
	for _, i := range items {
		if i.Status.Reason != reason {
			continue
		}
		msg := i.Status.Message
		if msg == "" && emptyMsg != "" {
			msg = emptyMsg
		}
		if _, seen := byMsg[msg]; !seen {
			order = append(order, msg)
		}
		byMsg[msg] = append(byMsg[msg], fmt.Sprintf("%s/%s", i.Pod.Namespace, i.Pod.Name))
	}
	return order, byMsg
}
