package drain

import (
	corev1 "k8s.io/api/core/v1"
	kdrain "k8s.io/kubectl/pkg/drain"
)

// Filter decides one thing about a pod a drain may move: kubectl's
// PodFilter (k8s.io/kubectl/pkg/drain, the shape of Helper.AdditionalFilters)
// over a pointer, because the twins run a chain per pod at every step of a
// drain and a corev1.Pod is a large value. Delete false stops the chain.
type Filter func(pod *corev1.Pod) kdrain.PodDeleteStatus

// Decide runs pod through chain as GetPodsForDeletion does: the first
// filter that does not delete it decides, else the last one.
func Decide(pod *corev1.Pod, chain []Filter) kdrain.PodDeleteStatus {
	status := kdrain.MakePodDeleteStatusOkay()
	for _, filter := range chain {
		status = filter(pod)
		if !status.Delete {
			break
		}
	}
	return status
}

// Select returns the pods every filter of chain deletes, in order: the
// pods a drain with that chain moves. Each mechanism composes its chain
// from the filters below and its own:
//
//   - kubectl drain: PodsForDeletion (skip-deleted, DaemonSet, mirror,
//     local storage, unreplicated; semantics.md §D.3);
//   - an EKS managed node group update: SkipTerminal, SkipMirror,
//     SkipDaemonSet (§B; internal/twin/mng);
//   - Karpenter's termination: SkipTerminal, SkipMirror and its own
//     disrupted-taint and stuck-terminating filters; its disruption
//     candidates' reschedulable pods: SkipTerminating, SkipDaemonSet,
//     SkipMirror, SkipTerminal (§A.4; internal/twin/karpenter).
func Select(pods []*corev1.Pod, chain ...Filter) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if Decide(p, chain).Delete {
			out = append(out, p)
		}
	}
	return out
}

// SkipTerminal skips pods that have finished: nothing is left to move
// (EKS and Karpenter; kubectl instead deletes them with the rest).
func SkipTerminal(pod *corev1.Pod) kdrain.PodDeleteStatus {
	if IsTerminal(pod) {
		return kdrain.MakePodDeleteStatusSkip()
	}
	return kdrain.MakePodDeleteStatusOkay()
}

// SkipMirror skips mirror pods, which the API cannot delete (kubectl's
// mirrorPodFilter).
func SkipMirror(pod *corev1.Pod) kdrain.PodDeleteStatus {
	if IsMirrorPod(pod) {
		return kdrain.MakePodDeleteStatusSkip()
	}
	return kdrain.MakePodDeleteStatusOkay()
}

// SkipDaemonSet skips DaemonSet pods: the DaemonSet controller ignores
// cordons and would put them back (kubectl's --ignore-daemonsets, §D.3).
func SkipDaemonSet(pod *corev1.Pod) kdrain.PodDeleteStatus {
	if IsDaemonSetPod(pod) {
		return kdrain.MakePodDeleteStatusWithWarning(false, DaemonSetWarning)
	}
	return kdrain.MakePodDeleteStatusOkay()
}

// SkipTerminating skips pods already being deleted: they leave on their
// own and need no new home.
func SkipTerminating(pod *corev1.Pod) kdrain.PodDeleteStatus {
	if pod.DeletionTimestamp != nil {
		return kdrain.MakePodDeleteStatusSkip()
	}
	return kdrain.MakePodDeleteStatusOkay()
}
