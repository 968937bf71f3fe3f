package executor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/ladder-eks/ladder/internal/eviction"
	"github.com/ladder-eks/ladder/internal/twin/twintest"
)

// blockRecorder is the recorder, and a BlockObserver: it keeps every span
// it is told of, in order.
type blockRecorder struct {
	*recorder
	spans []BlockedEviction
}

func (b *blockRecorder) EvictionBlocked(x BlockedEviction) { b.spans = append(b.spans, x) }

// A drain of Ladder's own tells a BlockObserver of each pod a PDB refuses,
// once when it starts however often the eviction is retried: blue's drain
// under a PDB of maxUnavailable 0 opens a span for orders' pod with its
// node, the PDB and the API's message, still blocked when the step runs
// out of time.
func TestDrainTellsBlockedEvictions(t *testing.T) {
	tw, _ := newManagedTwinPDB(t, 0)
	obs := &blockRecorder{recorder: tw.rec}
	tw.ex.Observer = obs
	tw.ex.Deadline = tw.port.Now().Add(time.Hour)
	err := tw.ex.UpgradeBlueGreen(context.Background(), BlueGreen{Group: "orders", Blue: "blue", Green: Green{Name: "green", Desired: aws.Int32(3)}}, v131)
	if !IsTimeLimit(err) {
		t.Fatalf("error %v, want the time limit", err)
	}
	if len(obs.spans) != 1 {
		t.Fatalf("spans %+v, want one: the first pod refused (the drain retries it until the time limit)", obs.spans)
	}
	s := obs.spans[0]
	if !strings.HasPrefix(s.Pod, "default/orders-") || s.Node == "" || len(s.PDBs) != 1 || s.PDBs[0] != "default/orders" ||
		s.Outcome != OutcomeBlocked || !s.Until.IsZero() || s.Since.IsZero() ||
		!strings.Contains(s.Message, "(The disruption budget orders needs") {
		t.Errorf("span %+v, want an orders pod blocked by default/orders, still open", s)
	}
}

// A pod under two PDBs is refused by the Eviction API for good (a 500,
// semantics.md §D.1): the drain fails on it, and the observer hears of it
// once, failed, with both PDBs and the API's message.
func TestDrainTellsFailedEviction(t *testing.T) {
	tw, c := newManagedTwinPDB(t, 1)
	if err := c.Apply(twintest.PDB("orders-too", "orders", nil, twintest.Int(1))); err != nil {
		t.Fatal(err)
	}
	obs := &blockRecorder{recorder: tw.rec}
	tw.ex.Observer = obs
	err := tw.ex.UpgradeBlueGreen(context.Background(), BlueGreen{Group: "orders", Blue: "blue", Green: Green{Name: "green", Desired: aws.Int32(3)}}, v131)
	if err == nil || IsTimeLimit(err) {
		t.Fatalf("error %v, want the drain to fail", err)
	}
	if len(obs.spans) != 1 {
		t.Fatalf("spans %+v, want one", obs.spans)
	}
	s := obs.spans[0]
	if !strings.HasPrefix(s.Pod, "default/orders-") || strings.Join(s.PDBs, ",") != "default/orders,default/orders-too" ||
		s.Outcome != OutcomeFailed || s.Since.IsZero() || !s.Until.Equal(s.Since) || s.Message != eviction.MultiplePDBMessage {
		t.Errorf("span %+v, want an orders pod failed at once under both PDBs", s)
	}
}

// A refused pod that goes without Ladder's eviction — deleted by someone
// else — ends its span then, deleted; the drain goes on to the next node,
// whose pod the PDB refuses in turn.
func TestDrainTellsDeletedPod(t *testing.T) {
	tw, c := newManagedTwinPDB(t, 0)
	obs := &blockRecorder{recorder: tw.rec}
	tw.ex.Observer = obs
	start := tw.port.Now()
	tw.ex.Deadline = start.Add(time.Hour)
	deleteAt := start.Add(20 * time.Minute)
	c.Engine().At(deleteAt, func() {
		if len(obs.spans) == 0 {
			t.Error("no span open when the pod is deleted")
			return
		}
		ns, name, _ := strings.Cut(obs.spans[0].Pod, "/")
		if err := c.DeletePod(ns, name, nil, "test"); err != nil {
			t.Error(err)
		}
	})
	err := tw.ex.UpgradeBlueGreen(context.Background(), BlueGreen{Group: "orders", Blue: "blue", Green: Green{Name: "green", Desired: aws.Int32(3)}}, v131)
	if !IsTimeLimit(err) {
		t.Fatalf("error %v, want the time limit on blue's second node", err)
	}
	if len(obs.spans) != 3 {
		t.Fatalf("spans %+v, want the first pod's start and end, then the second's start", obs.spans)
	}
	first, ended, second := obs.spans[0], obs.spans[1], obs.spans[2]
	if ended.Pod != first.Pod || ended.Node != first.Node || !ended.Since.Equal(first.Since) || ended.Outcome != OutcomeDeleted || !ended.Until.Equal(deleteAt) {
		t.Errorf("span %+v ended as %+v, want deleted at %s", first, ended, deleteAt)
	}
	if second.Pod == first.Pod || second.Node == first.Node || second.Outcome != OutcomeBlocked || !second.Until.IsZero() {
		t.Errorf("second span %+v, want the other blue node's pod, blocked", second)
	}
}
