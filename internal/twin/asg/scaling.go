package asg

import (
	"fmt"
	"time"
)

// SetDesiredCapacity is SetDesiredCapacity: the group's desired capacity
// becomes desired, within its minimum and maximum, and the group launches
// or terminates instances until it runs that many (aws-apis.md §3;
// semantics.md §C: instances "in response to a difference between desired
// and actual capacity"). Scale-in picks its victims by the default
// termination policy (pickVictim). The new instances run the group's launch
// template and count as warmed up after the group's default warm-up.
func (a *ASG) SetDesiredCapacity(name string, desired int) error {
	g, err := a.group(name)
	if err != nil {
		return err
	}
	if desired > g.spec.Max {
		return fmt.Errorf("ValidationError: New SetDesiredCapacity value %d is above max value %d for the AutoScalingGroup.", desired, g.spec.Max)
	}
	if desired < g.spec.Min {
		return fmt.Errorf("ValidationError: New SetDesiredCapacity value %d is below min value %d for the AutoScalingGroup.", desired, g.spec.Min)
	}
	from := g.spec.Desired
	g.spec.Desired = desired
	cause := fmt.Sprintf("a user request explicitly set group desired capacity changing the desired capacity from %d to %d", from, desired)
	staying := g.staying()
	for n := len(staying); n < desired; n++ {
		if _, err := g.launch(cause, g.warmup(), g.changed); err != nil {
			return nil // the launch failure is in the group's activity and failures
		}
	}
	for n := len(staying); n > desired; n-- {
		victim := g.pickVictim(staying)
		staying = without(staying, victim)
		g.terminate(victim, cause)
	}
	return nil
}

// TerminateInstance is TerminateInstanceInAutoScalingGroup: the instance
// leaves its group through the group's termination path (its lifecycle
// hook, if any). With decrement the desired capacity goes down by one and
// nothing replaces it; without, the group launches a replacement. It
// returns the group and the activity's cause. An instance of no group, or
// already terminating, is a ValidationError, as is a decrement below the
// group's minimum.
func (a *ASG) TerminateInstance(instanceID string, decrement bool) (groupName, cause string, err error) {
	var g *group
	var in *instance
	for _, name := range a.order {
		for _, x := range a.groups[name].instances {
			if x.id == instanceID && !x.terminating() {
				g, in = a.groups[name], x
			}
		}
	}
	if in == nil {
		return "", "", fmt.Errorf("ValidationError: Instance Id not found - No managed instance found for instance ID: %s", instanceID)
	}
	if decrement && g.spec.Desired-1 < g.spec.Min {
		return "", "", fmt.Errorf("ValidationError: Currently, desiredCapacity is %d and minSize is %d. Terminating instance without replacement will violate group's min size constraint. Either set shouldDecrementDesiredCapacity flag to false or lower group's min size.", g.spec.Desired, g.spec.Min)
	}
	cause = "an instance was taken out of service in response to a user request"
	if decrement {
		g.spec.Desired--
		cause += fmt.Sprintf(", shrinking the capacity from %d to %d", g.spec.Desired+1, g.spec.Desired)
	}
	g.terminate(in, cause)
	if !decrement {
		_, _ = g.launch("an instance was started in response to a difference between desired and actual capacity", g.warmup(), g.changed)
	}
	return g.spec.Name, cause, nil
}

// staying lists the instances that count toward the desired capacity: not
// terminating.
func (g *group) staying() []*instance {
	var out []*instance
	for _, in := range g.instances {
		if !in.terminating() && in.state != Terminated {
			out = append(out, in)
		}
	}
	return out
}

// warmup is the group's instance warm-up: DefaultInstanceWarmup if set,
// else HealthCheckGracePeriod (semantics.md §C InstanceWarmup).
func (g *group) warmup() time.Duration {
	if g.spec.DefaultInstanceWarmup != nil {
		return *g.spec.DefaultInstanceWarmup
	}
	return *g.spec.HealthCheckGracePeriod
}

// Now is the twin's clock: when an activity starts.
func (a *ASG) Now() time.Time { return a.eng.Now() }
