// Package journal keeps the record `ladder upgrade` writes before and after
// each act (executor.Journal), where a killed run finds it again: in the
// cluster — a ConfigMap, guarded by a coordination.k8s.io Lease so that two
// upgrades of one cluster never run at once — or in a local file, guarded
// by an advisory lock.
//
// Every Put is durable when it returns: the ConfigMap is updated with the
// API server's optimistic concurrency (resourceVersion), the file is
// written to a temporary name, synced and renamed over the old one.
package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/ladder-eks/ladder/internal/executor"
	"github.com/ladder-eks/ladder/internal/plan"
	"github.com/ladder-eks/ladder/internal/termtext"
)

// Record is a journal's content: the cluster it belongs to and its
// entries by key (executor.StepKey, and the operations inside a step).
type Record struct {
	Cluster string `json:"cluster"`
	To      string `json:"to"`
	// Plan is the plan the upgrade began with: a resumed run carries it
	// out rather than planning again from what it finds — the control
	// plane may be at the target already, an add-on updated but its step
	// not recorded done, and neither would be in a new plan.
	Plan    *plan.Plan                `json:"plan,omitempty"`
	Entries map[string]executor.Entry `json:"entries"`
	// Rehearsal is the upgrade's steps in order, as the rehearsal of the
	// cluster captured when the first run started measured them: what
	// `ladder upgrade status` counts the remaining time from.
	Rehearsal []RehearsedStep `json:"rehearsal,omitempty"`
	// Prediction is the rest of that rehearsal's outcome — the nodes
	// each group replaces, the drains that stop it, the end state — and
	// Outcome the end state the upgrade reached, recorded when it
	// finished: what `ladder upgrade status --compare` sets side by side.
	Prediction *Prediction `json:"prediction,omitempty"`
	Outcome    *State      `json:"outcome,omitempty"`
}

// RehearsedStep is one step of the rehearsal: its journal key
// (executor.StepKey) and its duration in virtual seconds.
type RehearsedStep struct {
	Key     string  `json:"key"`
	Seconds float64 `json:"seconds"`
}

// Keys are the record's keys, sorted.
func (r *Record) Keys() []string { return slices.Sorted(maps.Keys(r.Entries)) }

// store is what a journal keeps its record in.
type store interface {
	load() (*Record, error)
	save(*Record) error
}

// journal is an executor.Journal over a store: the record in memory, saved
// whole on every Put.
type journal struct {
	mu  sync.Mutex
	rec *Record
	st  store
}

func open(st store, cluster, to string) (*journal, error) {
	rec, err := st.load()
	if err != nil {
		return nil, err
	}
	if rec == nil {
		rec = &Record{Cluster: cluster, To: to, Entries: map[string]executor.Entry{}}
	}
	if rec.Cluster != cluster {
		return nil, fmt.Errorf("the journal is cluster %s's, not %s's: use another journal", rec.Cluster, cluster)
	}
	if rec.To != to {
		return nil, fmt.Errorf("the journal holds an upgrade to %s, not %s: finish it (--to %s) or start a new journal", rec.To, to, rec.To)
	}
	if rec.Entries == nil {
		rec.Entries = map[string]executor.Entry{}
	}
	return &journal{rec: rec, st: st}, nil
}

// Get implements executor.Journal.
func (j *journal) Get(key string) (executor.Entry, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	e, ok := j.rec.Entries[key]
	return e, ok
}

// Put implements executor.Journal. A step's records carry its time across
// runs (carry).
func (j *journal) Put(key string, e executor.Entry) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	prev, had := j.rec.Entries[key]
	if had {
		e = j.rec.carry(key, prev, e)
	}
	j.rec.Entries[key] = e
	if err := j.st.save(j.rec); err != nil {
		if had {
			j.rec.Entries[key] = prev
		} else {
			delete(j.rec.Entries, key)
		}
		return err
	}
	return nil
}

// carry is e, a step's new record, with what its previous record prev
// knew of the earlier runs. A step started again — its run killed (prev
// started) or paused (prev failed) — keeps when it first started and adds
// the time prev's run spent on it, from prev's start to that run's last
// sign of life: its end record for a paused run, else its last heartbeat
// or the last record it made for the step's operations. The step's end
// keeps what its start carried.
func (r *Record) carry(key string, prev, e executor.Entry) executor.Entry {
	if !isStep(prev) || !isStep(e) || prev.State == executor.StepDone {
		return e
	}
	switch e.State {
	case executor.StepStarted:
		began := r.began(key)
		first := began
		if prev.FirstStarted != nil {
			first = *prev.FirstStarted
		}
		last := r.lastSign(key, prev)
		e.FirstStarted = &first
		e.EarlierSeconds = prev.EarlierSeconds + max(0, last.Sub(began).Seconds())
	default:
		if prev.State == executor.StepStarted {
			e.FirstStarted, e.EarlierSeconds = prev.FirstStarted, prev.EarlierSeconds
		}
	}
	return e
}

