// Package executor carries out an upgrade plan (internal/plan): for each hop
// the pre-checks (precheck.go), the control plane (controlplane.go), the
// add-ons (addons.go), then every node group by its strategy (nodegroup.go:
// managed in place or blue/green, instance refresh, Karpenter drift,
// Fargate restart, each in a file of its own), with the gates between
// steps. It drives the cluster through ports only — the Kubernetes API
// (internal/kubeport) and the subsets of aws-sdk-go-v2's EKS, Auto Scaling
// and EC2 clients it declares here (internal/awsport implements them) — so
// the same executor rehearses an upgrade on the twin's ports (ladder
// rehearse) and will run it on a real cluster's.
//
// It waits the way a client of a real cluster does: for a named state of
// the cluster (a kubeport.Gate: "pods settled", "rollouts done"), never for
// a callback. What it does it tells an Observer — the hop and step it is in,
// and the upgrade's own timeline lines (HopStarted, ControlPlaneUpdating, …)
// — which builds the report; what the cluster's controllers log is the
// observer's business, not the executor's.
package executor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/plan"
	"github.com/ladder-eks/ladder/internal/rules/controlplane"
)

// Ports are the APIs the executor drives.
type Ports struct {
	Kube kubeport.Port
	EKS  EKS
	// AutoScaling and LaunchTemplates carry out self-managed node
	// groups' instance refreshes (refresh.go).
	AutoScaling AutoScalingAPI
	// LaunchTemplates are EC2's launch templates: a custom-AMI managed
	// node group's new AMI goes into a new version of its template.
	LaunchTemplates LaunchTemplateAPI
	// Parameters and Images find that AMI (ami.go): SSM's recommended
	// EKS-optimized AMI for the hop, and what an image is. Without them
	// the embedded catalog answers.
	Parameters ParameterAPI
	Images     ImageAPI
}

// EKS is the part of the EKS API (awsport.EKS) the executor calls so far.
type EKS interface {
	ClusterAPI
	AddonAPI
	NodegroupAPI
	PreCheckAPI
}

// Observer hears what the executor does, in order.
type Observer interface {
	// HopStarted opens a hop; StepStarted and StepEnded bracket each of
	// its steps. err is the step's error: nil when it succeeded, one
	// satisfying IsTimeLimit when it was still waiting at the deadline.
	HopStarted(h plan.Hop)
	StepStarted(h plan.Hop, st plan.Step)
	StepEnded(st plan.Step, err error)
	// AddonVersion says which version an add-on's step left it at, and
	// why it stayed when it did.
	AddonVersion(name, version, note string)
	// Event is one line of the upgrade's timeline: type Normal or
	// Warning, reason as in a Kubernetes Event ("HopStarted").
	Event(eventType, reason, message string)
}

// ErrTimeLimit is a step still waiting when the deadline passed: the
// upgrade is stuck, not failed.
var ErrTimeLimit = errors.New("time limit")

// IsTimeLimit reports whether err means the deadline passed.
func IsTimeLimit(err error) bool {
	return errors.Is(err, ErrTimeLimit) || errors.Is(err, kubeport.ErrWaitTimeout)
}

// Executor carries out plans.
type Executor struct {
	// Cluster is the EKS cluster's name.
	Cluster  string
	Ports    Ports
	Observer Observer
	// Groups configure the node groups' strategies, by the plan's group
	// name (nodegroup.go); a group not in it gets the zero Group.
	Groups map[string]Group
	// AMIs identifies the AMIs nodes run.
	AMIs AMIs
	// Precondition is the node precondition the pre-checks hold a hop to
	// (controlplane.Strict unless the user relaxes it).
	Precondition controlplane.Precondition
	// Deadline, on the Kubernetes port's clock, ends every wait: a step
	// still waiting then returns ErrTimeLimit.
	Deadline time.Time
	// Journal, when set, makes a run resumable (journal.go).
	Journal Journal
	// Healthy, when set, is asked before every step: an error — the
	// availability probe failing — stops the run before it disrupts more.
	Healthy func(context.Context) error
	// Window, when set, holds every step but the pre-checks until the
	// maintenance window is open (a step started inside it runs to its
	// end: EKS does not pause an update).
	Window Window

	// stepKey is the journal key of the step being carried out.
	stepKey string
}

