package kube

import (
	"slices"
	"time"

	policyv1 "k8s.io/api/policy/v1"
)

// A PDB's history is what a rehearsal judged its availability by: the
// status the disruption controller gives it (semantics.md §D.2,
// internal/eviction) after every change, and every healthy pod taken down
// while it allowed no disruption — a drop below its floor, whatever took
// the pod: a DELETE, its node going away, its own controller rolling it
// out or scaling it down, its readiness lost. An eviction is granted only
// while disruptionsAllowed > 0 (§D.1), so it never drops a budget below its
// floor.
//
// The status is sampled once every event is over (sim.Engine.AfterEvent)
// and just before each pod is taken down, so between two samples a drop
// takes exactly one healthy pod: the samples tell, independently of the
// drops, how many pods went below the floor (PDBHistory's doc).

// Drop causes.
const (
	// DropDeleted, DropNodeRemoved: the pod was taken without the
	// Eviction API (BreachDeleted, BreachNodeRemoved).
	DropDeleted     = BreachDeleted
	DropNodeRemoved = BreachNodeRemoved
	// DropRollout: its own controller deleted it to replace it with a pod of
	// the current template (a Deployment's, StatefulSet's or DaemonSet's
	// rolling update, kubectl rollout restart). PDBs do not guard rollouts.
	DropRollout = "rollout"
	// DropScaleDown: its own controller deleted it to reach fewer replicas.
	DropScaleDown = "scale-down"
	// DropUnready: it turned unready while running.
	DropUnready = "unready"
)

// PDBSample is a PDB's status at one instant: status.currentHealthy,
// desiredHealthy, expectedPods and disruptionsAllowed.
type PDBSample struct {
	At                                  time.Time
	Healthy, Desired, Expected, Allowed int32
}

// PDBDrop is a healthy pod the PDB selected taken down while the PDB
// allowed no disruption.
type PDBDrop struct {
	At time.Time
	// Pod is namespace/name; Node the node it ran on; Workload its
	// controller as Kind/name ("" for a bare pod).
	Pod, Node, Workload string
	// Cause is one of the Drop* constants; By says who, in the words of
	// the caller (e.g. "DeleteNodegroup blue-mng", "Deployment shop/web").
	Cause, By string
}

// PDBHistory is one PDB since StartTracking (or since it was applied).
//
// Samples hold the status at the start and after each change. Between two
// consecutive samples a and b, the pods taken below the floor number
// max(0, (a.Healthy − b.Healthy) − max(0, a.Allowed)): Drops lists each of
// them, at b's instant.
type PDBHistory struct {
	Namespace, Name string
	Spec            policyv1.PodDisruptionBudgetSpec
	// Workloads are the controllers of the pods it selected, as Kind/name,
	// in the order first seen.
	Workloads []string
	// SyncError is the controller's last error when it could not compute
	// the status and failed safe (disruptionsAllowed 0); "" when it could.
	SyncError string
	Samples   []PDBSample
	Drops     []PDBDrop
}

type pdbHistory struct{ PDBHistory }

func newPDBHistory(pdb *policyv1.PodDisruptionBudget) *pdbHistory {
	return &pdbHistory{PDBHistory{Namespace: pdb.Namespace, Name: pdb.Name, Spec: pdb.Spec}}
}

// sample appends the status unless it is the last sample's. When the sync
// failed, the controller kept its old status but for disruptionsAllowed 0
// (failSafe): the sample's Healthy is then the pods that are healthy,
// counted by the twin, so the samples still show each pod taken down.
func (h *pdbHistory) sample(now time.Time, st policyv1.PodDisruptionBudgetStatus, syncErr error, healthy int32) {
	s := PDBSample{At: now, Healthy: st.CurrentHealthy, Desired: st.DesiredHealthy, Expected: st.ExpectedPods, Allowed: st.DisruptionsAllowed}
	h.SyncError = ""
	if syncErr != nil {
		h.SyncError = syncErr.Error()
		s.Healthy = healthy
	}
	if n := len(h.Samples); n > 0 {
		last := h.Samples[n-1]
		last.At = now
		if last == s {
			return
		}
	}
	h.Samples = append(h.Samples, s)
}

