package executor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

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
	// Token is the client request token an operation recorded Calling is
	// made with: a run that dies between the call and its record makes the
	// call again with the same token, and EKS answers with what it made the
	// first time instead of refusing a second update.
	Token string `json:"token,omitempty"`
	// Message is a failed step's error.
	Message string `json:"message,omitempty"`
	// Nodes and NodesAtVersion are a node-group step's group when the
	// step ended: its nodes, and those at the hop's minor (groupnodes.go).
	Nodes          int `json:"nodes,omitempty"`
	NodesAtVersion int `json:"nodesAtVersion,omitempty"`
	// Outdated, on a node-group step's "outdated" record, are its group's
	// nodes below the hop's minor when the hop first started; Replaced,
	// on the step's own, how many of them were gone when it ended — what
	// the comparison with the rehearsal counts as the group's nodes
	// replaced (a Karpenter group's nodes may drift away during the
	// control plane's step, before their own).
	Outdated []string `json:"outdated,omitempty"`
	Replaced int      `json:"replaced,omitempty"`
	// BlockedPod, BlockedPDB and BlockedNode are, for a node-group step
	// that failed, a pod on a node still to replace whose
	// PodDisruptionBudget allows no disruption.
	BlockedPod  string `json:"blockedPod,omitempty"`
	BlockedPDB  string `json:"blockedPDB,omitempty"`
	BlockedNode string `json:"blockedNode,omitempty"`
	// Started is when a step that ended (done or failed) started, in the
	// run that ended it.
	Started *time.Time `json:"started,omitempty"`
	// FirstStarted and EarlierSeconds are, for a step started again by a
	// later run (after kill -9, Ctrl-C or a pause), when it first started
	// and the time it ran in the earlier runs, each counted from its start
	// to its run's last sign of life: the step's last record or heartbeat
	// (Alive). The journal (internal/journal) writes them, carried from
	// record to record; the executor leaves them unset.
	FirstStarted   *time.Time `json:"firstStarted,omitempty"`
	EarlierSeconds float64    `json:"earlierSeconds,omitempty"`
	// Alive is the last heartbeat of the run that started the step,
	// written while the step runs (ladder upgrade beats every 30 s): what
	// a run killed without an end record is counted to.
	Alive *time.Time `json:"alive,omitempty"`
	At    time.Time  `json:"at"`
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
// calling — the run died between the two records — is made again with the
// client request token recorded with it: EKS answers a request whose token
// it has seen with the update it made then, so the run re-attaches to it.
// call receives that token (nil without a journal: the SDK makes one per
// call, and retries of that call carry it).
func (e *Executor) once(op string, call func(token *string) (id string, err error)) (id string, resumed bool, err error) {
	key := e.stepKey + "/" + op
	var token *string
	if e.Journal != nil {
		en, ok := e.Journal.Get(key)
		if ok && en.State == Called {
			e.Observer.Event("Normal", "Resumed", fmt.Sprintf("%s: %s already made (journal, %s)%s", e.stepKey, op, en.At.Format(time.RFC3339), idNote(en.ID)))
			return en.ID, true, nil
		}
		if ok && en.State == Calling && en.Token != "" {
			token = &en.Token
		} else {
			token = aws.String(requestToken(e.Cluster, key, e.Ports.Kube.Now()))
		}
	}
	if err := e.record(key, Entry{State: Calling, Token: aws.ToString(token)}); err != nil {
		return "", false, err
	}
	if id, err = call(token); err != nil {
		return "", false, err
	}
	return id, false, e.record(key, Entry{State: Called, ID: id})
}

// requestToken is a client request token for an operation first recorded
// at `at`: unique to the cluster, the operation and the attempt, and the
// same for the same inputs (a rehearsal's journal replays identically).
func requestToken(cluster, key string, at time.Time) string {
	sum := sha256.Sum256([]byte(cluster + "\x00" + key + "\x00" + at.UTC().Format(time.RFC3339Nano)))
	return "ladder-" + hex.EncodeToString(sum[:16])
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
		e.groupProgress(context.WithoutCancel(ctx), &end, st, h.To, err)
	}
	if rerr := e.record(key, end); rerr != nil {
		return false, rerr
	}
	return false, err
}
