package inventory

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"

	"github.com/ladder-eks/ladder/internal/kubelist"
)

var nodeClaims = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}

// FromCluster inventories a live cluster: it lists nodes, pods and the
// ReplicaSets and Jobs that own pods (to name their Deployments and
// CronJobs), and Karpenter's NodeClaims for the AMIs of Karpenter nodes.
// dyn may be nil; then NodeClaims are not read. Errors say what could not
// be listed and why (unreachable, unauthorized, forbidden: which verb on
// which resource).
func FromCluster(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, src Source) (*Inventory, error) {
	var in Input
	err := listAll(ctx, "nodes", "", kubelist.Page(cs.CoreV1().Nodes().List), func(n *corev1.Node) {
		in.Nodes = append(in.Nodes, n)
	})
	if err != nil {
		return nil, err
	}
	in.Pods, err = ListPods(ctx, cs)
	if err != nil {
		return nil, err
	}
	if dyn != nil {
		in.Images = nodeClaimImages(ctx, dyn)
	}
	return Build(src, in), nil
}

// ListPods lists every pod of the cluster with the workload it belongs to.
func ListPods(ctx context.Context, cs kubernetes.Interface) ([]Pod, error) {
	var pods []*corev1.Pod
	err := listAll(ctx, "pods", "", kubelist.Page(cs.CoreV1().Pods("").List), func(p *corev1.Pod) {
		pods = append(pods, p)
	})
	if err != nil {
		return nil, err
	}
	owners, err := listOwners(ctx, cs, pods)
	if err != nil {
		return nil, err
	}
	out := make([]Pod, 0, len(pods))
	for _, p := range pods {
		out = append(out, Pod{Pod: p, Workload: owners.workloadOf(p)})
	}
	return out, nil
}

// owners maps the intermediate owners of pods to the workloads users wrote:
// a ReplicaSet to its Deployment, a Job to its CronJob.
type owners struct {
	replicaSets map[string]metav1.OwnerReference // namespace/name → controller
	jobs        map[string]metav1.OwnerReference
}

func listOwners(ctx context.Context, cs kubernetes.Interface, pods []*corev1.Pod) (*owners, error) {
	o := &owners{replicaSets: map[string]metav1.OwnerReference{}, jobs: map[string]metav1.OwnerReference{}}
	needRS, needJobs := false, false
	for _, p := range pods {
		if ref := metav1.GetControllerOf(p); ref != nil {
			needRS = needRS || ref.Kind == "ReplicaSet"
			needJobs = needJobs || ref.Kind == "Job"
		}
	}
	if needRS {
		err := listAll(ctx, "replicasets", "apps", kubelist.Page(cs.AppsV1().ReplicaSets("").List), func(rs *appsv1.ReplicaSet) {
			addOwner(o.replicaSets, &rs.ObjectMeta)
		})
		if err != nil {
			return nil, err
		}
	}
	if needJobs {
		err := listAll(ctx, "jobs", "batch", kubelist.Page(cs.BatchV1().Jobs("").List), func(j *batchv1.Job) {
			addOwner(o.jobs, &j.ObjectMeta)
		})
		if err != nil {
			return nil, err
		}
	}
	return o, nil
}

func addOwner(m map[string]metav1.OwnerReference, meta *metav1.ObjectMeta) {
	if ref := metav1.GetControllerOfNoCopy(meta); ref != nil {
		m[meta.Namespace+"/"+meta.Name] = *ref
	}
}

// workloadOf names the workload a pod belongs to: its controller, or the
// controller's own controller for a ReplicaSet or a Job; the pod itself
// when nothing controls it.
func (o *owners) workloadOf(p *corev1.Pod) Workload {
	ref := metav1.GetControllerOf(p)
	if ref == nil {
		return Workload{Namespace: p.Namespace, Kind: "Pod", Name: p.Name}
	}
	var up map[string]metav1.OwnerReference
	switch {
	case ref.Kind == "ReplicaSet" && ref.APIVersion == appsv1.SchemeGroupVersion.String():
		up = o.replicaSets
	case ref.Kind == "Job" && ref.APIVersion == batchv1.SchemeGroupVersion.String():
		up = o.jobs
	}
	if parent, ok := up[p.Namespace+"/"+ref.Name]; ok {
		return Workload{Namespace: p.Namespace, Kind: parent.Kind, Name: parent.Name}
	}
	return Workload{Namespace: p.Namespace, Kind: ref.Kind, Name: ref.Name}
}

// nodeClaimImages maps Karpenter nodes to the AMI their NodeClaim reports
// (status.imageID). Clusters without Karpenter, or a user who may not list
// NodeClaims, simply get none: the AMI column then says what the labels say.
func nodeClaimImages(ctx context.Context, dyn dynamic.Interface) map[string]string {
	out := map[string]string{}
	err := kubelist.Each(ctx, kubelist.ChunkSize, metav1.ListOptions{}, kubelist.Page(dyn.Resource(nodeClaims).List), func(item *unstructured.Unstructured) error {
		node, _, _ := unstructured.NestedString(item.Object, "status", "nodeName")
		image, _, _ := unstructured.NestedString(item.Object, "status", "imageID")
		if node != "" && image != "" {
			out[node] = image
		}
		return nil
	})
	if err != nil {
		return map[string]string{}
	}
	return out
}

// listAll lists a resource of group in pages (kubelist: client-go's pager,
// which lists everything in one request when a continue token has
// expired) and calls fn with each item; an error says what could not be
// listed and why (ListError).
func listAll[PT runtime.Object](ctx context.Context, resource, group string, page pager.ListPageFunc, fn func(PT)) error {
	err := kubelist.Each(ctx, kubelist.ChunkSize, metav1.ListOptions{}, page, func(item PT) error {
		fn(item)
		return nil
	})
	if err != nil {
		return ListError(resource, group, err)
	}
	return nil
}

// ListError turns a failed List into a one-line error that says what could
// not be read, why, and what to do.
func ListError(resource, group string, err error) error {
	what := resource
	if group != "" {
		what = resource + "." + group
	}
	var status apierrors.APIStatus
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("forbidden to list %s at the cluster scope: %v (grant the verb list on %s in every namespace; check with: kubectl auth can-i list %s --all-namespaces)", what, reason(err), what, what)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("listing %s: the API server refused the credentials (401 Unauthorized): refresh them (for EKS: aws eks update-kubeconfig --name CLUSTER) or pick another --context", what)
	case errors.As(err, &status):
		return fmt.Errorf("listing %s: %v", what, err)
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return fmt.Errorf("cannot reach the API server at %s: %v (is the cluster up? check --kubeconfig and --context)", redact(uerr.URL), uerr.Err)
	}
	return fmt.Errorf("listing %s: %v", what, err)
}

func reason(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	return err.Error()
}

// redact keeps the scheme and host of a request URL.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	return u.Scheme + "://" + u.Host
}
