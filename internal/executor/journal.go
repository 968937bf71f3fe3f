package executor

import (
	"context"
	"fmt"
	"time"

	"github.com/ladder-eks/ladder/internal/plan"
)

// Journal is where an upgrade writes down what it does, before and after
// each act, so that a run killed at any moment — kill -9 included — and
// started again continues where it stopped: a step the journal holds as
// done is not carried out again, and an AWS operation the journal holds as
// started (an update id, an instance refresh id) is waited on again rather
// than started a second time (internal/journal implements it, in a file or
// a ConfigMap). A nil Journal records nothing: the rehearsal's executor.
type Journal interface {
	// Get returns the entry recorded under key.
	Get(key string) (Entry, bool)
	// Put records e under key durably before it returns: a run that dies
	// after Put has the entry when it starts again.
	Put(key string, e Entry) error
}

// Entry is one journal record.
type Entry struct {
	// State is StepStarted, StepDone or StepFailed for a step, Calling or
	// Called for an operation inside one.
	State string `json:"state"`
	// ID is what the operation returned to wait on: an EKS update id, an
	// instance refresh id, the name of what it created.
	ID string `json:"id,omitempty"`
	// Message is a failed step's error.
	Message string `json:"message,omitempty"`
	// Nodes and NodesAtVersion are a node-group step's group when the
	// step ended: its nodes, and those at the hop's minor (groupnodes.go).
	Nodes          int `json:"nodes,omitempty"`
	NodesAtVersion int `json:"nodesAtVersion,omitempty"`
	// BlockedPod, BlockedPDB and BlockedNode are, for a node-group step
	// that failed, a pod on a node still to replace whose
	// PodDisruptionBudget allows no disruption.
	BlockedPod  string `json:"blockedPod,omitempty"`
	BlockedPDB  string `json:"blockedPDB,omitempty"`
	BlockedNode string `json:"blockedNode,omitempty"`
	// Started is when a step that ended (done or failed) started, in the
	// run that ended it.
	Started *time.Time `json:"started,omitempty"`
	At      time.Time  `json:"at"`
}

// Journal states.
const (
	StepStarted = "started"
	StepDone    = "done"
	StepFailed  = "failed"
	Calling     = "calling"
	Called      = "called"
)

// StepKey is the journal key of a step: "1.31/control-plane",
// "1.31/node-group/initial".
func StepKey(h plan.Hop, st plan.Step) string {
	key := h.To.String() + "/" + st.Kind
	if st.Name != "" {
		key += "/" + st.Name
	}
	return key
}

// record puts an entry, stamped with the Kubernetes port's clock.
func (e *Executor) record(key string, en Entry) error {
	if e.Journal == nil {
		return nil
	}
	en.At = e.Ports.Kube.Now().UTC()
	if err := e.Journal.Put(key, en); err != nil {
		return fmt.Errorf("journal: recording %s %s: %w", key, en.State, err)
	}
	return nil
}

// done reports whether the journal holds the step as done.
func (e *Executor) done(key string) bool {
	if e.Journal == nil {
		return false
	}
	en, ok := e.Journal.Get(key)
	return ok && en.State == StepDone
}

// once carries out an operation of the current step at most once across
// runs: when the journal holds it as called, its id is returned without
// calling again (resumed is true); otherwise the journal records the call
// before making it and its id after. An operation the journal holds as
// calling — the run died between the two records — is made again: AWS
// refuses a second update while the first runs (ResourceInUseException),
// and the error says so.
func (e *Executor) once(op string, call func() (id string, err error)) (id string, resumed bool, err error) {
	key := e.stepKey + "/" + op
	if e.Journal != nil {
		if en, ok := e.Journal.Get(key); ok && en.State == Called {
			e.Observer.Event("Normal", "Resumed", fmt.Sprintf("%s: %s already made (journal, %s)%s", e.stepKey, op, en.At.Format(time.RFC3339), idNote(en.ID)))
			return en.ID, true, nil
		}
	}
	if err := e.record(key, Entry{State: Calling}); err != nil {
		return "", false, err
	}
	if id, err = call(); err != nil {
		return "", false, err
	}
	return id, false, e.record(key, Entry{State: Called, ID: id})
}

// journaled returns the id of an operation of the current step the
// journal holds as called.
func (e *Executor) journaled(op string) (string, bool) {
	if e.Journal == nil {
		return "", false
	}
	en, ok := e.Journal.Get(e.stepKey + "/" + op)
	return en.ID, ok && en.State == Called
}

func idNote(id string) string {
	if id == "" {
		return ""
	}
	return "; waiting on " + id
}

// runStep carries out a step unless the journal holds it as done,
// recording it before and after.
func (e *Executor) runStep(ctx context.Context, h plan.Hop, st plan.Step) (skipped bool, err error) {
	key := StepKey(h, st)
	if e.done(key) {
		return true, nil
	}
	e.stepKey = key
	if err := e.record(key, Entry{State: StepStarted}); err != nil {
		return false, err
	}
	started := e.Ports.Kube.Now().UTC()
	err = e.step(ctx, h, st)
	end := Entry{State: StepDone, Started: &started}
	if err != nil {
		end = Entry{State: StepFailed, Message: err.Error(), Started: &started}
	}
	if e.Journal != nil && st.Kind == plan.NodeGroup {
		// A run stopped by Ctrl-C still counts: the context is done, the
		// cluster is not.
		e.groupProgress(context.WithoutCancel(ctx), &end, st, h.To, err != nil)
	}
	if rerr := e.record(key, end); rerr != nil {
		return false, rerr
	}
	return false, err
}
