package asg

import (
	"fmt"
	"time"
)

// LifecycleHook is the group's termination lifecycle hook
// (autoscaling:EC2_INSTANCE_TERMINATING), used when Spec.TerminationHook is
// set (§C "Lifecycle hooks").
type LifecycleHook struct {
	// Name defaults to "<group>-nth".
	Name string
	// HeartbeatTimeout is 30-7200 s, default 3600 s (§C). The twin sends no
	// heartbeats (NTH's heartbeatInterval is off by default, §C), so the
	// hook's GlobalTimeout — min(48 h, 100 × HeartbeatTimeout) — never comes
	// first.
	HeartbeatTimeout time.Duration
	// DefaultResult is CONTINUE or ABANDON, default ABANDON (§C). For a
	// terminating hook both end in termination.
	DefaultResult string
}

// Lifecycle action results.
const (
	Continue = "CONTINUE"
	Abandon  = "ABANDON"
)

const defaultHeartbeatTimeout = 3600 * time.Second

func (h LifecycleHook) validate() error {
	if h.HeartbeatTimeout != 0 && (h.HeartbeatTimeout < 30*time.Second || h.HeartbeatTimeout > 7200*time.Second) {
		return fmt.Errorf("lifecycle hook HeartbeatTimeout must be between 30 and 7200 seconds, got %s", h.HeartbeatTimeout)
	}
	if h.DefaultResult != "" && h.DefaultResult != Continue && h.DefaultResult != Abandon {
		return fmt.Errorf("lifecycle hook DefaultResult must be CONTINUE or ABANDON, got %q", h.DefaultResult)
	}
	return nil
}

func (h LifecycleHook) withDefaults(group string) LifecycleHook {
	if h.Name == "" {
		h.Name = group + "-nth"
	}
	if h.HeartbeatTimeout == 0 {
		h.HeartbeatTimeout = defaultHeartbeatTimeout
	}
	if h.DefaultResult == "" {
		h.DefaultResult = Abandon
	}
	return h
}

// terminate takes an instance out of service and terminates it. With the
// termination hook it waits in Terminating:Wait until the Node Termination
// Handler completes the lifecycle action or the heartbeat times out;
// without it EC2 terminates the instance at once, and whatever still runs
// on the node dies with it (kube records Ready pods as killed).
func (g *group) terminate(in *instance, cause string) {
	if in.terminating() || in.state == Terminated {
		return
	}
	in.state, in.terminatingAt, in.reserved = Terminating, g.a.eng.Now(), false
	g.logInstance(EventTerminating, "", in, fmt.Sprintf("Terminating EC2 instance: %s (%s, %s). Cause: %s", in.id, in.lt, in.ami.ID, cause))
	g.observe()
	if !g.spec.TerminationHook {
		g.proceed(in, "no termination lifecycle hook")
		return
	}
	h := g.spec.Hook
	in.state = TerminatingWait
	g.logInstance(EventLifecycleWait, "", in, fmt.Sprintf("Instance %s is Terminating:Wait for lifecycle hook %s (heartbeat timeout %s, default result %s)", in.id, h.Name, h.HeartbeatTimeout, h.DefaultResult))
	in.hookTimer = g.a.eng.After(h.HeartbeatTimeout, func() { g.hookTimedOut(in) })
	// EventBridge delivers the lifecycle event to NTH's queue (§C
	// "Queue Processor mode"); the twin delivers it at once.
	g.nthHandle(in)
}

// completeLifecycleAction is CompleteLifecycleAction: the hook is done and
// the instance proceeds to termination. It fails, as the API does, when the
// instance no longer waits on the hook.
func (g *group) completeLifecycleAction(in *instance, result string) error {
	if in.state != TerminatingWait {
		return fmt.Errorf("ValidationError: No active Lifecycle Action found with instance ID %s", in.id)
	}
	in.hookTimer.Cancel()
	g.logInstance(EventLifecycleCompleted, "", in, fmt.Sprintf("CompleteLifecycleAction %s for instance %s (lifecycle hook %s)", result, in.id, g.spec.Hook.Name))
	g.proceed(in, "lifecycle action completed: "+result)
	return nil
}

// hookTimedOut applies the hook's DefaultResult: for a terminating hook
// CONTINUE and ABANDON both terminate the instance (§C).
func (g *group) hookTimedOut(in *instance) {
	if in.state != TerminatingWait {
		return
	}
	h := g.spec.Hook
	msg := fmt.Sprintf("Lifecycle hook %s timed out after %s for instance %s; DefaultResult %s: terminating", h.Name, h.HeartbeatTimeout, in.id, h.DefaultResult)
	g.fail(in.id, in.node, msg)
	g.logInstance(EventLifecycleTimeout, "Warning", in, msg)
	g.proceed(in, "lifecycle hook heartbeat timeout: "+h.DefaultResult)
}

// proceed is Terminating:Proceed: TerminateInstances through the worker
// pool. The kubelet stops at once; when EC2 reports the instance terminated
// the node is deleted and any pod still on it is killed.
func (g *group) proceed(in *instance, why string) {
	in.state = TerminatingProceed
	reason := fmt.Sprintf("EC2 instance %s terminated by Auto Scaling group %s (%s)", in.id, g.spec.Name, why)
	err := g.a.workers.Terminate(in.node, reason, func() {
		in.state = Terminated
		g.remove(in)
		g.stats.terminated++
		g.logInstance(EventTerminated, "", in, fmt.Sprintf("Instance %s terminated", in.id))
		g.observe()
		g.changed()
	})
	if err != nil {
		// The pool lost the instance: nothing left to terminate.
		in.state = Terminated
		g.remove(in)
		g.fail(in.id, in.node, err.Error())
		g.observe()
		g.changed()
	}
}
