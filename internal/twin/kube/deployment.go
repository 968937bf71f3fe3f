package kube

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/rules/rollout"
)

// The deployment controller (k8s.io/kubernetes pkg/controller/deployment)
// and the ReplicaSet controller (pkg/controller/replicaset), run together.
// A Deployment owns ReplicaSets, one per pod template it has had (their
// name is <deployment>-<pod-template-hash>); the deployment controller only
// sets each ReplicaSet's spec.replicas, and the ReplicaSet controller keeps
// that many pods of the ReplicaSet's template. Both react at once, in
// virtual time, to every change they watch.

// syncRounds bounds how often one reconcile alternates the two controllers:
// upstream, a ReplicaSet the deployment controller scaled requeues the
// Deployment at once, and a rollout step settles in two or three rounds.
const syncRounds = 8

// reconcileDeployment runs the deployment controller's syncDeployment and
// then the ReplicaSet controller on each ReplicaSet, again while the
// deployment controller changed a ReplicaSet.
func (c *Cluster) reconcileDeployment(w *workload) {
	for i := 0; i < syncRounds; i++ {
		changed := c.syncDeployment(w)
		c.syncReplicaSets(w)
		if !changed {
			break
		}
	}
	w.observed = w.generation
	c.syncRolloutProgress(w)
}

// syncDeployment is deployment_controller.go syncDeployment: a paused
// Deployment, or one whose replicas changed (isScalingEvent), is only
// scaled (sync.go sync); otherwise its strategy rolls it out. It reports
// whether it changed a ReplicaSet.
func (c *Cluster) syncDeployment(w *workload) bool {
	d := w.obj.(*appsv1.Deployment)
	if d.Spec.Paused || c.isScalingEvent(w) {
		return c.scaleDeployment(w)
	}
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		return c.rolloutRecreate(w)
	}
	return c.rolloutRolling(w)
}

// newReplicaSet creates the ReplicaSet of spec.template, sized and
// annotated as sync.go getNewReplicaSet does (NewRSNewReplicas,
// SetReplicasAnnotations), and records the progress it is.
func (c *Cluster) newReplicaSet(w *workload) *revision {
	rs := c.newRevision(w, w.template)
	rs.replicas = newRSNewReplicas(w, rs)
	setReplicasAnnotations(w, rs)
	w.progress.set(reasonReplicaSetUpdated, c.eng.Now())
	return rs
}

// rolloutRolling is rolling.go rolloutRolling: scale the new ReplicaSet up
// within maxSurge, else scale old ones down within maxUnavailable.
func (c *Cluster) rolloutRolling(w *workload) bool {
	if w.cur == nil {
		w.cur = c.newReplicaSet(w)
	}
	if c.reconcileNewReplicaSet(w, w.cur) {
		return true
	}
	if c.reconcileOldReplicaSets(w, w.cur) {
		return true
	}
	if w.deploymentComplete(w.deploymentStatus()) {
		c.cleanupDeployment(w)
	}
	return false
}

// reconcileNewReplicaSet is rolling.go reconcileNewReplicaSet.
func (c *Cluster) reconcileNewReplicaSet(w *workload, newRS *revision) bool {
	switch {
	case newRS.replicas == w.replicas:
		return false
	case newRS.replicas > w.replicas:
		return c.scaleReplicaSetAndRecord(w, newRS, w.replicas)
	}
	return c.scaleReplicaSetAndRecord(w, newRS, newRSNewReplicas(w, newRS))
}

// reconcileOldReplicaSets is rolling.go reconcileOldReplicaSets: old
// ReplicaSets may shrink by allPods − minAvailable − the new ReplicaSet's
// unavailable pods, unhealthy replicas first (cleanupUnhealthyReplicas),
// then available ones while more than minAvailable stay available
// (scaleDownOldReplicaSetsForRollingUpdate).
func (c *Cluster) reconcileOldReplicaSets(w *workload, newRS *revision) bool {
	old := w.activeOldReplicaSets(newRS)
	if sumReplicas(old) == 0 {
		return false
	}
	minAvailable := w.replicas - deploymentMaxUnavailable(w)
	newRSUnavailable := newRS.replicas - int32(newRS.available)
	maxScaledDown := sumReplicas(w.revs) - minAvailable - newRSUnavailable
	if maxScaledDown <= 0 {
		return false
	}
	cleaned := c.cleanupUnhealthyReplicas(w, old, maxScaledDown)
	scaled := c.scaleDownOldReplicaSetsForRollingUpdate(w, old)
	return cleaned+scaled > 0
}