// Run carries out p, hop by hop and step by step, and stops at the first
// step that does not succeed, returning its error.
func (e *Executor) Run(ctx context.Context, p plan.Plan) error {
	for _, h := range p.Hops {
		e.Observer.HopStarted(h)
		e.Observer.Event("Normal", "HopStarted", fmt.Sprintf("upgrading %s → %s", h.From, h.To))
		if err := e.recordOutdated(ctx, h); err != nil {
			return err
		}
		for _, st := range h.Steps {
			if e.done(StepKey(h, st)) {
				e.Observer.Event("Normal", "StepSkipped", fmt.Sprintf("%s: done in an earlier run (journal)", StepKey(h, st)))
				continue
			}
			if err := e.waitForWindow(ctx, h, st); err != nil {
				return err
			}
			if e.Healthy != nil {
				if err := e.Healthy(ctx); err != nil {
					e.Observer.Event("Warning", "Unhealthy", fmt.Sprintf("%s not started: %v", StepKey(h, st), err))
					return fmt.Errorf("before %s: %w", StepKey(h, st), err)
				}
			}
			e.Observer.StepStarted(h, st)
			_, err := e.runStep(ctx, h, st)
			e.Observer.StepEnded(st, err)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *Executor) step(ctx context.Context, h plan.Hop, st plan.Step) error {
	switch st.Kind {
	case plan.PreChecks:
		return e.PreChecks(ctx, h.To)
	case plan.ControlPlane:
		return e.UpgradeControlPlane(ctx, h.To)
	case plan.AddonUpdate:
		return e.UpdateAddon(ctx, st)
	case plan.NodeGroup:
		if err := e.NodeGroup(ctx, st, h.To); err != nil {
			return err
		}
		// The group is done when its pods have a home again: every pod
		// bound and Ready, none terminating.
		return e.WaitFor(ctx, kubeport.PodsSettled{})
	}
	return fmt.Errorf("unknown step %s", st.Kind)
}

// Window is a maintenance window (internal/rules/window).
type Window interface {
	Open(t time.Time) bool
	NextOpen(t time.Time) time.Time
	String() string
}

// waitForWindow holds a step that disrupts — every one but the pre-checks
// — until the maintenance window is open.
func (e *Executor) waitForWindow(ctx context.Context, h plan.Hop, st plan.Step) error {
	now := e.Ports.Kube.Now()
	if e.Window == nil || st.Kind == plan.PreChecks || e.Window.Open(now) {
		return nil
	}
	e.Observer.Event("Normal", "WindowClosed", fmt.Sprintf("%s waits for the maintenance window %q, open at %s",
		StepKey(h, st), e.Window.String(), e.Window.NextOpen(now).UTC().Format(time.RFC3339)))
	// The port's own Wait, not a gate: nothing in the cluster opens a
	// window, the clock does (the twin's Wait moves its clock on).
	k := e.Ports.Kube
	err := k.Wait(ctx, e.Deadline.Sub(now), func(context.Context) (bool, error) { return e.Window.Open(k.Now()), nil })
	if errors.Is(err, kubeport.ErrWaitTimeout) {
		return ErrTimeLimit
	}
	return err
}

// WaitFor waits for a gate until the deadline; a gate that does not hold
// by then is ErrTimeLimit.
func (e *Executor) WaitFor(ctx context.Context, g kubeport.Gate) error {
	k := e.Ports.Kube
	err := kubeport.WaitFor(ctx, k, e.Deadline.Sub(k.Now()), g)
	if errors.Is(err, kubeport.ErrWaitTimeout) {
		return ErrTimeLimit
	}
	return err
}
