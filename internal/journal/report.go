package journal

import (
	"strings"
	"time"

	"github.com/ladder-eks/ladder/internal/executor"
	"github.com/ladder-eks/ladder/internal/report"
)

// Steps is the upgrade as the journal recorded it, in the rehearsal
// report's shape so that the HTML report draws it as it draws a
// rehearsal: each recorded step a phase from its start to its end (to now
// while it runs) in wall-clock seconds since the first step began, its
// hop, and the drains that paused it. Steps not begun are left out.
func (r *Record) Steps(now time.Time) *report.Report {
	st := r.Status("", now)
	rep := &report.Report{Scenario: r.Cluster, Status: report.Succeeded, Hops: []report.Hop{}, Phases: []report.Phase{}, Blocked: []report.Blocked{}}
	var first time.Time
	for _, h := range st.Hops {
		for _, s := range h.Steps {
			if s.State == Pending {
				continue
			}
			if b := r.began(s.Key); first.IsZero() || b.Before(first) {
				first = b
			}
		}
	}
	if !first.IsZero() {
		rep.Start = first.UTC().Format(time.RFC3339)
	}
	from := ""
	if r.Plan != nil && len(r.Plan.Hops) > 0 {
		from = r.Plan.Hops[0].From.String()
	}
	for _, h := range st.Hops {
		rep.Hops = append(rep.Hops, report.Hop{From: from, To: h.To})
		from = h.To
		for _, s := range h.Steps {
			if s.State == Pending {
				if rep.Status == report.Succeeded {
					rep.Status = "running"
				}
				continue
			}
			kind, name, _ := strings.Cut(s.Step, "/")
			start := r.began(s.Key).Sub(first).Seconds()
			// The run that ended the step (or runs it): its earlier runs'
			// time is counted in the status, not drawn.
			ph := report.Phase{Hop: len(rep.Hops) - 1, Kind: kind, Name: name, To: h.To, Start: start, End: start + s.ElapsedSeconds - s.EarlierSeconds, Message: s.Message}
			switch s.State {
			case executor.StepDone:
				ph.Status = report.Succeeded
			case executor.StepFailed:
				ph.Status, rep.Status = report.Failed, "paused"
			default:
				ph.Status, rep.Status = "running", "running"
			}
			if b := s.BlockedBy; b != nil {
				rep.Blocked = append(rep.Blocked, report.Blocked{Node: b.Node, Pod: b.Pod, PDB: b.PDB, Outcome: "blocked",
					Message: "the upgrade paused: its PodDisruptionBudget allows no disruption"})
			}
			rep.Phases = append(rep.Phases, ph)
			rep.MakespanSeconds = max(rep.MakespanSeconds, ph.End)
		}
	}
	if r.Outcome != nil {
		rep.ControlPlane.Version = r.Outcome.ControlPlane
	}
	return rep
}