// cleanupUnhealthyReplicas is rolling.go cleanupUnhealthyReplicas: old
// ReplicaSets, oldest first, lose their replicas that are not available.
func (c *Cluster) cleanupUnhealthyReplicas(w *workload, old []*revision, maxCleanup int32) int32 {
	var total int32
	for _, rs := range old {
		if total >= maxCleanup {
			break
		}
		if rs.replicas == 0 || rs.replicas == int32(rs.available) {
			continue
		}
		n := min(maxCleanup-total, rs.replicas-int32(rs.available))
		c.scaleReplicaSetAndRecord(w, rs, rs.replicas-n)
		total += n
	}
	return total
}

// scaleDownOldReplicaSetsForRollingUpdate is its rolling.go namesake: old
// ReplicaSets, oldest first, shrink by as many pods as are available
// beyond replicas − maxUnavailable.
func (c *Cluster) scaleDownOldReplicaSetsForRollingUpdate(w *workload, old []*revision) int32 {
	minAvailable := w.replicas - deploymentMaxUnavailable(w)
	var available int32
	for _, rs := range w.revs {
		available += int32(rs.available)
	}
	if available <= minAvailable {
		return 0
	}
	var total int32
	target := available - minAvailable
	for _, rs := range old {
		if total >= target {
			break
		}
		if rs.replicas == 0 {
			continue
		}
		n := min(rs.replicas, target-total)
		c.scaleReplicaSetAndRecord(w, rs, rs.replicas-n)
		total += n
	}
	return total
}

// rolloutRecreate is recreate.go rolloutRecreate: scale every old
// ReplicaSet to 0, wait until none of their pods is left (terminating ones
// included: oldPodsRunning), then create and scale up the new one.
func (c *Cluster) rolloutRecreate(w *workload) bool {
	scaled := false
	for _, rs := range w.activeOldReplicaSets(w.cur) {
		scaled = c.scaleReplicaSetAndRecord(w, rs, 0) || scaled
	}
	if scaled {
		return true
	}
	for _, rs := range w.revs {
		if rs != w.cur && rs.pods > 0 {
			return false // oldPodsRunning
		}
	}
	if w.cur == nil {
		w.cur = c.newReplicaSet(w)
	}
	scaled = c.scaleReplicaSetAndRecord(w, w.cur, w.replicas)
	if w.deploymentComplete(w.deploymentStatus()) {
		c.cleanupDeployment(w)
	}
	return scaled
}

// isScalingEvent is deployment_controller.go isScalingEvent: an active
// ReplicaSet was sized for another spec.replicas (its desired-replicas
// annotation).
func (c *Cluster) isScalingEvent(w *workload) bool {
	for _, rs := range w.revs {
		if rs.replicas > 0 && rs.desiredAnn != w.replicas {
			return true
		}
	}
	return false
}

