package asg_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/rules/instancerefresh"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/asg"
)

// RefreshRecord is what DescribeInstanceRefreshes reads on every poll: the
// refresh's status and progress, live while it runs, as Status shows them,
// without the sets and checkpoints that grow with the refresh.
func TestRefreshRecordFollowsTheRefresh(t *testing.T) {
	tw := newTwin(t, 1)
	tw.create(groupSpec("ng", 4))
	tw.Settle()
	if _, ok, err := tw.asg.RefreshRecord("ng"); ok || err != nil {
		t.Fatalf("RefreshRecord before any refresh: %v, %v; want none", ok, err)
	}
	if _, _, err := tw.asg.RefreshRecord("missing"); err == nil {
		t.Fatalf("RefreshRecord of an unknown group: no error")
	}
	tw.upgrade("ng", ami131)
	res := tw.refresh("ng", instancerefresh.Preferences{MinHealthyPercentage: ptr(50), InstanceWarmup: ptr(60 * time.Second)})

	// Each change of the record, as a poller after every event sees it.
	var seen []string
	var rec asg.InstanceRefresh
	read := func() bool {
		r, ok, err := tw.asg.RefreshRecord("ng")
		if !ok || err != nil {
			t.Fatalf("RefreshRecord during the refresh: %v, %v", ok, err)
		}
		rec = r
		s := fmt.Sprintf("%s %d%% %d to update", r.Status, r.PercentageComplete, r.InstancesToUpdate)
		if len(seen) == 0 || seen[len(seen)-1] != s {
			seen = append(seen, s)
		}
		return r.Status != asg.RefreshInProgress
	}
	read()
	if tw.Eng.Run(tw.Eng.Now().Add(6*time.Hour), read) != sim.Done {
		t.Fatalf("refresh still %s after 6h\n%s", rec.Status, tw.dump())
	}
	// Min 50 of 4: two sets of two, terminated first; each set counts
	// when its replacements have warmed up, and the refresh succeeds at the
	// event the second set does.
	want := []string{"InProgress 0% 4 to update", "InProgress 50% 2 to update", "Successful 100% 0 to update"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("record went %q, want %q", seen, want)
	}
	full := tw.status("ng").Refresh
	if rec.ID != full.ID || rec.Status != full.Status || rec.PercentageComplete != full.PercentageComplete ||
		rec.InstancesToUpdate != full.InstancesToUpdate || !rec.EndTime.Equal(full.EndTime) || rec.EndTime.IsZero() || rec.DesiredConfiguration != full.DesiredConfiguration {
		t.Errorf("RefreshRecord %+v\ndiffers from Status's refresh %+v", rec, *full)
	}
	if res.ID != rec.ID || res.Status != rec.Status {
		t.Errorf("the refresh's callback saw %s %s, the record %s %s", res.ID, res.Status, rec.ID, rec.Status)
	}
	if len(full.Sets) != 2 || rec.Sets != nil || rec.Checkpoints != nil {
		t.Errorf("Status has %d sets; RefreshRecord carries %d sets and %d checkpoints, want none", len(full.Sets), len(rec.Sets), len(rec.Checkpoints))
	}
}
