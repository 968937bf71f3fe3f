package asg_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/rules/instancerefresh"
	"github.com/ladder-eks/ladder/internal/twin/asg"
)

// StartInstanceRefresh rejects what the API rejects (§C, F.10), and starts
// nothing.
func TestStartInstanceRefreshValidation(t *testing.T) {
	for _, c := range []struct {
		name    string
		prefs   instancerefresh.Preferences
		wantErr string // "" = accepted
	}{
		{"Max-Min > 100", instancerefresh.Preferences{MinHealthyPercentage: ptr(0), MaxHealthyPercentage: ptr(110)}, "cannot be greater than 100"},
		{"Max without Min", instancerefresh.Preferences{MaxHealthyPercentage: ptr(150)}, "must also specify MinHealthyPercentage"},
		{"Min above 100", instancerefresh.Preferences{MinHealthyPercentage: ptr(101)}, "MinHealthyPercentage must be between 0 and 100"},
		{"Min negative", instancerefresh.Preferences{MinHealthyPercentage: ptr(-1)}, "MinHealthyPercentage must be between 0 and 100"},
		{"Max below 100", instancerefresh.Preferences{MinHealthyPercentage: ptr(50), MaxHealthyPercentage: ptr(99)}, "MaxHealthyPercentage must be between 100 and 200"},
		{"Max above 200", instancerefresh.Preferences{MinHealthyPercentage: ptr(100), MaxHealthyPercentage: ptr(201)}, "MaxHealthyPercentage must be between 100 and 200"},
		{"checkpoints not ascending", instancerefresh.Preferences{CheckpointPercentages: []int{50, 20, 100}}, "unique and in ascending order"},
		{"checkpoints not unique", instancerefresh.Preferences{CheckpointPercentages: []int{50, 50, 100}}, "unique and in ascending order"},
		{"checkpoint 0", instancerefresh.Preferences{CheckpointPercentages: []int{0, 100}}, "between 1 and 100"},
		{"checkpoint above 100", instancerefresh.Preferences{CheckpointPercentages: []int{50, 101}}, "between 1 and 100"},
		{"CheckpointDelay without checkpoints", instancerefresh.Preferences{CheckpointDelay: seconds(60)}, "needs CheckpointPercentages"},
		{"CheckpointDelay above 172800 s", instancerefresh.Preferences{CheckpointPercentages: []int{100}, CheckpointDelay: seconds(172801)}, "CheckpointDelay must be between 0 and 172800"},
		{"BakeTime above 172800 s", instancerefresh.Preferences{BakeTime: 172801 * time.Second}, "BakeTime must be between 0 and 172800"},
		{"negative warmup", instancerefresh.Preferences{InstanceWarmup: seconds(-1)}, "InstanceWarmup cannot be negative"},
		{"Max-Min = 100", instancerefresh.Preferences{MinHealthyPercentage: ptr(100), MaxHealthyPercentage: ptr(200)}, ""},
		{"Min 0 alone", instancerefresh.Preferences{MinHealthyPercentage: ptr(0)}, ""},
		{"partial refresh: last checkpoint below 100", instancerefresh.Preferences{CheckpointPercentages: []int{20, 50}}, ""},
		{"defaults", instancerefresh.Preferences{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tw := newTwin(t, 1)
			tw.create(groupSpec("ng", 2))
			tw.upgrade("ng", ami131)
			err := tw.asg.StartInstanceRefresh("ng", c.prefs, nil)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, c.wantErr)
			}
			if s := tw.status("ng"); s.Refresh != nil || tw.asg.Busy() {
				t.Fatalf("a rejected refresh started: %+v", s.Refresh)
			}
		})
	}
}

func TestOneRefreshAtATime(t *testing.T) {
	tw := newTwin(t, 1)
	tw.create(groupSpec("ng", 2))
	tw.upgrade("ng", ami131)
	tw.refresh("ng", instancerefresh.Preferences{})
	err := tw.asg.StartInstanceRefresh("ng", instancerefresh.Preferences{}, nil)
	if err == nil || !strings.Contains(err.Error(), "InstanceRefreshInProgress") {
		t.Fatalf("second refresh: err = %v, want InstanceRefreshInProgress", err)
	}
	if err := tw.asg.SetLaunchTemplate("ng", asg.LaunchTemplate{ImageID: ami130}); err == nil {
		t.Fatal("SetLaunchTemplate during a refresh was accepted")
	}
}