// scaleDeployment is sync.go scale. With one active ReplicaSet (or none:
// the latest), that one takes spec.replicas; a saturated new ReplicaSet
// takes them all; otherwise, mid-rollout, a RollingUpdate Deployment
// spreads the change over its active ReplicaSets in proportion to their
// size (GetReplicaSetProportion), larger ones first, the rounding leftover
// going to the first.
func (c *Cluster) scaleDeployment(w *workload) bool {
	active := w.activeReplicaSets()
	switch len(active) {
	case 0:
		latest := w.cur
		if latest == nil && len(w.revs) > 0 {
			latest = w.revs[len(w.revs)-1]
		}
		if latest == nil {
			return false
		}
		return c.scaleReplicaSetAndRecord(w, latest, w.replicas)
	case 1:
		return c.scaleReplicaSetAndRecord(w, active[0], w.replicas)
	}
	if rs := w.cur; rs != nil && rs.replicas == w.replicas && rs.desiredAnn == w.replicas && int32(rs.available) == w.replicas {
		// IsSaturated: old ReplicaSets should be fully scaled down.
		scaled := false
		for _, old := range w.activeOldReplicaSets(rs) {
			scaled = c.scaleReplicaSetAndRecord(w, old, 0) || scaled
		}
		return scaled
	}
	if !isRollingUpdate(w) {
		return false
	}
	var allowed int32
	if w.replicas > 0 {
		allowed = w.replicas + deploymentMaxSurge(w)
	}
	toAdd := allowed - sumReplicas(active)
	// ReplicaSetsBySizeNewer when scaling up, ReplicaSetsBySizeOlder down.
	sort.SliceStable(active, func(i, j int) bool {
		if active[i].replicas != active[j].replicas {
			return active[i].replicas > active[j].replicas
		}
		if toAdd > 0 {
			return active[i].seq > active[j].seq
		}
		return active[i].seq < active[j].seq
	})
	sizes := make([]int32, len(active))
	var added int32
	for i, rs := range active {
		sizes[i] = rs.replicas
		if toAdd != 0 {
			p := replicaSetProportion(w, rs, toAdd, added)
			sizes[i] += p
			added += p
		}
	}
	if toAdd != 0 {
		sizes[0] = max(sizes[0]+toAdd-added, 0)
	}
	scaled := false
	for i, rs := range active {
		scaled = c.scaleReplicaSet(w, rs, sizes[i]) || scaled
	}
	return scaled
}

// replicaSetProportion is deployment_util.go GetReplicaSetProportion.
func replicaSetProportion(w *workload, rs *revision, toAdd, added int32) int32 {
	if rs.replicas == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	fraction := replicaSetFraction(w, rs)
	allowed := toAdd - added
	if toAdd > 0 {
		return min(fraction, allowed)
	}
	return max(fraction, allowed)
}

// replicaSetFraction is deployment_util.go getReplicaSetFraction: the
// ReplicaSet's share of the new maximum, by the maximum it was sized for
// (its max-replicas annotation).
func replicaSetFraction(w *workload, rs *revision) int32 {
	if w.replicas == 0 {
		return -rs.replicas
	}
	if rs.maxAnn == 0 {
		return 0
	}
	size := float64(rs.replicas*(w.replicas+deploymentMaxSurge(w))) / float64(rs.maxAnn)
	return roundToInt32(size) - rs.replicas
}

// roundToInt32 is k8s.io/utils/integer RoundToInt32.
func roundToInt32(a float64) int32 {
	if a < 0 {
		return int32(a - 0.5)
	}
	return int32(a + 0.5)
}

// scaleReplicaSetAndRecord is sync.go scaleReplicaSetAndRecordEvent: a
// ReplicaSet already at that size is left alone, annotations included.
func (c *Cluster) scaleReplicaSetAndRecord(w *workload, rs *revision, n int32) bool {
	if rs.replicas == n {
		return false
	}
	return c.scaleReplicaSet(w, rs, n)
}

// scaleReplicaSet is sync.go scaleReplicaSet: set spec.replicas and the
// desired/max-replicas annotations; it reports whether either changed.
func (c *Cluster) scaleReplicaSet(w *workload, rs *revision, n int32) bool {
	changed := rs.replicas != n || rs.desiredAnn != w.replicas || rs.maxAnn != w.replicas+deploymentMaxSurge(w)
	rs.replicas = n
	setReplicasAnnotations(w, rs)
	return changed
}

// setReplicasAnnotations is deployment_util.go SetReplicasAnnotations.
func setReplicasAnnotations(w *workload, rs *revision) {
	rs.desiredAnn = w.replicas
	rs.maxAnn = w.replicas + deploymentMaxSurge(w)
}

// newRSNewReplicas is deployment_util.go NewRSNewReplicas: a RollingUpdate
// new ReplicaSet grows until all ReplicaSets together hold replicas +
// maxSurge, never past replicas; a Recreate one takes replicas at once.
func newRSNewReplicas(w *workload, newRS *revision) int32 {
	if !isRollingUpdate(w) {
		return w.replicas
	}
	maxTotal := w.replicas + deploymentMaxSurge(w)
	current := sumReplicas(w.revs)
	if current >= maxTotal {
		return newRS.replicas
	}
	return newRS.replicas + min(maxTotal-current, w.replicas-newRS.replicas)
}