// startPDBHistories begins the histories of every PDB (StartTracking).
func (c *Cluster) startPDBHistories() {
	for _, k := range sortedKeys(c.pdbs) {
		st := c.pdbs[k]
		if st.hist == nil {
			st.hist = newPDBHistory(st.pdb)
			c.histOrder = append(c.histOrder, st.hist)
		}
		for _, ps := range st.pods.list() {
			st.hist.noteWorkload(ps)
		}
		st.markDirty()
	}
	if !c.afterEvent {
		c.afterEvent = true
		c.eng.AfterEvent(c.flushPDBSamples)
	}
	c.flushPDBSamples()
}

// flushPDBSamples samples the PDBs whose status may have changed.
func (c *Cluster) flushPDBSamples() {
	for len(c.touched) > 0 {
		touched := c.touched
		c.touched = c.touched[len(c.touched):]
		for _, st := range touched {
			st.touched = false
			if c.pdbs[key(st.pdb.Namespace, st.pdb.Name)] == st {
				c.sync(st)
			}
		}
	}
}

// noteWorkload records a pod's controller among the PDB's workloads.
func (h *pdbHistory) noteWorkload(ps *podState) {
	if ps.owner == nil || ps.owner.kind == "Pod" {
		return
	}
	w := ps.owner.kind + "/" + ps.owner.name
	if !slices.Contains(h.Workloads, w) {
		h.Workloads = append(h.Workloads, w)
	}
}

// PDBHistories lists the history of every PDB tracked, in the order they
// were first tracked (the PDBs of the starting cluster by namespace/name,
// then those applied later).
func (c *Cluster) PDBHistories() []PDBHistory {
	c.flushPDBSamples()
	out := make([]PDBHistory, 0, len(c.histOrder))
	for _, h := range c.histOrder {
		out = append(out, h.PDBHistory)
	}
	return out
}

// OnPDBDrop registers fn to run at each drop, after it is recorded: a
// rehearsal notes the step it happened in.
func (c *Cluster) OnPDBDrop(fn func(PDBHistory, PDBDrop)) { c.dropHooks = append(c.dropHooks, fn) }

// takeDown runs just before a healthy pod stops being healthy any other
// way than by an eviction, while its PDBs still count it: for each PDB
// selecting it that allows no disruption, it records a drop; when the pod
// is taken without the Eviction API (deleted, node-removed) it is also a
// breach (breach.go). A pod is taken down once: an unready or terminating
// one costs no budget anything.
func (c *Cluster) takeDown(ps *podState, cause, by string) {
	if !c.tracking || !ps.ready || ps.deleting {
		return
	}
	c.flushPDBSamples()
	var exhausted []string
	for _, st := range c.pdbsFor(ps) {
		if c.sync(st).Status.DisruptionsAllowed > 0 {
			continue
		}
		exhausted = append(exhausted, st.pdb.Namespace+"/"+st.pdb.Name)
		if st.hist == nil {
			continue
		}
		d := PDBDrop{At: c.eng.Now(), Pod: ps.pod.Namespace + "/" + ps.pod.Name, Cause: cause, By: by}
		if ps.node != nil {
			d.Node = ps.node.node.Name
		}
		if ps.owner != nil && ps.owner.kind != "Pod" {
			d.Workload = ps.owner.kind + "/" + ps.owner.name
		}
		st.hist.Drops = append(st.hist.Drops, d)
		for _, h := range c.dropHooks {
			h(st.hist.PDBHistory, d)
		}
	}
	if len(exhausted) > 0 && (cause == DropDeleted || cause == DropNodeRemoved) {
		c.breach(ps, exhausted, cause, by)
	}
}

// controllerDelete is a workload's own controller deleting one of its
// pods: a rollout when the pod is of an older revision, else a scale-down.
func (c *Cluster) controllerDelete(w *workload, ps *podState) {
	cause := DropScaleDown
	if ps.rev != nil && ps.rev != w.cur {
		cause = DropRollout
	}
	c.takeDown(ps, cause, w.kind+" "+w.namespace+"/"+w.name)
	c.deletePod(ps, *ps.pod.Spec.TerminationGracePeriodSeconds)
}
