package instancerefresh

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
