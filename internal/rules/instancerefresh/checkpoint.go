package instancerefresh

// Checkpoints: a refresh "temporarily stops replacing instances" when the
// share of the group it has replaced reaches one of CheckpointPercentages,
// for CheckpointDelay (semantics.md §C; asg-adding-checkpoints-instance-
// refresh.md).

// CheckpointThreshold is the number of replacements checkpoint percent
// needs out of toReplace, rounded up, so that a group of two with
// checkpoints [10,40,100] reaches both 10 and 40 with its first instance and
// reports 40 ("it skips the first checkpoint"). The user guide counts
// percentages of the group's instances; this counts them of the instances
// to replace, which is the same unless SkipMatching skipped some (the
// reference is silent there; this way a checkpoint still means that share
// of the work is done, and PercentageComplete agrees with it).
func CheckpointThreshold(percent, toReplace int) int { return ceilDiv(percent*toReplace, 100) }

// ReachedCheckpoint is the index of the highest checkpoint at or after next
// that updated replacements (of toReplace) reach, or -1 when they reach
// none: a set that crosses several checkpoints stops once, at the last.
func ReachedCheckpoint(checkpoints []int, next, updated, toReplace int) int {
	reached := -1
	for i := next; i < len(checkpoints); i++ {
		if updated >= CheckpointThreshold(checkpoints[i], toReplace) {
			reached = i
		}
	}
	return reached
}

// SetRoom bounds the next set so that it does not overshoot checkpoint
// next: "will sometimes replace fewer but never more" (asg-adding-
// checkpoints-instance-refresh.md). It is remaining when no checkpoint is
// ahead, and at least one, so a refresh always moves.
func SetRoom(remaining int, checkpoints []int, next, updated, toReplace int) int {
	if next >= len(checkpoints) {
		return remaining
	}
	return min(remaining, max(1, CheckpointThreshold(checkpoints[next], toReplace)-updated))
}
