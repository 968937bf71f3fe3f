package kube

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/rules/rollout"
)

// The StatefulSet controller (k8s.io/kubernetes pkg/controller/statefulset,
// stateful_set_control.go updateStatefulSet): pods named <set>-<ordinal>,
// created in ordinal order and, under OrderedReady, one at a time once the
// previous ones are Ready; scaled down from the highest ordinal. Each pod is
// made from a ControllerRevision of the template: status.currentRevision
// (w.current) below the partition, the update revision (w.cur) from it up.

// reconcileStatefulSet is one pass of the controller.
func (c *Cluster) reconcileStatefulSet(w *workload) {
	byOrdinal := map[int]*podState{}
	condemned := false
	for _, ps := range w.pods.all() {
		var ord int
		if _, err := fmt.Sscanf(ps.pod.Name[len(w.name)+1:], "%d", &ord); err == nil {
			byOrdinal[ord] = ps
			condemned = condemned || ord >= int(w.replicas)
		}
	}
	if c.manageStatefulSet(w, byOrdinal) {
		c.updateStatefulSet(w, byOrdinal, condemned)
	}
	w.observed = w.generation
}

// manageStatefulSet creates and deletes pods to match spec.replicas. It
// reports false when OrderedReady makes it wait for a pod.
func (c *Cluster) manageStatefulSet(w *workload, byOrdinal map[int]*podState) bool {
	// Scale down: delete the highest ordinal first, one at a time when ordered.
	for ord := len(byOrdinal) + int(w.replicas) + 16; ord >= int(w.replicas); ord-- {
		if ps, ok := byOrdinal[ord]; ok && !ps.deleting {
			c.controllerDelete(w, ps)
			if w.orderedReady {
				return false
			}
		}
	}
	for ord := 0; ord < int(w.replicas); ord++ {
		ps, ok := byOrdinal[ord]
		if ok {
			if w.orderedReady && (ps.deleting || !ps.available) {
				return false // OrderedReady waits for ordinal ord before creating the next.
			}
			continue
		}
		rev := c.statefulSetRevisionFor(w, ord)
		if _, err := c.createPod(c.newStatefulSetPod(w, ord, rev), w, rev); err != nil {
			c.failedCreate(w, err)
			return false
		}
		if w.orderedReady {
			return false
		}
	}
	return true
}

// statefulSetRevisionFor is stateful_set_utils.go newVersionedStatefulSetPod:
// under RollingUpdate, a pod below the partition (below currentReplicas
// without a rollingUpdate stanza) is made from the current revision, any
// other from the update revision.
func (c *Cluster) statefulSetRevisionFor(w *workload, ord int) *revision {
	s := w.obj.(*appsv1.StatefulSet).Spec.UpdateStrategy
	if (s.Type == appsv1.RollingUpdateStatefulSetStrategyType && s.RollingUpdate == nil && ord < w.current.active) ||
		(s.RollingUpdate != nil && s.RollingUpdate.Partition != nil && ord < int(*s.RollingUpdate.Partition)) {
		return w.current
	}
	return w.cur
}

// updateStatefulSet is the rolling update at the end of updateStatefulSet,
// as updateStatefulSetAfterInvariantEstablished does it (feature
// MaxUnavailableStatefulSet, on by default since Kubernetes 1.35): once
// every pod from the update revision is Ready the update revision becomes
// current (completeRollingUpdate); otherwise, with at most maxUnavailable
// (default 1) of the replicas unavailable, pods not of the update revision
// are deleted from the highest ordinal down to the partition, and
// manageStatefulSet recreates them from the update revision. OnDelete only
// recreates pods someone else deleted.
func (c *Cluster) updateStatefulSet(w *workload, byOrdinal map[int]*podState, condemned bool) {
	s := w.obj.(*appsv1.StatefulSet).Spec.UpdateStrategy
	if s.Type == appsv1.RollingUpdateStatefulSetStrategyType && w.current != w.cur {
		if created := w.pods.len(); w.cur.active == created && w.ready == created {
			w.current = w.cur
		}
	}
	if s.Type == appsv1.OnDeleteStatefulSetStrategyType || !w.updating() {
		return
	}
	if w.orderedReady && condemned {
		return // processCondemned: wait for scale-down first
	}
	partition, maxUnavailable := 0, 1
	if ru := s.RollingUpdate; ru != nil {
		if ru.Partition != nil {
			partition = int(*ru.Partition)
		}
		// A value the API server refused never gets here (workload.ValidateStatefulSet).
		n, err := rollout.StatefulSetMaxUnavailable(ru.MaxUnavailable, w.replicas)
		if err != nil {
			n = 1
		}
		maxUnavailable = int(n)
	}
	unavailable := 0
	for ord := 0; ord < int(w.replicas); ord++ {
		if ps := byOrdinal[ord]; ps == nil || ps.deleting || !ps.available {
			unavailable++
		}
	}
	if unavailable > maxUnavailable {
		return
	}
	for ord, n := int(w.replicas)-1, maxUnavailable-unavailable; ord >= partition && n > 0; ord-- {
		if ps := byOrdinal[ord]; ps != nil && ps.rev != w.cur && !ps.deleting {
			c.controllerDelete(w, ps)
			n--
		}
	}
}

func (c *Cluster) newStatefulSetPod(w *workload, ord int, rev *revision) *corev1.Pod {
	p := podFromTemplate(&rev.template)
	p.Namespace = w.namespace
	p.Name = fmt.Sprintf("%s-%d", w.name, ord)
	p.Labels = withLabel(p.Labels, appsv1.StatefulSetPodNameLabel, p.Name)
	p.Labels[appsv1.PodIndexLabel] = strconv.Itoa(ord)
	p.Labels[appsv1.ControllerRevisionHashLabelKey] = rev.name
	p.OwnerReferences = []metav1.OwnerReference{controllerRef("apps/v1", "StatefulSet", w.name, w.uid)}
	for _, tmpl := range w.claims {
		claim := fmt.Sprintf("%s-%s-%d", tmpl.Name, w.name, ord)
		if _, ok := c.pvcs[key(w.namespace, claim)]; !ok {
			pvc := tmpl.DeepCopy()
			pvc.Name, pvc.Namespace = claim, w.namespace
			c.applyPVC(pvc)
		}
		replaced := false
		for i := range p.Spec.Volumes {
			if p.Spec.Volumes[i].Name == tmpl.Name {
				p.Spec.Volumes[i].VolumeSource = corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}
				replaced = true
			}
		}
		if !replaced {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: tmpl.Name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
		}
	}
	return p
}

// statefulSetStatus is what the controller writes to status (updateStatus,
// computeReplicaStatus): replicas counts every pod, updated and current the
// non-terminating ones of the update and current revisions.
type statefulSetStatus struct {
	replicas, ready, updated, current int32
}

func (w *workload) statefulSetStatus() statefulSetStatus {
	st := statefulSetStatus{replicas: int32(w.pods.len()), ready: int32(w.ready), updated: int32(w.cur.active)}
	if w.current != nil {
		st.current = int32(w.current.active)
	}
	return st
}
