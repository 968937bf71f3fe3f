package instancerefresh

import "testing"

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
		got := NewCapacity(c.desired, c.min, c.max)
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
		want                    Set
	}{
		{"10 at Min 90/Max 100: one at a time, terminate first", 10, 90, 100, 10, Set{TerminateFirst: 1}},
		{"10 at Min 50: five at a time", 10, 50, 100, 10, Set{TerminateFirst: 5}},
		{"10 at Min 0: all at once", 10, 0, 100, 10, Set{TerminateFirst: 10}},
		{"10 at Min 90/Max 110: one terminated at once, one launched first", 10, 90, 110, 10, Set{TerminateFirst: 1, LaunchFirst: 1}},
		{"10 at Min 100/Max 110: launch one before terminating one", 10, 100, 110, 10, Set{LaunchFirst: 1}},
		{"10 at Min 100/Max 200: launch all first", 10, 100, 200, 10, Set{LaunchFirst: 10}},
		{"10 at Min 80/Max 120: two and two", 10, 80, 120, 10, Set{TerminateFirst: 2, LaunchFirst: 2}},
		{"10 at Min 100/Max 100: no headroom, one at a time anyway", 10, 100, 100, 10, Set{TerminateFirst: 1}},
		{"4 at Min 90 rounds up to 4: no headroom, one at a time anyway", 4, 90, 100, 4, Set{TerminateFirst: 1}},
		{"1 at Min 100/Max 110: launch before terminate", 1, 100, 110, 1, Set{LaunchFirst: 1}},
		{"bounded by what is left", 10, 50, 100, 3, Set{TerminateFirst: 3}},
		{"launch-first share bounded by what is left", 10, 90, 110, 1, Set{TerminateFirst: 1}},
		{"nothing left", 10, 50, 100, 0, Set{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := NewCapacity(c.desired, c.min, c.max).NextSet(c.desired, c.left)
			if got != c.want {
				t.Fatalf("NextSet = %+v, want %+v", got, c.want)
			}
		})
	}
}
