package asg

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

// resolve validates the preferences as StartInstanceRefresh does and fills
// in the defaults. groupWarmup is the group's DefaultInstanceWarmup or, if
// unset, its HealthCheckGracePeriod.
func (p Preferences) resolve(groupWarmup time.Duration) (Settings, error) {
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
	_, err := p.resolve(0)
	return err
}

func validationError(format string, args ...any) error {
	return fmt.Errorf("ValidationError: "+format, args...)
}

// Capacity is what the healthy percentages allow a group of Desired
// instances during a refresh (§C, F.1, F.10): at least MinHealthy
// instances in service and healthy, at most MaxTotal in service, healthy or
// pending.
type Capacity struct {
	Desired int
	// MinHealthy is ceil(Desired × MinHealthyPercentage / 100): the
	// reference says the percentage is "rounded up to the nearest integer".
	MinHealthy int
	// MaxTotal is ceil(Desired × MaxHealthyPercentage / 100). The reference
	// is silent on this rounding; rounding up is what makes the console's
	// "Launch before terminating" (Min 100, Max 110) launch first in a group
	// of fewer than ten instances, as the instance maintenance policy page
	// says it does ("A new instance must be provisioned first before an
	// existing instance can be terminated").
	MaxTotal int
}

// NewCapacity is the Capacity of desired instances under the percentages.
func NewCapacity(desired, minHealthyPercentage, maxHealthyPercentage int) Capacity {
	return Capacity{
		Desired:    desired,
		MinHealthy: ceilDiv(desired*minHealthyPercentage, 100),
		MaxTotal:   ceilDiv(desired*maxHealthyPercentage, 100),
	}
}

// Set is one set of replacements: TerminateFirst old instances leave
// service at once while their replacements launch ("Terminate and launch");
// LaunchFirst replacements launch above the desired capacity, and the old
// instance each one replaces is terminated when it is InService and warmed
// up ("Launch before terminating"). Both are §C's instance maintenance
// policy choices.
type Set struct {
	TerminateFirst int
	LaunchFirst    int
}

// Size is the number of instances the set replaces.
func (s Set) Size() int { return s.TerminateFirst + s.LaunchFirst }

// NextSet is the next set of replacements when inService instances are in
// service and healthy and remaining still need replacing (at most; a
// checkpoint can lower it). Out-of-service headroom (inService above
// MinHealthy) is used first, then launch headroom (MaxTotal above
// inService), so a set replaces as many instances as the range allows (§C:
// "A larger range increases the number of instances that can be replaced at
// the same time"): for 10 instances, Min 90/Max 100 replaces 1 at a time,
// Min 50 5, Min 90/Max 110 2 (one terminated at once, one after its
// replacement is warm), Min 100/Max 200 all 10, launched first. When the
// range leaves no headroom at all (Min 100/Max 100, or a group so small that
// MinHealthy rounds up to all of it) one instance is terminated first
// anyway: §C "100 percent limits the rate of replacement to one instance at
// a time".
func (c Capacity) NextSet(inService, remaining int) Set {
	if remaining <= 0 {
		return Set{}
	}
	down := max(0, inService-c.MinHealthy)
	up := max(0, c.MaxTotal-inService)
	s := Set{TerminateFirst: min(down, remaining)}
	s.LaunchFirst = min(up, remaining-s.TerminateFirst)
	if s.Size() == 0 {
		s.TerminateFirst = 1
	}
	return s
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
