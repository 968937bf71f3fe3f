package capture

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/ladder-eks/ladder/internal/kubelist"
)

// Karpenter's kinds, read through the dynamic client.
var (
	nodePools      = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	nodeClaims     = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}
	ec2NodeClasses = schema.GroupVersionResource{Group: "karpenter.k8s.aws", Version: "v1", Resource: "ec2nodeclasses"}
)

// builtinNamespaces exist in every cluster; the twin has them too.
var builtinNamespaces = map[string]bool{"default": true, "kube-system": true, "kube-public": true, "kube-node-lease": true}

// kubeState is what the API server holds that a scenario needs.
type kubeState struct {
	nodes      []corev1.Node
	pods       []corev1.Pod
	nodeClaims []karpv1.NodeClaim
	nodePools  []string
	// objects are the manifests to write: typed objects with their
	// TypeMeta set, in no particular order (files sorts them).
	objects []runtime.Object
	notes   []string
}

// readKube lists nodes, pods, NodeClaims and the kinds the twin models.
func readKube(ctx context.Context, src Source) (*kubeState, error) {
	k := &kubeState{}
	c := src.Kube
	var err error
	if k.nodes, err = list[corev1.Node](ctx, "nodes", kubelist.Page(c.CoreV1().Nodes().List)); err != nil {
		return nil, err
	}
	if k.pods, err = list[corev1.Pod](ctx, "pods", kubelist.Page(c.CoreV1().Pods("").List)); err != nil {
		return nil, err
	}
	namespaces, err := list[corev1.Namespace](ctx, "namespaces", kubelist.Page(c.CoreV1().Namespaces().List))
	if err != nil {
		return nil, err
	}
	for i := range namespaces {
		if !builtinNamespaces[namespaces[i].Name] {
			k.add(&namespaces[i], corev1.SchemeGroupVersion.WithKind("Namespace"))
		}
	}
	if err := collect[storagev1.StorageClass](ctx, k, "storageclasses", kubelist.Page(c.StorageV1().StorageClasses().List), storagev1.SchemeGroupVersion.WithKind("StorageClass"), nil); err != nil {
		return nil, err
	}
	// system-cluster-critical and system-node-critical are the API
	// server's own.
	if err := collect[schedulingv1.PriorityClass](ctx, k, "priorityclasses", kubelist.Page(c.SchedulingV1().PriorityClasses().List), schedulingv1.SchemeGroupVersion.WithKind("PriorityClass"),
		func(p *schedulingv1.PriorityClass) bool { return !strings.HasPrefix(p.Name, "system-") }); err != nil {
		return nil, err
	}
	if err := collect[corev1.PersistentVolume](ctx, k, "persistentvolumes", kubelist.Page(c.CoreV1().PersistentVolumes().List), corev1.SchemeGroupVersion.WithKind("PersistentVolume"), nil); err != nil {
		return nil, err
	}
	if err := collect[corev1.PersistentVolumeClaim](ctx, k, "persistentvolumeclaims", kubelist.Page(c.CoreV1().PersistentVolumeClaims("").List), corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), nil); err != nil {
		return nil, err
	}
	if err := collect[appsv1.Deployment](ctx, k, "deployments", kubelist.Page(c.AppsV1().Deployments("").List), appsv1.SchemeGroupVersion.WithKind("Deployment"), nil); err != nil {
		return nil, err
	}
	if err := collect[appsv1.StatefulSet](ctx, k, "statefulsets", kubelist.Page(c.AppsV1().StatefulSets("").List), appsv1.SchemeGroupVersion.WithKind("StatefulSet"), nil); err != nil {
		return nil, err
	}
	if err := collect[appsv1.DaemonSet](ctx, k, "daemonsets", kubelist.Page(c.AppsV1().DaemonSets("").List), appsv1.SchemeGroupVersion.WithKind("DaemonSet"), nil); err != nil {
		return nil, err
	}
	if err := collect[policyv1.PodDisruptionBudget](ctx, k, "poddisruptionbudgets", kubelist.Page(c.PolicyV1().PodDisruptionBudgets("").List), policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"), nil); err != nil {
		return nil, err
	}
	// A pod no controller owns is a manifest of its own (kubectl drain
	// refuses to delete it without --force; the twin does the same).
	for i := range k.pods {
		p := &k.pods[i]
		if metav1.GetControllerOf(p) != nil || p.Annotations[corev1.MirrorPodAnnotationKey] != "" || terminal(p) {
			continue
		}
		bare := p.DeepCopy()
		bare.Spec.NodeName = "" // the twin's nodes have other names: the scheduler places it
		k.add(bare, corev1.SchemeGroupVersion.WithKind("Pod"))
	}
	if src.Dynamic != nil {
		if err := k.readKarpenter(ctx, src); err != nil {
			return nil, err
		}
	}
	return k, nil
}

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// list reads every item of a kind, in pages.
func list[T any, PT interface {
	*T
	runtime.Object
}](ctx context.Context, resource string, page func(context.Context, metav1.ListOptions) (runtime.Object, error)) ([]T, error) {
	items, err := kubelist.All[T, PT](ctx, kubelist.ChunkSize, metav1.ListOptions{}, page)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", resource, err)
	}
	return items, nil
}

