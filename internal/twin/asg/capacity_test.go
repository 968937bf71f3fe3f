package asg_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/twin/asg"
)

// MinHealthyPercentage is "rounded up to the nearest integer" (§C, F.1);
// MaxHealthyPercentage is rounded up too (the twin's choice, see Capacity).
func TestCapacityRoundsUp(t *testing.T) {
	for _, c := range []struct {
		desired, min, max         int
		wantMinHealthy, wantTotal int
	}{
		{10, 90, 100, 9, 10},
		{4, 90, 100, 4, 4},   // 3.6 → 4: no instance may leave service
		{4, 75, 100, 3, 4},   // exact
		{3, 50, 100, 2, 3},   // 1.5 → 2
		{10, 90, 110, 9, 11}, // 11 exactly
		{4, 100, 110, 4, 5},  // 4.4 → 5: launch-before-terminate works below 10 instances
		{1, 100, 110, 1, 2},  // 1.1 → 2
		{10, 100, 200, 10, 20},
		{7, 0, 100, 0, 7},
	} {
		got := asg.NewCapacity(c.desired, c.min, c.max)
		if got.MinHealthy != c.wantMinHealthy || got.MaxTotal != c.wantTotal {
			t.Errorf("NewCapacity(%d, %d, %d) = min %d, total %d; want %d, %d",
				c.desired, c.min, c.max, got.MinHealthy, got.MaxTotal, c.wantMinHealthy, c.wantTotal)
		}
	}
}

// The set sizes derived from the percentages (Capacity.NextSet) for a group
// at its desired capacity.
func TestNextSet(t *testing.T) {
	for _, c := range []struct {
		name                    string
		desired, min, max, left int
		want                    asg.Set
	}{
		{"10 at Min 90/Max 100: one at a time, terminate first", 10, 90, 100, 10, asg.Set{TerminateFirst: 1}},
		{"10 at Min 50: five at a time", 10, 50, 100, 10, asg.Set{TerminateFirst: 5}},
		{"10 at Min 0: all at once", 10, 0, 100, 10, asg.Set{TerminateFirst: 10}},
		{"10 at Min 90/Max 110: one terminated at once, one launched first", 10, 90, 110, 10, asg.Set{TerminateFirst: 1, LaunchFirst: 1}},
		{"10 at Min 100/Max 110: launch one before terminating one", 10, 100, 110, 10, asg.Set{LaunchFirst: 1}},
		{"10 at Min 100/Max 200: launch all first", 10, 100, 200, 10, asg.Set{LaunchFirst: 10}},
		{"10 at Min 80/Max 120: two and two", 10, 80, 120, 10, asg.Set{TerminateFirst: 2, LaunchFirst: 2}},
		{"10 at Min 100/Max 100: no headroom, one at a time anyway", 10, 100, 100, 10, asg.Set{TerminateFirst: 1}},
		{"4 at Min 90 rounds up to 4: no headroom, one at a time anyway", 4, 90, 100, 4, asg.Set{TerminateFirst: 1}},
		{"1 at Min 100/Max 110: launch before terminate", 1, 100, 110, 1, asg.Set{LaunchFirst: 1}},
		{"bounded by what is left", 10, 50, 100, 3, asg.Set{TerminateFirst: 3}},
		{"launch-first share bounded by what is left", 10, 90, 110, 1, asg.Set{TerminateFirst: 1}},
		{"nothing left", 10, 50, 100, 0, asg.Set{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := asg.NewCapacity(c.desired, c.min, c.max).NextSet(c.desired, c.left)
			if got != c.want {
				t.Fatalf("NextSet = %+v, want %+v", got, c.want)
			}
		})
	}
}

// StartInstanceRefresh rejects what the API rejects (§C, F.10), and starts
// nothing.
func TestStartInstanceRefreshValidation(t *testing.T) {
	for _, c := range []struct {
		name    string
		prefs   asg.Preferences
		wantErr string // "" = accepted
	}{
		{"Max-Min > 100", asg.Preferences{MinHealthyPercentage: ptr(0), MaxHealthyPercentage: ptr(110)}, "cannot be greater than 100"},
		{"Max without Min", asg.Preferences{MaxHealthyPercentage: ptr(150)}, "must also specify MinHealthyPercentage"},
		{"Min above 100", asg.Preferences{MinHealthyPercentage: ptr(101)}, "MinHealthyPercentage must be between 0 and 100"},
		{"Min negative", asg.Preferences{MinHealthyPercentage: ptr(-1)}, "MinHealthyPercentage must be between 0 and 100"},
		{"Max below 100", asg.Preferences{MinHealthyPercentage: ptr(50), MaxHealthyPercentage: ptr(99)}, "MaxHealthyPercentage must be between 100 and 200"},
		{"Max above 200", asg.Preferences{MinHealthyPercentage: ptr(100), MaxHealthyPercentage: ptr(201)}, "MaxHealthyPercentage must be between 100 and 200"},
		{"checkpoints not ascending", asg.Preferences{CheckpointPercentages: []int{50, 20, 100}}, "unique and in ascending order"},
		{"checkpoints not unique", asg.Preferences{CheckpointPercentages: []int{50, 50, 100}}, "unique and in ascending order"},
		{"checkpoint 0", asg.Preferences{CheckpointPercentages: []int{0, 100}}, "between 1 and 100"},
		{"checkpoint above 100", asg.Preferences{CheckpointPercentages: []int{50, 101}}, "between 1 and 100"},
		{"CheckpointDelay without checkpoints", asg.Preferences{CheckpointDelay: seconds(60)}, "needs CheckpointPercentages"},
		{"CheckpointDelay above 172800 s", asg.Preferences{CheckpointPercentages: []int{100}, CheckpointDelay: seconds(172801)}, "CheckpointDelay must be between 0 and 172800"},
		{"BakeTime above 172800 s", asg.Preferences{BakeTime: 172801 * time.Second}, "BakeTime must be between 0 and 172800"},
		{"negative warmup", asg.Preferences{InstanceWarmup: seconds(-1)}, "InstanceWarmup cannot be negative"},
		{"Max-Min = 100", asg.Preferences{MinHealthyPercentage: ptr(100), MaxHealthyPercentage: ptr(200)}, ""},
		{"Min 0 alone", asg.Preferences{MinHealthyPercentage: ptr(0)}, ""},
		{"partial refresh: last checkpoint below 100", asg.Preferences{CheckpointPercentages: []int{20, 50}}, ""},
		{"defaults", asg.Preferences{}, ""},
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
	tw.refresh("ng", asg.Preferences{})
	err := tw.asg.StartInstanceRefresh("ng", asg.Preferences{}, nil)
	if err == nil || !strings.Contains(err.Error(), "InstanceRefreshInProgress") {
		t.Fatalf("second refresh: err = %v, want InstanceRefreshInProgress", err)
	}
	if err := tw.asg.SetLaunchTemplate("ng", asg.LaunchTemplate{ImageID: ami130}); err == nil {
		t.Fatal("SetLaunchTemplate during a refresh was accepted")
	}
}
