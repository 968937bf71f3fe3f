package drain

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What a pod is, as every drain decides it: kubectl's, EKS's and
// Karpenter's (semantics.md §D.3, §B, §A.4), the in-memory cluster's node
// accounting and the drain prediction all ask these.

// IsDaemonSetPod reports whether a DaemonSet controls the pod: its
// controller reference is Kind DaemonSet with APIVersion apps/v1, as
// kubectl's daemonSetFilter (isControllerRefDaemonSet) and Karpenter's
// pod.IsOwnedByDaemonSet both require.
func IsDaemonSetPod(pod *corev1.Pod) bool {
	ref := metav1.GetControllerOfNoCopy(pod)
	return ref != nil && isControllerRefDaemonSet(ref)
}

// daemonSetAPIVersion and daemonSetKind are apps/v1 and DaemonSet, worked
// out once: IsDaemonSetPod runs per pod on the twin's hot paths.
var daemonSetAPIVersion, daemonSetKind = appsv1.SchemeGroupVersion.WithKind("DaemonSet").ToAPIVersionAndKind()

// isControllerRefDaemonSet: Kind DaemonSet and APIVersion exactly apps/v1.
func isControllerRefDaemonSet(ref *metav1.OwnerReference) bool {
	return ref.Kind == daemonSetKind && ref.APIVersion == daemonSetAPIVersion
}

// IsMirrorPod reports whether the pod is the API server's mirror of a
// static pod, which the API cannot delete.
func IsMirrorPod(pod *corev1.Pod) bool {
	_, found := pod.Annotations[corev1.MirrorPodAnnotationKey]
	return found
}

// IsTerminal reports whether the pod has finished: Succeeded or Failed.
func IsTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}
