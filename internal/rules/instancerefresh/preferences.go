// Package instancerefresh holds the arithmetic of an EC2 Auto Scaling
// instance refresh as pure functions: StartInstanceRefresh's validation of
// RefreshPreferences and its defaults, the healthy-percentage range turned
// into instance counts, the size of each set of replacements, and the
// checkpoints (semantics.md §C, §F.1, §F.10; aws-apis.md §3.3). The Auto
// Scaling twin applies them; an executor can ask them what a real refresh
// will do.
package instancerefresh

import (
	"fmt"
	"time"
)

// Preferences are StartInstanceRefresh's RefreshPreferences (semantics.md
// §C). A nil pointer is a preference left out of the request, which takes
// the API's default. The refresh's other preferences keep their defaults:
// no AutoRollback and no alarms, and ScaleInProtectedInstances and
// StandbyInstances never matter because the twin's instances are never
// protected or in Standby.
type Preferences struct {
	// MinHealthyPercentage is 0-100, default 90 (§C).
	MinHealthyPercentage *int
	// MaxHealthyPercentage is 100-200, default 100; it needs
	// MinHealthyPercentage, and Max-Min must not exceed 100 (§C, F.10).
	MaxHealthyPercentage *int
	// InstanceWarmup defaults to the group's DefaultInstanceWarmup, else its
	// HealthCheckGracePeriod (§C).
	InstanceWarmup *time.Duration
	// CheckpointPercentages are ascending and unique; a last value below 100
	// is a partial refresh that stops there (asg-adding-checkpoints-
	// instance-refresh.md: "To partially refresh the Auto Scaling group").
	CheckpointPercentages []int
	// CheckpointDelay is 0-172800 s, default 3600 s; it needs
	// CheckpointPercentages (§C).
	CheckpointDelay *time.Duration
	// SkipMatching skips instances already on the group's launch template
	// version; the API's default is false (§C).
	SkipMatching bool
	// BakeTime is 0-172800 s, waited after the last replacement before the
	// refresh counts as successful (§C).
	BakeTime time.Duration
}

// Settings are a refresh's preferences with the defaults filled in.
type Settings struct {
	MinHealthyPercentage  int
	MaxHealthyPercentage  int
	InstanceWarmup        time.Duration
	CheckpointPercentages []int
	CheckpointDelay       time.Duration
	SkipMatching          bool
	BakeTime              time.Duration
}

// API limits (§C; RefreshPreferences in the API reference).
const (
	defaultMinHealthy      = 90
	defaultMaxHealthy      = 100
	defaultCheckpointDelay = 3600 * time.Second
	maxDelay               = 172800 * time.Second // CheckpointDelay and BakeTime
)

// Resolve validates the preferences as StartInstanceRefresh does and fills
// in the defaults. groupWarmup is the group's DefaultInstanceWarmup or, if
// unset, its HealthCheckGracePeriod.
func (p Preferences) Resolve(groupWarmup time.Duration) (Settings, error) {
	s := Settings{
		MinHealthyPercentage:  defaultMinHealthy,
		MaxHealthyPercentage:  defaultMaxHealthy,
		InstanceWarmup:        groupWarmup,
		CheckpointPercentages: append([]int(nil), p.CheckpointPercentages...),
		SkipMatching:          p.SkipMatching,
		BakeTime:              p.BakeTime,
	}
	if p.MinHealthyPercentage != nil {
		s.MinHealthyPercentage = *p.MinHealthyPercentage
		if s.MinHealthyPercentage < 0 || s.MinHealthyPercentage > 100 {
			return s, validationError("MinHealthyPercentage must be between 0 and 100, got %d", s.MinHealthyPercentage)
		}
	}
	if p.MaxHealthyPercentage != nil {
		s.MaxHealthyPercentage = *p.MaxHealthyPercentage
		if s.MaxHealthyPercentage < 100 || s.MaxHealthyPercentage > 200 {
			return s, validationError("MaxHealthyPercentage must be between 100 and 200, got %d", s.MaxHealthyPercentage)
		}
		if p.MinHealthyPercentage == nil {
			return s, validationError("if you specify MaxHealthyPercentage, you must also specify MinHealthyPercentage")
		}
		if d := s.MaxHealthyPercentage - s.MinHealthyPercentage; d > 100 {
			return s, validationError("the difference between MaxHealthyPercentage (%d) and MinHealthyPercentage (%d) cannot be greater than 100, got %d",
				s.MaxHealthyPercentage, s.MinHealthyPercentage, d)
		}
	}
	if p.InstanceWarmup != nil {
		if *p.InstanceWarmup < 0 {
			return s, validationError("InstanceWarmup cannot be negative, got %s", *p.InstanceWarmup)
		}
		s.InstanceWarmup = *p.InstanceWarmup
	}
	if p.CheckpointDelay != nil && len(p.CheckpointPercentages) == 0 {
		return s, validationError("CheckpointDelay needs CheckpointPercentages")
	}
	if len(p.CheckpointPercentages) > 0 {
		s.CheckpointDelay = defaultCheckpointDelay
		if p.CheckpointDelay != nil {
			s.CheckpointDelay = *p.CheckpointDelay
		}
		if s.CheckpointDelay < 0 || s.CheckpointDelay > maxDelay {
			return s, validationError("CheckpointDelay must be between 0 and 172800 seconds, got %s", s.CheckpointDelay)
		}
	}
	for i, c := range p.CheckpointPercentages {
		// The console asks for 1-100 ("Proceed until ___ % of the group is
		// refreshed"); a 0 % checkpoint would be reached before anything
		// happened.
		if c < 1 || c > 100 {
			return s, validationError("CheckpointPercentages[%d] must be between 1 and 100, got %d", i, c)
		}
		if i > 0 && c <= p.CheckpointPercentages[i-1] {
			return s, validationError("CheckpointPercentages must be unique and in ascending order, got %v", p.CheckpointPercentages)
		}
	}
	if s.BakeTime < 0 || s.BakeTime > maxDelay {
		return s, validationError("BakeTime must be between 0 and 172800 seconds, got %s", s.BakeTime)
	}
	return s, nil
}

// Validate checks the preferences as StartInstanceRefresh does.
func (p Preferences) Validate() error {
	_, err := p.Resolve(0)
	return err
}

func validationError(format string, args ...any) error {
	return fmt.Errorf("ValidationError: "+format, args...)
}
