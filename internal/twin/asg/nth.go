package asg

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/drain"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// NodeTerminationHandler is the AWS Node Termination Handler in Queue
// Processor mode (§C): it receives the group's termination lifecycle events,
// cordons and drains the node, then completes the lifecycle action with
// CONTINUE. Its drain is kubectl's (pkg/node/node.go): Force,
// IgnoreAllDaemonSets, DeleteEmptyDirData, through the Eviction API (PDBs
// respected), pods getting their own terminationGracePeriodSeconds
// (--pod-termination-grace-period=-1, NTH's default and the only value the
// twin's drain supports), all within NodeTerminationGracePeriod.
type NodeTerminationHandler struct {
	// NodeTerminationGracePeriod is the drain's timeout
	// (--node-termination-grace-period), default 120 s.
	NodeTerminationGracePeriod time.Duration
	// TaintNode is --taint-node: taint the node
	// aws-node-termination-handler/asg-lifecycle-termination before the
	// drain. NTH's default is false (pkg/config/config.go).
	TaintNode bool
	// CompleteLifecycleActionDelay is
	// --complete-lifecycle-action-delay-seconds, default none.
	CompleteLifecycleActionDelay time.Duration
}

// NTH's constants.
const (
	// ASGLifecycleTaint is the taint NTH puts on a node for an ASG
	// termination lifecycle event (§C "Node taints"), with NTH's default
	// --taint-effect NoSchedule.
	ASGLifecycleTaint = "aws-node-termination-handler/asg-lifecycle-termination"

	defaultNodeTerminationGracePeriod = 120 * time.Second
	// sqsVisibilityTimeout is how long NTH's ReceiveMessage hides a message
	// (pkg/monitor/sqsevent/sqs-monitor.go: VisibilityTimeout 20 s).
	sqsVisibilityTimeout = 20 * time.Second
)

func (n NodeTerminationHandler) withDefaults() NodeTerminationHandler {
	if n.NodeTerminationGracePeriod == 0 {
		n.NodeTerminationGracePeriod = defaultNodeTerminationGracePeriod
	}
	return n
}

// nthHandle is NTH's drain-cordon handler for an instance in
// Terminating:Wait (pkg/interruptionevent/draincordon/handler.go): taint if
// asked, cordon and drain, then the post-drain task completes the lifecycle
// action (pkg/monitor/sqsevent/asg-lifecycle-event.go).
//
// When the drain fails — typically its 120 s timeout, with a PDB that keeps
// answering 429 — the handler cancels the event and skips the post-drain
// task: the lifecycle action stays open and the SQS message is not deleted.
// The message becomes visible again and NTH drains again; the twin retries
// sqsVisibilityTimeout after the failure. So NTH never gives up and
// terminates: the instance leaves when a drain succeeds or when the hook's
// HeartbeatTimeout applies the DefaultResult, killing what still runs.
func (g *group) nthHandle(in *instance) {
	if in.state != TerminatingWait {
		return
	}
	nth := g.spec.NTH
	in.drains++
	if g.a.kube.Node(in.node) == nil {
		// NTH finds no node (it never registered): the drain fails with
		// NotFound and, with NTH's default
		// --delete-sqs-msg-if-node-not-found=false, the action stays open.
		g.nthFailed(in, fmt.Errorf("nodes %q not found", in.node))
		return
	}
	if nth.TaintNode {
		_ = g.a.kube.AddTaint(in.node, corev1.Taint{Key: ASGLifecycleTaint, Effect: corev1.TaintEffectNoSchedule})
		g.log(Event{Code: EventNTHTainted, Source: SourceNTH, Instance: in.id, Node: in.node,
			Message: fmt.Sprintf("tainted node %s %s:NoSchedule", in.node, ASGLifecycleTaint)})
	}
	opts := kube.DrainOptions{
		Options: drain.Options{Force: true, IgnoreAllDaemonSets: true, DeleteEmptyDirData: true},
		Timeout: nth.NodeTerminationGracePeriod,
	}
	err := g.a.kube.Drain(in.node, opts, func(err error) {
		if err != nil {
			g.nthFailed(in, err)
			return
		}
		g.nthDrained(in)
	})
	if err != nil {
		g.nthFailed(in, err)
	}
}

func (g *group) nthDrained(in *instance) {
	if in.state != TerminatingWait {
		return // the hook timed out meanwhile
	}
	g.log(Event{Code: EventNTHDrained, Source: SourceNTH, Instance: in.id, Node: in.node,
		Message: "cordoned and drained node " + in.node})
	complete := func() { _ = g.completeLifecycleAction(in, Continue) }
	if d := g.spec.NTH.CompleteLifecycleActionDelay; d > 0 {
		g.a.eng.After(d, complete)
		return
	}
	complete()
}

func (g *group) nthFailed(in *instance, err error) {
	if in.state != TerminatingWait {
		return
	}
	msg := fmt.Sprintf("There was a problem while trying to cordon and drain the node: %v (attempt %d; NTH retries when the SQS message is visible again)", err, in.drains)
	g.fail(in.id, in.node, msg)
	g.log(Event{Type: "Warning", Code: EventNTHDrainFailed, Source: SourceNTH, Instance: in.id, Node: in.node, Message: msg})
	g.a.eng.After(sqsVisibilityTimeout, func() { g.nthHandle(in) })
}
