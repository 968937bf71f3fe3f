package rehearse

import (
	"fmt"
	"strings"
	"time"

	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// What a rehearsal judged availability by is in the report, PDB by PDB:
// its status as the disruption controller computed it after every change
// (kube.PDBHistory, semantics.md §D.2) and every healthy pod taken down
// while it allowed no disruption, with the cause. A pod taken without the
// Eviction API is a violation (violations.go). A pod its own controller
// took — a rollout (kubectl rollout restart, a Fargate restart, a template
// change) or a scale-down — is not: PodDisruptionBudgets do not guard
// rollouts. But it is the outage the budget was written to prevent, so the
// span it held the budget below its floor is reported (rolloutsBelowFloor)
// and the run, and its step, are violated.

// dropKey names one drop: its PDB (namespace/name) and its index among the
// PDB's drops.
type dropKey struct {
	pdb string
	i   int
}

// pdbDrop notes the phase a drop happened in.
func (r *run) pdbDrop(h kube.PDBHistory, d kube.PDBDrop) {
	rd := report.Drop{}
	if r.inPhase {
		ph := &r.phases[r.currentPhase]
		rd.Hop, rd.Step, rd.Name = r.hops[ph.Hop].To, ph.Kind, ph.Name
		if d.Cause == kube.DropRollout || d.Cause == kube.DropScaleDown {
			if r.phaseDrops == nil {
				r.phaseDrops = map[int][]string{}
			}
			r.phaseDrops[r.currentPhase] = append(r.phaseDrops[r.currentPhase], fmt.Sprintf("%s (%s/%s, %s)", d.Pod, h.Namespace, h.Name, d.Cause))
		}
	}
	if r.dropAt == nil {
		r.dropAt = map[dropKey]report.Drop{}
	}
	r.dropAt[dropKey{h.Namespace + "/" + h.Name, len(h.Drops) - 1}] = rd
}

// pdbReport is every tracked PDB's history as the report carries it, and
// the spans rollouts held one below its floor.
func (r *run) pdbReport(now time.Time) ([]report.PDB, []report.RolloutBelowFloor) {
	var out []report.PDB
	var rollouts []report.RolloutBelowFloor
	start := r.eng.Start()
	at := func(t time.Time) float64 { return seconds(t.Sub(start)) }
	for _, h := range r.kube.PDBHistories() {
		p := report.PDB{Namespace: h.Namespace, Name: h.Name, Workloads: append([]string{}, h.Workloads...), SyncError: h.SyncError}
		if v := h.Spec.MinAvailable; v != nil {
			p.MinAvailable = v.String()
		}
		if v := h.Spec.MaxUnavailable; v != nil {
			p.MaxUnavailable = v.String()
		}
		s := &p.Series
		s.T, s.Healthy, s.Desired, s.Expected, s.Allowed = []float64{}, []int32{}, []int32{}, []int32{}, []int32{}
		for i, x := range h.Samples {
			s.T = append(s.T, at(x.At))
			s.Healthy = append(s.Healthy, x.Healthy)
			s.Desired = append(s.Desired, x.Desired)
			s.Expected = append(s.Expected, x.Expected)
			s.Allowed = append(s.Allowed, x.Allowed)
			if i == 0 || x.Healthy < p.MinHealthy {
				p.MinHealthy = x.Healthy
			}
			if x.Healthy < x.Desired {
				end := now
				if i+1 < len(h.Samples) {
					end = h.Samples[i+1].At
				}
				p.BelowFloorSeconds += seconds(end.Sub(x.At))
			}
		}
		key := h.Namespace + "/" + h.Name
		for i, d := range h.Drops {
			rd := r.dropAt[dropKey{key, i}]
			rd.T, rd.Pod, rd.Node, rd.Workload, rd.Cause, rd.By = at(d.At), d.Pod, d.Node, d.Workload, d.Cause, d.By
			p.Drops = append(p.Drops, rd)
		}
		rollouts = append(rollouts, rolloutSpans(key, h, p.Drops, now, at)...)
		out = append(out, p)
	}
	return out, rollouts
}

// rolloutSpans are the spans a workload's own controller held a PDB below
// its floor: each begins at a rollout or scale-down drop outside a span of
// the same workload and ends at the first sample from then on with as
// many healthy pods as desired.
func rolloutSpans(pdb string, h kube.PDBHistory, drops []report.Drop, now time.Time, at func(time.Time) float64) []report.RolloutBelowFloor {
	var out []report.RolloutBelowFloor
	open := map[string]int{} // workload → index in out of its open span
	for i, d := range h.Drops {
		if d.Cause != kube.DropRollout && d.Cause != kube.DropScaleDown {
			continue
		}
		if j, ok := open[d.Workload]; ok && (out[j].Ongoing || at(d.At) <= out[j].End) {
			out[j].Pods++
			continue
		}
		ns, _, _ := strings.Cut(pdb, "/")
		kind, name, _ := strings.Cut(d.Workload, "/")
		span := report.RolloutBelowFloor{PDB: pdb, Workload: kind + "/" + ns + "/" + name, Cause: d.Cause, Start: at(d.At), Pods: 1,
			Hop: drops[i].Hop, Step: drops[i].Step, Name: drops[i].Name, MinHealthy: -1}
		end, ongoing := now, true
		for _, x := range h.Samples {
			if x.At.Before(d.At) {
				continue
			}
			if x.Healthy >= x.Desired && x.At.After(d.At) {
				end, ongoing = x.At, false
				break
			}
			if span.MinHealthy < 0 || x.Healthy < span.MinHealthy {
				span.MinHealthy = x.Healthy
			}
			span.Desired = max(span.Desired, x.Desired)
		}
		span.End, span.Ongoing = at(end), ongoing
		span.Seconds = span.End - span.Start
		open[d.Workload] = len(out)
		out = append(out, span)
	}
	return out
}
