package executor

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/plan"
	"github.com/ladder-eks/ladder/internal/rules/window"
)

// TestWindowHoldsSteps: the twin starts on Wednesday 2026-04-01 at 09:00
// UTC (18:00 in Seoul); with the window "Mon-Fri 22:00-06:00 Asia/Seoul"
// the pre-checks run at once, and the node group's update starts at 22:00
// Seoul time, 4 hours later, not before.
func TestWindowHoldsSteps(t *testing.T) {
	tw := newManagedTwin(t)
	w, err := window.Parse("Mon-Fri 22:00-06:00 Asia/Seoul")
	if err != nil {
		t.Fatal(err)
	}
	tw.ex.Window = w
	v130 := kubeversion.MustParse("1.30")
	p := plan.Plan{Hops: []plan.Hop{{From: v130, To: v131, Steps: []plan.Step{
		{Kind: plan.NodeGroup, Name: "custom", From: "1.30", To: "1.31", Strategy: "in-place"},
	}}}}
	if err := tw.ex.Run(context.Background(), p); err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(tw.rec.lines, "\n"))
	}
	var held, started string
	for _, l := range tw.rec.lines {
		switch {
		case strings.Contains(l, "WindowClosed"):
			held = l
		case strings.Contains(l, "start node-group custom"):
			started = l
		}
	}
	if !strings.HasSuffix(held, `1.31/node-group/custom waits for the maintenance window "Mon-Fri 22:00-06:00 Asia/Seoul", open at 2026-04-01T13:00:00Z`) {
		t.Errorf("held: %q", held)
	}
	if !strings.HasPrefix(started, "14400s ") {
		t.Errorf("the step started at %q, want 14400s (13:00 UTC)", started)
	}
}

// TestHealthyGate: an unhealthy application stops the run before the next
// step, which is not started.
func TestHealthyGate(t *testing.T) {
	tw := newManagedTwin(t)
	tw.ex.Healthy = func(context.Context) error { return errors.New("probe http://ui/: 5 requests in a row failed") }
	v130 := kubeversion.MustParse("1.30")
	p := plan.Plan{Hops: []plan.Hop{{From: v130, To: v131, Steps: []plan.Step{
		{Kind: plan.NodeGroup, Name: "custom", From: "1.30", To: "1.31", Strategy: "in-place"},
	}}}}
	err := tw.ex.Run(context.Background(), p)
	if err == nil || err.Error() != "before 1.31/node-group/custom: probe http://ui/: 5 requests in a row failed" {
		t.Fatalf("run: %v", err)
	}
	for _, l := range tw.rec.lines {
		if strings.Contains(l, "start node-group") {
			t.Errorf("the step started: %s", l)
		}
	}
}