// collect lists a kind and keeps the items keep accepts (nil: all).
func collect[T any, PT interface {
	*T
	runtime.Object
	metav1.Object
}](ctx context.Context, k *kubeState, resource string, page func(context.Context, metav1.ListOptions) (runtime.Object, error), gvk schema.GroupVersionKind, keep func(PT) bool) error {
	items, err := list[T, PT](ctx, resource, page)
	if err != nil {
		return err
	}
	for i := range items {
		if keep == nil || keep(&items[i]) {
			k.add(PT(&items[i]), gvk)
		}
	}
	return nil
}

// readKarpenter reads NodePools and EC2NodeClasses as manifests and the
// NodeClaims for the nodes they launched. A cluster without Karpenter's
// CRDs has none.
func (k *kubeState) readKarpenter(ctx context.Context, src Source) error {
	for _, gvr := range []schema.GroupVersionResource{ec2NodeClasses, nodePools, nodeClaims} {
		l, err := src.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("list %s: %w", gvr.GroupResource(), err)
		}
		for i := range l.Items {
			u := &l.Items[i]
			switch gvr {
			case nodePools:
				k.nodePools = append(k.nodePools, u.GetName())
			case nodeClaims:
				var nc karpv1.NodeClaim
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &nc); err != nil {
					return fmt.Errorf("nodeclaim %s: %w", u.GetName(), err)
				}
				k.nodeClaims = append(k.nodeClaims, nc)
				continue
			}
			k.addUnstructured(u)
		}
	}
	return nil
}

func (k *kubeState) add(obj runtime.Object, gvk schema.GroupVersionKind) {
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	k.objects = append(k.objects, obj)
}

func (k *kubeState) addUnstructured(u *unstructured.Unstructured) {
	k.objects = append(k.objects, u.DeepCopy())
}