// cleanupDeployment is sync.go cleanupDeployment: once the rollout is
// complete, old ReplicaSets beyond revisionHistoryLimit, lowest revision
// first, are deleted if they are empty.
func (c *Cluster) cleanupDeployment(w *workload) {
	limit := int(*w.obj.(*appsv1.Deployment).Spec.RevisionHistoryLimit)
	var old []*revision
	for _, rs := range w.revs {
		if rs != w.cur {
			old = append(old, rs)
		}
	}
	diff := len(old) - limit
	if diff <= 0 {
		return
	}
	sort.Slice(old, func(i, j int) bool { return old[i].number < old[j].number })
	gone := map[*revision]bool{}
	for _, rs := range old[:diff] {
		if rs.replicas == 0 && rs.pods == 0 {
			gone[rs] = true
		}
	}
	kept := w.revs[:0]
	for _, rs := range w.revs {
		if !gone[rs] {
			kept = append(kept, rs)
		}
	}
	w.revs = kept
}

// activeReplicaSets are those with replicas (FilterActiveReplicaSets), in
// creation order.
func (w *workload) activeReplicaSets() []*revision {
	var out []*revision
	for _, rs := range w.revs {
		if rs.replicas > 0 {
			out = append(out, rs)
		}
	}
	return out
}

// activeOldReplicaSets are the active ReplicaSets other than newRS, oldest
// first (ReplicaSetsByCreationTimestamp).
func (w *workload) activeOldReplicaSets(newRS *revision) []*revision {
	var out []*revision
	for _, rs := range w.revs {
		if rs != newRS && rs.replicas > 0 {
			out = append(out, rs)
		}
	}
	return out
}

func sumReplicas(rss []*revision) int32 {
	var n int32
	for _, rs := range rss {
		n += rs.replicas
	}
	return n
}

func isRollingUpdate(w *workload) bool {
	return w.obj.(*appsv1.Deployment).Spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType
}

// deploymentMaxSurge is deployment_util.go MaxSurge.
func deploymentMaxSurge(w *workload) int32 {
	if !isRollingUpdate(w) {
		return 0
	}
	ru := w.obj.(*appsv1.Deployment).Spec.Strategy.RollingUpdate
	surge, _, _ := rollout.ResolveFenceposts(ru.MaxSurge, ru.MaxUnavailable, w.replicas)
	return surge
}

// deploymentMaxUnavailable is deployment_util.go MaxUnavailable.
func deploymentMaxUnavailable(w *workload) int32 {
	if !isRollingUpdate(w) || w.replicas == 0 {
		return 0
	}
	ru := w.obj.(*appsv1.Deployment).Spec.Strategy.RollingUpdate
	_, unavailable, _ := rollout.ResolveFenceposts(ru.MaxSurge, ru.MaxUnavailable, w.replicas)
	return min(unavailable, w.replicas)
}

// syncReplicaSets runs the ReplicaSet controller on each ReplicaSet, in
// creation order.
func (c *Cluster) syncReplicaSets(w *workload) {
	for _, rs := range w.revs {
		c.syncReplicaSet(w, rs)
	}
}

// syncReplicaSet is the ReplicaSet controller (replica_set.go
// manageReplicas): keep exactly spec.replicas active (non-terminating)
// pods of the ReplicaSet's template. revision.active counts them.
func (c *Cluster) syncReplicaSet(w *workload, rs *revision) {
	switch n := int(rs.replicas) - rs.active; {
	case n > 0:
		for i := 0; i < n; i++ {
			if _, err := c.createPod(c.newReplicaSetPod(w, rs), w, rs); err != nil {
				// manageReplicas' slowStartBatch stops at the first error.
				c.failedCreate(w, err)
				break
			}
		}
	case n < 0:
		var active []*podState
		for _, ps := range w.pods.all() {
			if ps.rev == rs && !ps.deleting {
				active = append(active, ps)
			}
		}
		// ReplicaSet scale-down order (upstream ActivePodsWithRanks, simplified):
		// unscheduled before scheduled, not-ready before ready, newest first
		// (creation order is total, so the set's order does not matter).
		slices.SortFunc(active, func(a, b *podState) int {
			if (a.node == nil) != (b.node == nil) {
				if a.node == nil {
					return -1
				}
				return 1
			}
			if a.ready != b.ready {
				if !a.ready {
					return -1
				}
				return 1
			}
			return cmp.Compare(b.seq, a.seq)
		})
		for _, ps := range active[:-n] {
			c.controllerDelete(w, ps)
		}
	}
}

