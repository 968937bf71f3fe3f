// Package kubeport is the small Kubernetes API that Ladder's twins and
// drivers use, so the same code can run against the in-memory twin
// (internal/kubeport/twinport) or a real cluster through client-go
// (internal/kubeport/live). internal/kubeport/conformance runs one suite of
// cases against both, so the two cannot drift apart.
//
// The port is deliberately small: read nodes, pods, PDBs and workloads;
// patch workloads, and any object by its resource as kubectl patch does; cordon, patch and drain nodes; evict and delete pods; read and patch
// Karpenter's NodePools, EC2NodeClasses and NodeClaims; and wait for a
// condition. Objects are the upstream types from k8s.io/api, returned as
// copies the caller owns. Errors from the API are the
// *apierrors.StatusError a client-go caller gets (apierrors.IsNotFound,
// IsTooManyRequests, ... work the same on both implementations).
//
// There is no Watch. A watch stream needs a producer that runs on its own,
// and the twin has none: its controllers only move when someone advances its
// virtual clock. Every consumer in Ladder waits for a state ("the node is
// drained", "the PDB allows a disruption") rather than reacting to each
// event, so the port offers Wait: level-triggered, with a deadline, honest
// on both sides (the twin runs its engine, a live cluster is polled).
package kubeport

import (
	"context"
	"errors"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Port is the Kubernetes API as Ladder uses it. Implementations are not
// required to be safe for concurrent use (the twin is not).
type Port interface {
	// Now is the implementation's clock: virtual time in the twin, the
	// wall clock on a real cluster. Durations a caller measures between two
	// port calls must use it.
	Now() time.Time

	// GetNode returns a node; a missing node is a NotFound StatusError.
	GetNode(ctx context.Context, name string) (*corev1.Node, error)
	// ListNodes returns every node, sorted by name.
	ListNodes(ctx context.Context) ([]corev1.Node, error)
	// GetPod returns a pod; a missing pod is a NotFound StatusError.
	GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	// ListPods returns the pods q selects, sorted by namespace/name.
	// Terminating pods are included, as the API server lists them.
	ListPods(ctx context.Context, q PodQuery) ([]corev1.Pod, error)
	// ListPDBs returns the PodDisruptionBudgets of a namespace ("" for all)
	// with their status, sorted by namespace/name.
	ListPDBs(ctx context.Context, namespace string) ([]policyv1.PodDisruptionBudget, error)
	// ListDeployments, ListStatefulSets and ListDaemonSets return the
	// workloads of a namespace ("" for all), sorted by namespace/name.
	ListDeployments(ctx context.Context, namespace string) ([]appsv1.Deployment, error)
	ListStatefulSets(ctx context.Context, namespace string) ([]appsv1.StatefulSet, error)
	ListDaemonSets(ctx context.Context, namespace string) ([]appsv1.DaemonSet, error)

	// PatchDeployment, PatchStatefulSet and PatchDaemonSet are PATCH on a
	// workload, as client-go's AppsV1 clients send it (kubectl patch,
	// kubectl rollout restart): a strategic merge patch, a JSON merge
	// patch or a JSON patch of the object, never its status. The result is
	// validated as the API server validates it (422 Invalid) and returned
	// with its status; a changed pod template rolls the workload out by
	// its strategy. A missing workload is NotFound, a patch that does not
	// apply 400 BadRequest.
	PatchDeployment(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) (*appsv1.Deployment, error)
	PatchStatefulSet(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) (*appsv1.StatefulSet, error)
	PatchDaemonSet(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) (*appsv1.DaemonSet, error)
	// Patch is PATCH on an object of any resource, as client-go's dynamic
	// client sends it (kubectl patch KIND NAME): namespace "" for a
	// cluster-scoped resource; a strategic merge patch (built-in kinds
	// only: a custom resource answers 415), a JSON merge patch or a JSON
	// patch of the object, never its status. It returns the object as
	// stored afterwards. A missing object is NotFound, a resource the API
	// does not serve NotFound too, a patch that does not apply 400
	// BadRequest, a result the API refuses 422 Invalid.
	Patch(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error)
	// UpdateScale is PUT on a Deployment's or StatefulSet's scale
	// subresource, what kubectl scale changes: spec.replicas becomes
	// replicas, and the workload's controller adds or removes pods. A
	// missing workload is NotFound, a negative count 422 Invalid.
	UpdateScale(ctx context.Context, w Workload, replicas int32) (*autoscalingv1.Scale, error)

	// Cordon and Uncordon set spec.unschedulable, as kubectl cordon and
	// uncordon do (k8s.io/kubectl/pkg/drain.RunCordonOrUncordon). The
	// node.kubernetes.io/unschedulable:NoSchedule taint follows from the
	// node lifecycle controller, at once in the twin and shortly after on a
	// real cluster.
	Cordon(ctx context.Context, node string) error
	Uncordon(ctx context.Context, node string) error
	// PatchNode changes a node's labels, annotations and taints and returns
	// the node as stored afterwards.
	PatchNode(ctx context.Context, node string, p NodePatch) (*corev1.Node, error)

	// Evict is POST pods/NAME/eviction with a policy/v1 Eviction
	// (semantics.md §D.1). nil means the API server accepted it (201); a
	// refusal is the StatusError a client gets: 429 TooManyRequests with a
	// DisruptionBudget cause for an exhausted PDB, 500 for a pod selected by
	// more than one PDB, 404 for a missing pod.
	Evict(ctx context.Context, namespace, name string) error
	// DeletePod is DELETE pods/NAME, which does not consult PDBs. grace nil
	// means the pod's own terminationGracePeriodSeconds.
	DeletePod(ctx context.Context, namespace, name string, grace *int64) error

	// Drain is kubectl drain NODE (semantics.md §D.3): cordon, then
	// k8s.io/kubectl/pkg/drain.RunNodeDrain — the filters refuse the whole
	// drain with "cannot delete ..." before anything is evicted, a 429 is
	// retried every 5 s, any other eviction error fails that pod, and Drain
	// returns once every evicted pod is gone. It returns nil on success.
	Drain(ctx context.Context, node string, opts DrainOptions) error

	// Wait returns nil as soon as cond holds, cond's error if it fails, or
	// an error wrapping ErrWaitTimeout once timeout has passed on the
	// port's clock (Now) or ctx is done. The twin advances virtual time
	// while it waits; a real cluster is polled.
	Wait(ctx context.Context, timeout time.Duration, cond Condition) error

	// Karpenter's NodePools, EC2NodeClasses and NodeClaims (karpenter.go).
	Karpenter
}

// PodQuery selects pods; zero fields select everything.
type PodQuery struct {
	Namespace string          // "" for every namespace
	Node      string          // spec.nodeName; "" for any
	Selector  labels.Selector // nil for every pod
}

// DrainOptions are the kubectl drain flags both implementations honour.
type DrainOptions struct {
	Force              bool // --force: delete pods that declare no controller
	IgnoreDaemonSets   bool // --ignore-daemonsets
	DeleteEmptyDirData bool // --delete-emptydir-data
	// SkipWaitForDeleteTimeoutSeconds is --skip-wait-for-delete-timeout:
	// pods deleting for longer than this are skipped (0 = off).
	SkipWaitForDeleteTimeoutSeconds int
	// Timeout is --timeout: the whole drain fails after it (0 = no limit).
	Timeout time.Duration
}

// Condition reports whether what a caller waits for holds. It reads the
// cluster through the port; an error stops the wait.
type Condition func(ctx context.Context) (done bool, err error)

// ErrWaitTimeout is wrapped by Wait's error when the deadline passes
// before the condition holds.
var ErrWaitTimeout = errors.New("timed out waiting for the condition")