// lastSign is the last moment the run that wrote prev, key's record, is
// known to have worked on the step: prev's own time (a failed step's
// end), its heartbeat, or the last record of the step's operations made
// since it started.
func (r *Record) lastSign(key string, prev executor.Entry) time.Time {
	last := prev.At
	if prev.State != executor.StepStarted {
		return last
	}
	if prev.Alive != nil && prev.Alive.After(last) {
		last = *prev.Alive
	}
	for k, op := range r.Entries {
		if strings.HasPrefix(k, key+"/") && !isStep(op) && op.At.After(last) {
			last = op.At
		}
	}
	return last
}

// Beat records that the run working on the step under key is alive at
// `at` (ladder upgrade calls it every 30 s while a step runs): a run
// killed without its end record is counted to its last beat. A step not
// recorded as started is left alone.
func (j *journal) Beat(key string, at time.Time) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	prev, ok := j.rec.Entries[key]
	if !ok || prev.State != executor.StepStarted {
		return nil
	}
	e := prev
	at = at.UTC()
	e.Alive = &at
	j.rec.Entries[key] = e
	if err := j.st.save(j.rec); err != nil {
		j.rec.Entries[key] = prev
		return err
	}
	return nil
}

// Plan is the plan the journal's upgrade began with, if it holds one.
func (j *journal) Plan() (plan.Plan, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.rec.Plan == nil {
		return plan.Plan{}, false
	}
	return *j.rec.Plan, true
}

// Begin records p as the plan of the journal's upgrade, unless it holds
// one already.
func (j *journal) Begin(p plan.Plan) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.rec.Plan != nil {
		return nil
	}
	j.rec.Plan = &p
	if err := j.st.save(j.rec); err != nil {
		j.rec.Plan = nil
		return err
	}
	return nil
}

// SetRehearsal keeps the rehearsal's steps and prediction in the journal
// unless it holds them already: a resumed run rehearses the cluster half
// upgraded, the first run's rehearsal is the whole upgrade's.
func (j *journal) SetRehearsal(steps []RehearsedStep, p *Prediction) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.rec.Rehearsal) > 0 {
		return nil
	}
	j.rec.Rehearsal, j.rec.Prediction = steps, p
	if err := j.st.save(j.rec); err != nil {
		j.rec.Rehearsal, j.rec.Prediction = nil, nil
		return err
	}
	return nil
}

// SetOutcome records the end state a finished upgrade reached.
func (j *journal) SetOutcome(s State) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	prev := j.rec.Outcome
	j.rec.Outcome = &s
	if err := j.st.save(j.rec); err != nil {
		j.rec.Outcome = prev
		return err
	}
	return nil
}

// Record is a copy of the journal's content.
func (j *journal) Record() *Record {
	j.mu.Lock()
	defer j.mu.Unlock()
	return &Record{Cluster: j.rec.Cluster, To: j.rec.To, Plan: j.rec.Plan, Entries: maps.Clone(j.rec.Entries), Rehearsal: slices.Clone(j.rec.Rehearsal),
		Prediction: j.rec.Prediction, Outcome: j.rec.Outcome}
}

func decode(data []byte, where string) (*Record, error) {
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: not a Ladder journal: %v (move it away to start a new upgrade)", where, err)
	}
	return &r, nil
}

// ReadFile reads a local journal without locking it (nil when there is
// none).
func ReadFile(path string) (*Record, error) { return fileStore{path}.load() }

// ReadCluster reads the in-cluster journal without the Lease (nil when
// there is none).
func ReadCluster(ctx context.Context, cs kubernetes.Interface) (*Record, error) {
	return configMapStore{cs: cs}.load()
}

// WriteText lists the record's entries as kubectl lists objects.
func (r *Record) WriteText(w io.Writer, where string) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	termtext.Fprintf(tw, "Upgrade of %s to %s (journal: %s)\n", r.Cluster, r.To, where)
	fmt.Fprintln(tw, "KEY\tSTATE\tAT\tID / MESSAGE")
	keys := r.Keys()
	// In the order they were recorded: a step before its operations.
	slices.SortStableFunc(keys, func(a, b string) int { return r.Entries[a].At.Compare(r.Entries[b].At) })
	for _, k := range keys {
		e := r.Entries[k]
		detail := e.ID
		if e.Message != "" {
			detail = e.Message
		}
		if detail == "" {
			detail = "-"
		}
		termtext.Fprintf(tw, "%s\t%s\t%s\t%s\n", k, e.State, e.At.UTC().Format(time.RFC3339), detail)
	}
	return tw.Flush()
}
