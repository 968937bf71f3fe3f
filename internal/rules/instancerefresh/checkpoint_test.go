package instancerefresh

import "testing"

// Checkpoints count replacements of the instances to replace, rounded up
// (semantics.md §C; the checkpoint page's example: a group of two with
// checkpoints [10, 40, 100] reaches 10 and 40 with its first instance).
func TestCheckpoints(t *testing.T) {
	cases := []struct {
		name                     string
		checkpoints              []int
		next, updated, toReplace int
		remaining                int
		wantReached, wantRoom    int
		wantThresholdOfNext      int
	}{
		{name: "two instances, first replaced: 10 and 40 reached, 40 reported",
			checkpoints: []int{10, 40, 100}, next: 0, updated: 1, toReplace: 2, remaining: 1,
			wantReached: 1, wantRoom: 1, wantThresholdOfNext: 1},
		{name: "ten instances, none replaced: the next set stops at 20%",
			checkpoints: []int{20, 100}, next: 0, updated: 0, toReplace: 10, remaining: 10,
			wantReached: -1, wantRoom: 2, wantThresholdOfNext: 2},
		{name: "ten instances, 20% passed: room to the end",
			checkpoints: []int{20, 100}, next: 1, updated: 2, toReplace: 10, remaining: 8,
			wantReached: -1, wantRoom: 8, wantThresholdOfNext: 10},
		{name: "threshold already met but not yet recorded: room is still one",
			checkpoints: []int{50, 100}, next: 0, updated: 5, toReplace: 10, remaining: 5,
			wantReached: 0, wantRoom: 1, wantThresholdOfNext: 5},
		{name: "33% of 10 rounds up to 4",
			checkpoints: []int{33, 100}, next: 0, updated: 3, toReplace: 10, remaining: 7,
			wantReached: -1, wantRoom: 1, wantThresholdOfNext: 4},
		{name: "no checkpoints: the whole remainder",
			checkpoints: nil, next: 0, updated: 0, toReplace: 6, remaining: 6,
			wantReached: -1, wantRoom: 6, wantThresholdOfNext: -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ReachedCheckpoint(tc.checkpoints, tc.next, tc.updated, tc.toReplace); got != tc.wantReached {
				t.Errorf("ReachedCheckpoint = %d, want %d", got, tc.wantReached)
			}
			if got := SetRoom(tc.remaining, tc.checkpoints, tc.next, tc.updated, tc.toReplace); got != tc.wantRoom {
				t.Errorf("SetRoom = %d, want %d", got, tc.wantRoom)
			}
			if tc.next < len(tc.checkpoints) {
				if got := CheckpointThreshold(tc.checkpoints[tc.next], tc.toReplace); got != tc.wantThresholdOfNext {
					t.Errorf("CheckpointThreshold(%d, %d) = %d, want %d", tc.checkpoints[tc.next], tc.toReplace, got, tc.wantThresholdOfNext)
				}
			}
		})
	}
}
