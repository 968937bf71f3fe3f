package journal

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/ladder-eks/ladder/internal/executor"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/termtext"
)

// Status is where an upgrade stands, as its journal tells it: each step of
// each hop — recorded, or still to come in the rehearsal — with its state,
// a node group's nodes at the hop's version, the drain that holds it up,
// how long it has taken and how long the rehearsal says is left. Its JSON
// is documented in docs/upgrade.md.
type Status struct {
	Cluster string      `json:"cluster"`
	To      string      `json:"to"`
	Journal string      `json:"journal"`
	Hops    []HopStatus `json:"hops"`
	// ElapsedSeconds runs from the first step's start to the last record
	// (to now while a step runs).
	ElapsedSeconds float64 `json:"elapsedSeconds"`
	// RemainingSeconds is the rehearsal's time for the steps not done;
	// nil when the journal holds no rehearsal.
	RemainingSeconds *float64 `json:"remainingSeconds"`
}

// HopStatus is one hop's steps.
type HopStatus struct {
	To    string       `json:"to"`
	Steps []StepStatus `json:"steps"`
}

// StepStatus is one step.
type StepStatus struct {
	// Key is the journal's (executor.StepKey).
	Key  string `json:"key"`
	Step string `json:"step"`
	// State is pending, started, done or failed.
	State string `json:"state"`
	// Nodes and NodesAtVersion are a node group's when its step ended.
	Nodes          int `json:"nodes,omitempty"`
	NodesAtVersion int `json:"nodesAtVersion,omitempty"`
	// BlockedBy is the drain a failed node-group step waited on.
	BlockedBy *BlockedBy `json:"blockedBy,omitempty"`
	// WaitingOn is the AWS update or instance refresh a started step
	// waits on.
	WaitingOn string `json:"waitingOn,omitempty"`
	Message   string `json:"message,omitempty"`
	// ElapsedSeconds is the step's time in every run that worked on it:
	// EarlierSeconds in runs stopped before it ended (kill -9, a pause),
	// each to its last sign of life, and the time of the run that ended it
	// (or runs it now).
	ElapsedSeconds float64 `json:"elapsedSeconds"`
	EarlierSeconds float64 `json:"earlierSeconds,omitempty"`
	// RehearsedSeconds is the step's time in the rehearsal; nil when the
	// rehearsal has no such step.
	RehearsedSeconds *float64 `json:"rehearsedSeconds,omitempty"`
	RemainingSeconds float64  `json:"remainingSeconds"`
}

// BlockedBy is a pod whose PodDisruptionBudget allows no disruption, on a
// node still to replace.
type BlockedBy struct {
	Pod  string `json:"pod"`
	PDB  string `json:"pdb"`
	Node string `json:"node"`
}

// RehearsedSteps are a rehearsal's steps as the journal keeps them, keyed
// as the executor keys its steps.
func RehearsedSteps(rep *report.Report) []RehearsedStep {
	out := make([]RehearsedStep, 0, len(rep.Phases))
	for _, p := range rep.Phases {
		key := rep.Hops[p.Hop].To + "/" + p.Kind
		if p.Name != "" {
			key += "/" + p.Name
		}
		out = append(out, RehearsedStep{Key: key, Seconds: p.End - p.Start})
	}
	return out
}

// Pending is the state of a step the journal has no record of.
const Pending = "pending"

// isStep tells a step's entry from an operation's.
func isStep(e executor.Entry) bool {
	switch e.State {
	case executor.StepStarted, executor.StepDone, executor.StepFailed:
		return true
	}
	return false
}

