package kube

import (
	"time"
)

// A pod is available once it has been Ready for the workload's
// minReadySeconds (k8s.io/kubernetes pkg/api/v1/pod IsPodAvailable). The
// ReplicaSet, DaemonSet and StatefulSet controllers notice it when they
// requeue themselves minReadySeconds + 1 s after the pod turned Ready (the
// second guards against clock skew: replica_set.go updatePod,
// daemon_controller.go updatePod, stateful_set.go updatePod), so that is
// when the twin counts it available. With minReadySeconds 0, Ready is
// available at once.

// availableAt is when a Ready pod counts as available.
func availableAt(ps *podState) time.Time {
	m := ps.owner.minReady
	if m <= 0 {
		return ps.readySince
	}
	return ps.readySince.Add(time.Duration(m)*time.Second + time.Second)
}

// updateAvailability marks a Ready, live pod available when its time has
// come, or arranges to look again then. It reports whether the pod just
// became available.
func (c *Cluster) updateAvailability(ps *podState) bool {
	if !ps.ready || ps.deleting || ps.available || ps.owner == nil {
		return false
	}
	at := availableAt(ps)
	if c.eng.Now().Before(at) {
		ps.timers = append(ps.timers, c.eng.At(at, func() {
			if c.updateAvailability(ps) {
				ps.owner.kick()
			}
		}))
		return false
	}
	ps.available = true
	if ps.rev != nil {
		ps.rev.available++
	}
	return true
}

// clearAvailability is called when a pod stops being Ready or starts
// terminating.
func (c *Cluster) clearAvailability(ps *podState) {
	if !ps.available {
		return
	}
	ps.available = false
	if ps.rev != nil {
		ps.rev.available--
	}
}

// refreshAvailability re-evaluates every pod of w after its
// minReadySeconds changed.
func (c *Cluster) refreshAvailability(w *workload) {
	now := c.eng.Now()
	for _, ps := range w.pods.list() {
		if ps.available && now.Before(availableAt(ps)) {
			c.clearAvailability(ps)
		}
		c.updateAvailability(ps)
	}
}
