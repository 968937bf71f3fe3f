package asg

import "fmt"

// The lifecycle-hook API calls (semantics.md §C, aws-apis.md §3.4) on a
// group: its terminating hook, which the group's Node Termination Handler
// consumes, and CompleteLifecycleAction for a caller that takes over from
// it.

// LifecycleHook returns the group's terminating lifecycle hook, with its
// defaults, and whether it has one.
func (a *ASG) LifecycleHook(name string) (LifecycleHook, bool, error) {
	g, err := a.group(name)
	if err != nil {
		return LifecycleHook{}, false, err
	}
	if !g.spec.TerminationHook {
		return LifecycleHook{}, false, nil
	}
	return g.spec.Hook, true, nil
}

// PutLifecycleHook creates or replaces the group's terminating lifecycle
// hook (autoscaling:EC2_INSTANCE_TERMINATING): instances terminated from
// now on wait in Terminating:Wait for it. Instances already waiting keep
// the hook they waited on.
func (a *ASG) PutLifecycleHook(name string, h LifecycleHook) error {
	g, err := a.group(name)
	if err != nil {
		return err
	}
	if err := h.validate(); err != nil {
		return fmt.Errorf("ValidationError: %v", err)
	}
	g.spec.TerminationHook = true
	g.spec.Hook = h.withDefaults(name)
	return nil
}

// CompleteLifecycleAction is CompleteLifecycleAction by instance id: the
// instance leaves Terminating:Wait and terminates. It fails as the API
// does, with ValidationError, when the instance waits on no hook of that
// name.
func (a *ASG) CompleteLifecycleAction(name, hook, instanceID, result string) error {
	g, err := a.group(name)
	if err != nil {
		return err
	}
	if result != Continue && result != Abandon {
		return fmt.Errorf("ValidationError: LifecycleActionResult must be CONTINUE or ABANDON, got %q", result)
	}
	for _, in := range g.instances {
		if in.id == instanceID && g.spec.TerminationHook && g.spec.Hook.Name == hook {
			return g.completeLifecycleAction(in, result)
		}
	}
	return fmt.Errorf("ValidationError: No active Lifecycle Action found with instance ID %s", instanceID)
}