// Status reads the record as of now (a started step's elapsed time runs
// to now). Steps come in the rehearsal's order, then any the rehearsal
// does not have in the order they started.
func (r *Record) Status(where string, now time.Time) *Status {
	st := &Status{Cluster: r.Cluster, To: r.To, Journal: where, Hops: []HopStatus{}}
	rehearsed := map[string]RehearsedStep{}
	var keys []string
	for _, s := range r.Rehearsal {
		rehearsed[s.Key] = s
		keys = append(keys, s.Key)
	}
	var extra []string
	for _, k := range r.Keys() {
		if _, ok := rehearsed[k]; !ok && isStep(r.Entries[k]) {
			extra = append(extra, k)
		}
	}
	slices.SortStableFunc(extra, func(a, b string) int { return r.began(a).Compare(r.began(b)) })
	keys = append(keys, extra...)

	var first, last time.Time
	remaining := 0.0
	for _, k := range keys {
		s := StepStatus{Key: k, State: Pending}
		s.Step = k
		hop, rest, ok := strings.Cut(k, "/")
		if ok {
			s.Step = rest
		}
		e, recorded := r.Entries[k]
		if recorded {
			s.State, s.Message = e.State, e.Message
			s.Nodes, s.NodesAtVersion = e.Nodes, e.NodesAtVersion
			if e.BlockedPod != "" {
				s.BlockedBy = &BlockedBy{Pod: e.BlockedPod, PDB: e.BlockedPDB, Node: e.BlockedNode}
			}
			begin, end := r.began(k), e.At
			if e.State == executor.StepStarted {
				end = now
				s.WaitingOn = r.waitingOn(k)
			}
			s.EarlierSeconds = e.EarlierSeconds
			s.ElapsedSeconds = e.EarlierSeconds + end.Sub(begin).Seconds()
			if e.FirstStarted != nil && e.FirstStarted.Before(begin) {
				begin = *e.FirstStarted
			}
			if first.IsZero() || begin.Before(first) {
				first = begin
			}
			if end.After(last) {
				last = end
			}
		}
		if rs, ok := rehearsed[k]; ok {
			secs := rs.Seconds
			s.RehearsedSeconds = &secs
			if s.State != executor.StepDone {
				// A step under way, or paused and to be resumed, has its
				// rehearsed time less what it has taken so far left.
				s.RemainingSeconds = max(0, secs-s.ElapsedSeconds)
			}
		}
		remaining += s.RemainingSeconds
		if n := len(st.Hops); n == 0 || st.Hops[n-1].To != hop {
			st.Hops = append(st.Hops, HopStatus{To: hop})
		}
		st.Hops[len(st.Hops)-1].Steps = append(st.Hops[len(st.Hops)-1].Steps, s)
	}
	if !first.IsZero() {
		st.ElapsedSeconds = last.Sub(first).Seconds()
	}
	if len(r.Rehearsal) > 0 {
		st.RemainingSeconds = &remaining
	}
	return st
}

// began is when the step under key started: the started record of the
// run that ended it, else the record itself.
func (r *Record) began(key string) time.Time {
	e := r.Entries[key]
	if e.Started != nil {
		return *e.Started
	}
	return e.At
}

// waitingOn is the id of the step's operation made last.
func (r *Record) waitingOn(key string) string {
	var id string
	var at time.Time
	for k, e := range r.Entries {
		if strings.HasPrefix(k, key+"/") && e.State == executor.Called && e.ID != "" && !e.At.Before(at) {
			id, at = e.ID, e.At
		}
	}
	return id
}

// WriteJSON writes the status as indented JSON.
func (s *Status) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// WriteText writes the status as kubectl prints a table: one row a step.
func (s *Status) WriteText(w io.Writer) error {
	termtext.Fprintf(w, "Upgrade of %s to %s (journal: %s)\n", s.Cluster, s.To, s.Journal)
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "HOP\tSTEP\tSTATE\tREPLACED\tELAPSED\tREMAINING\tBLOCKED BY")
	var waiting []string
	for _, h := range s.Hops {
		for _, st := range h.Steps {
			replaced, elapsed, left, blocked := "-", "-", "-", "-"
			if st.Nodes > 0 {
				replaced = fmt.Sprintf("%d/%d", st.NodesAtVersion, st.Nodes)
			}
			if st.State != Pending {
				elapsed = human(st.ElapsedSeconds)
			}
			if st.RehearsedSeconds != nil && st.State != executor.StepDone {
				left = human(st.RemainingSeconds)
			}
			if b := st.BlockedBy; b != nil {
				blocked = fmt.Sprintf("pod %s (PDB %s) on %s", b.Pod, b.PDB, b.Node)
			}
			if st.WaitingOn != "" {
				waiting = append(waiting, fmt.Sprintf("%s waits on %s", st.Key, st.WaitingOn))
			}
			if st.EarlierSeconds > 0 {
				waiting = append(waiting, resumedNote(st))
			}
			termtext.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.To, st.Step, st.State, replaced, elapsed, left, blocked)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range waiting {
		termtext.Fprintln(w, l)
	}
	left := "no rehearsal in the journal"
	if s.RemainingSeconds != nil {
		left = "rehearsed remaining " + human(*s.RemainingSeconds)
	}
	_, err := termtext.Fprintf(w, "Elapsed %s; %s.\n", human(s.ElapsedSeconds), left)
	return err
}

// resumedNote says how a step's time adds up across the runs that worked
// on it.
func resumedNote(st StepStatus) string {
	return fmt.Sprintf("%s resumed: %s in earlier runs (to each one's last record) + %s in the last = %s",
		st.Key, human(st.EarlierSeconds), human(st.ElapsedSeconds-st.EarlierSeconds), human(st.ElapsedSeconds))
}

// human is a duration as kubectl prints an age.
func human(sec float64) string {
	return duration.HumanDuration(time.Duration(sec * float64(time.Second)))
}
