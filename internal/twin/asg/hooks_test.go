package asg_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/rules/instancerefresh"
	"github.com/ladder-eks/ladder/internal/twin/asg"
)

// A hook put after creation holds terminating instances in
// Terminating:Wait; CompleteLifecycleAction releases one at once, and a
// second completion of it is the API's ValidationError.
func TestPutLifecycleHookAndCompleteLifecycleAction(t *testing.T) {
	tw := newTwin(t, 1)
	// The Node Termination Handler completes the action an hour after
	// draining, so the test's CompleteLifecycleAction comes first.
	tw.create(groupSpec("workers", 2, func(s *asg.Spec) { s.NTH.CompleteLifecycleActionDelay = time.Hour }))
	tw.Settle()
	if _, ok, _ := tw.asg.LifecycleHook("workers"); ok {
		t.Fatal("the group has a hook before PutLifecycleHook")
	}
	if err := tw.asg.PutLifecycleHook("workers", asg.LifecycleHook{Name: "drain", HeartbeatTimeout: 10 * time.Second}); err == nil || !strings.HasPrefix(err.Error(), "ValidationError: ") {
		t.Fatalf("a 10 s heartbeat: %v, want a ValidationError", err)
	}
	if err := tw.asg.PutLifecycleHook("workers", asg.LifecycleHook{Name: "drain", HeartbeatTimeout: 600 * time.Second}); err != nil {
		t.Fatal(err)
	}
	h, ok, err := tw.asg.LifecycleHook("workers")
	if err != nil || !ok || h.Name != "drain" || h.DefaultResult != asg.Abandon {
		t.Fatalf("LifecycleHook = %+v %v %v, want drain with the default result ABANDON", h, ok, err)
	}
	tw.upgrade("workers", ami131)
	tw.refresh("workers", instancerefresh.Preferences{})
	var waiting string
	tw.Eng.Run(tw.Eng.Now().Add(time.Hour), func() bool {
		for _, in := range tw.status("workers").Instances {
			if in.State == asg.TerminatingWait {
				waiting = in.ID
				return true
			}
		}
		return false
	})
	if waiting == "" {
		t.Fatal("no instance waited on the hook during the refresh")
	}
	if err := tw.asg.CompleteLifecycleAction("workers", "drain", waiting, asg.Continue); err != nil {
		t.Fatalf("CompleteLifecycleAction %s: %v", waiting, err)
	}
	for _, in := range tw.status("workers").Instances {
		if in.ID == waiting && in.State == asg.TerminatingWait {
			t.Fatalf("instance %s still waits after CompleteLifecycleAction", waiting)
		}
	}
	if err := tw.asg.CompleteLifecycleAction("workers", "drain", waiting, asg.Continue); err == nil || err.Error() != "ValidationError: No active Lifecycle Action found with instance ID "+waiting {
		t.Fatalf("a second completion: %v, want the ValidationError", err)
	}
}
