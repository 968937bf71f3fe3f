package mng_test

import (
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	"github.com/ladder-eks/ladder/internal/twin/mng"
)

// UpdateRecord is what DescribeUpdate reads on every poll: the update's
// identity, status and errors as Status shows them, live while the update
// runs, without the per-node record that grows with the group.
func TestUpdateRecordFollowsTheUpdateWithoutPerNodeRecord(t *testing.T) {
	tw := newTwin(t)
	tw.adopt(group("initial", 3, atVersion("1.30")))
	tw.Settle()
	if err := tw.mng.UpdateVersion("initial", nodegroup.UpdateRequest{Version: "1.31"}, nil); err != nil {
		t.Fatalf("UpdateVersion: %v", err)
	}
	id := tw.status("initial").Updates[0].ID
	if _, ok := tw.mng.UpdateRecord("initial", "no-such-update"); ok {
		t.Errorf("UpdateRecord of an unknown update: ok")
	}
	if _, ok := tw.mng.UpdateRecord("no-such-group", id); ok {
		t.Errorf("UpdateRecord of an unknown group: ok")
	}
	rec, ok := tw.mng.UpdateRecord("initial", id)
	if !ok || rec.Status != mng.UpdateInProgress {
		t.Fatalf("UpdateRecord at start: %v %q, want InProgress", ok, rec.Status)
	}
	if !tw.runUntil(3*time.Hour, func() bool {
		rec, _ = tw.mng.UpdateRecord("initial", id)
		return rec.Status != mng.UpdateInProgress
	}) {
		t.Fatalf("update still %s after 3h\n%s", rec.Status, tw.dumpLog())
	}
	full := tw.status("initial").Updates[0]
	if rec.ID != full.ID || rec.Status != full.Status || rec.ToVersion != full.ToVersion || !rec.CreatedAt.Equal(full.CreatedAt) || len(rec.Errors) != len(full.Errors) {
		t.Errorf("UpdateRecord %s %s → %s at %s, %d errors; Status has %s %s → %s at %s, %d errors",
			rec.ID, rec.Status, rec.ToVersion, rec.CreatedAt, len(rec.Errors), full.ID, full.Status, full.ToVersion, full.CreatedAt, len(full.Errors))
	}
	if rec.Status != mng.UpdateSuccessful || len(full.Launched) == 0 {
		t.Fatalf("update %s launched %d nodes, want Successful with new nodes", rec.Status, len(full.Launched))
	}
	if rec.Launched != nil || rec.Replaced != nil || rec.Phases != nil || rec.Blocked != nil {
		t.Errorf("UpdateRecord carries the per-node record: %d launched, %d replaced, %d phases, %d blocked",
			len(rec.Launched), len(rec.Replaced), len(rec.Phases), len(rec.Blocked))
	}
}