func (c *Cluster) newReplicaSetPod(w *workload, rs *revision) *corev1.Pod {
	p := podFromTemplate(&rs.template)
	p.Namespace = w.namespace
	p.Labels = withLabel(p.Labels, appsv1.DefaultDeploymentUniqueLabelKey, rs.hash)
	p.OwnerReferences = []metav1.OwnerReference{controllerRef("apps/v1", "ReplicaSet", rs.name, rs.uid)}
	for {
		p.Name = rs.name + "-" + c.randomSuffix(5)
		if _, taken := c.pods[string(c.podKey(p.Namespace, p.Name))]; !taken {
			return p
		}
	}
}

// deploymentStatus is what the deployment controller writes to a
// Deployment's status (sync.go calculateStatus): replicas and
// updatedReplicas count non-terminating pods, of all ReplicaSets and of the
// new one.
type deploymentStatus struct {
	replicas, updated, ready, available int32
}

func (w *workload) deploymentStatus() deploymentStatus {
	var st deploymentStatus
	for _, rs := range w.revs {
		st.replicas += int32(rs.active)
		st.ready += int32(rs.ready)
		st.available += int32(rs.available)
	}
	if w.cur != nil {
		st.updated = int32(w.cur.active)
	}
	return st
}

// deploymentComplete is deployment_util.go DeploymentComplete.
func (w *workload) deploymentComplete(st deploymentStatus) bool {
	return st.updated == w.replicas && st.replicas == w.replicas && st.available == w.replicas && w.observed >= w.generation
}

// The Progressing condition's reasons (deployment_util.go).
const (
	reasonReplicaSetUpdated = "ReplicaSetUpdated"
	reasonNewRSAvailable    = "NewReplicaSetAvailable"
)

// progress is a Deployment's Progressing condition: its reason, its
// lastUpdateTime, and the status it was last compared with.
type progress struct {
	reason     string
	lastUpdate time.Time
	last       deploymentStatus
}

func (p *progress) set(reason string, now time.Time) { p.reason, p.lastUpdate = reason, now }

// syncRolloutProgress is progress.go syncRolloutStatus: a rollout that
// completed is NewReplicaSetAvailable; one that made progress (more
// updated, ready or available pods, fewer old ones:
// DeploymentProgressing) is ReplicaSetUpdated as of now. Whether it then
// exceeded progressDeadlineSeconds is worked out when asked
// (RolloutStatus), as DeploymentTimedOut would at the controller's requeue.
func (c *Cluster) syncRolloutProgress(w *workload) {
	st := w.deploymentStatus()
	last := w.progress.last
	w.progress.last = st
	if st.replicas == st.updated && w.progress.reason == reasonNewRSAvailable {
		return // isCompleteDeployment
	}
	switch {
	case w.deploymentComplete(st):
		w.progress.set(reasonNewRSAvailable, c.eng.Now())
	case st.updated > last.updated || st.replicas-st.updated < last.replicas-last.updated ||
		st.ready > last.ready || st.available > last.available:
		w.progress.set(reasonReplicaSetUpdated, c.eng.Now())
	}
}

// timedOut is deployment_util.go DeploymentTimedOut.
func (w *workload) timedOut(now time.Time) bool {
	d := w.obj.(*appsv1.Deployment)
	if d.Spec.ProgressDeadlineSeconds == nil || *d.Spec.ProgressDeadlineSeconds == math.MaxInt32 {
		return false
	}
	if w.progress.reason == reasonNewRSAvailable || w.progress.reason == "" {
		return false
	}
	return w.progress.lastUpdate.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Before(now)
}