// zones are the zones the nodes run in, sorted.
func (k *kubeState) zones() []string {
	set := map[string]bool{}
	for _, n := range k.nodes {
		if z := n.Labels[corev1.LabelTopologyZone]; z != "" {
			set[z] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// files are the manifests, one file per namespace (manifests/NS.yaml) and
// one for the cluster-scoped kinds (manifests/cluster.yaml), each object
// stripped (strip) in apply order: by kind, then namespace and name.
func (k *kubeState) files(c *Capture) []File {
	type entry struct {
		rank          int
		kind, ns, key string
		data          map[string]any
	}
	byFile := map[string][]entry{}
	for _, obj := range k.objects {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			k.notes = append(k.notes, fmt.Sprintf("%T left out: %v", obj, err))
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		strip(u)
		kind := u.GetKind()
		file := "manifests/cluster.yaml"
		if ns := u.GetNamespace(); ns != "" {
			file = "manifests/" + ns + ".yaml"
		}
		c.Counts[kind]++
		byFile[file] = append(byFile[file], entry{rank: kindRank[kind], kind: kind, ns: u.GetNamespace(), key: u.GetName(), data: u.Object})
	}
	var out []File
	for _, path := range slices.Sorted(maps.Keys(byFile)) {
		entries := byFile[path]
		slices.SortFunc(entries, func(a, b entry) int {
			if a.rank != b.rank {
				return a.rank - b.rank
			}
			if a.kind != b.kind {
				return strings.Compare(a.kind, b.kind)
			}
			return strings.Compare(a.key, b.key)
		})
		var b strings.Builder
		for i, e := range entries {
			if i > 0 {
				b.WriteString("---\n")
			}
			y, err := yaml.Marshal(e.data)
			if err != nil {
				k.notes = append(k.notes, fmt.Sprintf("%s %s/%s left out: %v", e.kind, e.ns, e.key, err))
				continue
			}
			b.Write(y)
		}
		out = append(out, File{Path: path, Data: []byte(b.String())})
	}
	// cluster.yaml first: namespaces and classes before what uses them.
	slices.SortStableFunc(out, func(a, b File) int {
		return boolRank(b.Path == "manifests/cluster.yaml") - boolRank(a.Path == "manifests/cluster.yaml")
	})
	return out
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// kindRank orders a file's objects as they are applied: what others
// refer to first.
var kindRank = map[string]int{
	"Namespace": 0, "StorageClass": 1, "PriorityClass": 1, "EC2NodeClass": 2, "NodePool": 3,
	"PersistentVolume": 4, "PersistentVolumeClaim": 5,
}

// strip removes what the API server and controllers set, so the object
// reads as a manifest someone applies: status, uid, resourceVersion,
// generation, creationTimestamp, managedFields, owner references and
// finalizers, kubectl's last-applied annotation and the revision and
// binding annotations controllers write. A PersistentVolume keeps its
// claimRef (by namespace and name) and a claim its volumeName: the pair
// stays bound, and the volume's zone with it.
func strip(u *unstructured.Unstructured) {
	delete(u.Object, "status")
	md, _ := u.Object["metadata"].(map[string]any)
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "ownerReferences", "finalizers", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		delete(md, f)
	}
	if ann, ok := md["annotations"].(map[string]any); ok {
		for a := range ann {
			if serverAnnotation(a) {
				delete(ann, a)
			}
		}
		if len(ann) == 0 {
			delete(md, "annotations")
		}
	}
	switch u.GetKind() {
	case "PersistentVolume":
		if ref, found, err := unstructured.NestedMap(u.Object, "spec", "claimRef"); found && err == nil {
			for _, f := range []string{"uid", "resourceVersion", "apiVersion", "kind"} {
				delete(ref, f)
			}
			_ = unstructured.SetNestedMap(u.Object, ref, "spec", "claimRef")
		}
	}
}

// serverAnnotation reports whether the API server or a controller writes
// the annotation (not the object's author).
func serverAnnotation(a string) bool {
	switch a {
	case corev1.LastAppliedConfigAnnotation, "deployment.kubernetes.io/revision",
		"pv.kubernetes.io/bind-completed", "pv.kubernetes.io/bound-by-controller", "pv.kubernetes.io/provisioned-by",
		"volume.beta.kubernetes.io/storage-provisioner", "volume.kubernetes.io/storage-provisioner",
		"deprecated.daemonset.template.generation", "karpenter.sh/nodepool-hash", "karpenter.sh/nodepool-hash-version",
		"karpenter.k8s.aws/ec2nodeclass-hash", "karpenter.k8s.aws/ec2nodeclass-hash-version":
		return true
	}
	return false
}
