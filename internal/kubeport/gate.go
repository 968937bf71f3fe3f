package kubeport

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubectl/pkg/util/podutils"
)

// A Gate is a state of the cluster that an upgrade waits for between two
// steps, named rather than written as a Condition, as kubectl wait's
// --for=condition=… is: "every pod has a home again", "these rollouts are
// done". Naming it lets each implementation of the port evaluate it its own
// way. A real cluster lists what the gate names and checks it (Condition);
// the twin answers from its own bookkeeping after each of its events,
// which costs nothing per event and times the end of a step to the event
// that ended it, as a watch would on a real cluster.
type Gate interface {
	// Condition is the gate read through any port: what a client of a
	// real cluster polls.
	Condition(p Port) Condition
	// String names the gate in errors ("pods settled").
	String() string
}

// GateWaiter is a port that evaluates gates itself (the twin). WaitFor
// uses it when the port offers it, and polls the gate's Condition with
// Wait otherwise.
type GateWaiter interface {
	// WaitGate is Wait for a gate: nil once it holds, an error wrapping
	// ErrWaitTimeout once timeout has passed on the port's clock, or when
	// nothing can change any more.
	WaitGate(ctx context.Context, timeout time.Duration, g Gate) error
}

// WaitFor waits until gate g holds on port p, or timeout.
func WaitFor(ctx context.Context, p Port, timeout time.Duration, g Gate) error {
	if w, ok := p.(GateWaiter); ok {
		return w.WaitGate(ctx, timeout, g)
	}
	if err := p.Wait(ctx, timeout, g.Condition(p)); err != nil {
		return fmt.Errorf("waiting for %s: %w", g, err)
	}
	return nil
}

// PodsSettled holds when every pod has a home: each one not finished is
// bound to a node and Ready, and none is terminating. It is the gate after
// a node group's step — the group's nodes are replaced, and the pods that
// moved off them run again.
type PodsSettled struct{}

func (PodsSettled) String() string { return "pods settled" }

// Condition lists every pod; a pod that finished (Succeeded, Failed) needs
// no home.
func (PodsSettled) Condition(p Port) Condition {
	return func(ctx context.Context) (bool, error) {
		pods, err := p.ListPods(ctx, PodQuery{})
		if err != nil {
			return false, err
		}
		for i := range pods {
			if !podSettled(&pods[i]) {
				return false, nil
			}
		}
		return true, nil
	}
}

func podSettled(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return true
	}
	return pod.DeletionTimestamp == nil && pod.Spec.NodeName != "" && podutils.IsPodReady(pod)
}

// Until is a gate read by a condition of its own that costs little — one
// Describe call, one object's status, never a list of every pod — such as
// "the control-plane update is no longer InProgress". A real cluster's
// client polls it like any Condition; the twin reads it after each of its
// events, as it reads its own gates, so a step ends at the event that ended
// it.
type Until struct {
	// What names the state in errors ("control-plane update 3 done").
	What  string
	Holds Condition
}

func (u Until) String() string { return u.What }

// Condition is the gate's own condition.
func (u Until) Condition(Port) Condition { return u.Holds }

// AllOf holds when each of its gates holds. They are read in order, and a
// gate is read only while those before it hold, so put the cheap ones
// first.
type AllOf []Gate

func (g AllOf) String() string {
	names := make([]string, len(g))
	for i, x := range g {
		names[i] = x.String()
	}
	return strings.Join(names, ", ")
}

// Condition reads each gate's condition in order.
func (g AllOf) Condition(p Port) Condition {
	conds := make([]Condition, len(g))
	for i, x := range g {
		conds[i] = x.Condition(p)
	}
	return func(ctx context.Context) (bool, error) {
		for _, c := range conds {
			if done, err := c(ctx); err != nil || !done {
				return false, err
			}
		}
		return true, nil
	}
}

// Polled is a gate read at most once per Every of the port's clock, first
// at once: what a client polling the API sees, for a gate whose reading
// costs (kubectl rollout status walks a DaemonSet's pods) or whose every
// reading someone measures. A real cluster is polled anyway (Wait).
type Polled struct {
	Every time.Duration
	Gate  Gate
	// Ticks has the twin read the gate at the end of each period even
	// when nothing happens in between, as a polling client does: the
	// state the last event left is seen a period later at most, not at
	// the next event, however far that is.
	Ticks bool
}

func (g Polled) String() string { return g.Gate.String() }

// Condition is the polled gate's condition.
func (g Polled) Condition(p Port) Condition { return g.Gate.Condition(p) }
