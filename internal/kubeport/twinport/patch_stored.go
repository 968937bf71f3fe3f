package twinport

import (
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// storedKind is a kind Patch applies to the twin itself.
type storedKind struct {
	kind string
	// get reads the object, nil when there is none; new makes an empty
	// one, without status.
	get func(p *Port, namespace, name string) metav1.Object
	new func() metav1.Object
	// clearStatus drops what the patch brought of the status.
	clearStatus func(metav1.Object)
	// asApplied: get reads Options.Applied, the caller's record, which the
	// twin's apply does not change: Patch returns the patched object.
	asApplied bool
}

var storedKinds = map[schema.GroupVersionResource]storedKind{
	policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"): {kind: "PodDisruptionBudget",
		get: func(p *Port, namespace, name string) metav1.Object {
			return deepCopyOf(findIn(p.c.PDBs(namespace), name))
		},
		new:         func() metav1.Object { return &policyv1.PodDisruptionBudget{} },
		clearStatus: func(o metav1.Object) { o.(*policyv1.PodDisruptionBudget).Status = policyv1.PodDisruptionBudgetStatus{} }},
	schedulingv1.SchemeGroupVersion.WithResource("priorityclasses"): {kind: "PriorityClass",
		get: func(p *Port, _, name string) metav1.Object { return deepCopyOf(p.c.PriorityClass(name)) },
		new: func() metav1.Object { return &schedulingv1.PriorityClass{} }},
	corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"): {kind: "PersistentVolumeClaim",
		get: func(p *Port, namespace, name string) metav1.Object {
			for _, c := range p.c.PersistentVolumeClaims() {
				if c.Namespace == namespace && c.Name == name {
					return c.DeepCopy()
				}
			}
			return nil
		},
		new:         func() metav1.Object { return &corev1.PersistentVolumeClaim{} },
		clearStatus: func(o metav1.Object) { o.(*corev1.PersistentVolumeClaim).Status = corev1.PersistentVolumeClaimStatus{} }},
	corev1.SchemeGroupVersion.WithResource("pods"): {kind: "Pod",
		get: func(p *Port, namespace, name string) metav1.Object { return deepCopyOf(p.c.Pod(namespace, name)) },
		new: func() metav1.Object { return &corev1.Pod{} },
		// The twin refuses to update a pod, as the API server refuses
		// to change most of its spec.
		clearStatus: func(o metav1.Object) { o.(*corev1.Pod).Status = corev1.PodStatus{} }},
	corev1.SchemeGroupVersion.WithResource("namespaces"): {kind: "Namespace", asApplied: true,
		get:         func(p *Port, _, name string) metav1.Object { return p.applied("Namespace", "", name) },
		new:         func() metav1.Object { return &corev1.Namespace{} },
		clearStatus: func(o metav1.Object) { o.(*corev1.Namespace).Status = corev1.NamespaceStatus{} }},
	storagev1.SchemeGroupVersion.WithResource("storageclasses"): {kind: "StorageClass", asApplied: true,
		get: func(p *Port, _, name string) metav1.Object { return p.applied("StorageClass", "", name) },
		new: func() metav1.Object { return &storagev1.StorageClass{} }},
	corev1.SchemeGroupVersion.WithResource("persistentvolumes"): {kind: "PersistentVolume", asApplied: true,
		get:         func(p *Port, _, name string) metav1.Object { return p.applied("PersistentVolume", "", name) },
		new:         func() metav1.Object { return &corev1.PersistentVolume{} },
		clearStatus: func(o metav1.Object) { o.(*corev1.PersistentVolume).Status = corev1.PersistentVolumeStatus{} }},
}

// deepCopyOf is a copy of a stored object, nil for none.
func deepCopyOf[T any, PT interface {
	*T
	runtime.Object
}](o PT) metav1.Object {
	if o == nil {
		return nil
	}
	return o.DeepCopyObject().(metav1.Object)
}

// applied is Options.Applied's object, nil without one.
func (p *Port) applied(kind, namespace, name string) metav1.Object {
	if p.opts.Applied == nil {
		return nil
	}
	return p.opts.Applied(kind, namespace, name)
}
