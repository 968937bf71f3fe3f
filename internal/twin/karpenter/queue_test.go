package karpenter_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/twin/karpenter"
)

// TestQueueTimesOut: a replace command whose replacement is not initialized
// within retryDuration (clamp(80ms × commands, 10m, 1h) = 10 min here) fails
// as unrecoverable: the candidate's karpenter.sh/disrupted taint is removed
// and it becomes schedulable again, its pods untouched (semantics.md §A.4
// orchestration step 7).
func TestQueueTimesOut(t *testing.T) {
	cases := []struct {
		name     string
		register time.Duration
		wantFail bool
	}{
		{name: "replacement registers after 9m: initialized at +9m22s, in time", register: 9 * time.Minute, wantFail: false},
		{name: "replacement registers after 15m: command fails at +10m10s", register: 15 * time.Minute, wantFail: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			timings := testTimings
			timings.Register = tc.register
			tw := newTwin(t, withTimings(timings))
			tw.apply(nodeClass(amiID(ami130)), nodePool())
			old := tw.adopt(1, "c4.large", "spot", ami130, 4*time.Hour)[0]
			tw.apply(deployment("web", 1, "1200m"))
			tw.Settle()
			webPod := tw.PodsOf("web-")[0]
			// The state right when the command fails (the next disruption
			// loop, at the same instant, may pick the node again).
			var atFailure struct {
				seen, tainted, claimGone, podMoved bool
				terminations                       int
			}
			tw.watch(func(l logLine) {
				if l.Code != "DisruptionFailed" || atFailure.seen {
					return
				}
				atFailure.seen = true
				atFailure.tainted = hasTaint(tw.Kube.Node(old.Node), karpenter.DisruptedTaintKey)
				atFailure.claimGone = tw.claimNamed(old.Name) == nil || tw.Kube.Node(old.Node) == nil
				p := tw.Kube.Pod(webPod.Namespace, webPod.Name)
				atFailure.podMoved = p == nil || p.DeletionTimestamp != nil || p.Spec.NodeName != old.Node
				atFailure.terminations = len(tw.events("NodeTainted"))
			})
			tw.apply(nodeClass(amiID(ami131)))
			tw.runFor(10*time.Minute + 10*time.Second)

			failed := tw.events("DisruptionFailed")
			if !tc.wantFail {
				if len(failed) != 0 {
					t.Errorf("command failed: %v\n%s", failed, tw.dumpLog())
				}
				if tw.claimNamed(old.Name) != nil && !tw.runUntil(time.Hour, tw.upgraded) {
					t.Errorf("node not replaced\n%s", tw.dumpLog())
				}
				return
			}
			if len(failed) != 1 {
				t.Fatalf("DisruptionFailed events = %d, want 1\n%s", len(failed), tw.dumpLog())
			}
			if !failed[0].At.Equal(t0.Add(10*time.Minute+10*time.Second)) || failed[0].NodeClaim != old.Name || !strings.Contains(failed[0].Message, "10m") {
				t.Errorf("DisruptionFailed = %s at +%s %q, want %s at +10m10s naming the 10m deadline", failed[0].NodeClaim, failed[0].At.Sub(t0), failed[0].Message, old.Name)
			}
			if atFailure.tainted {
				t.Errorf("the old node still carries %s when the command fails", karpenter.DisruptedTaintKey)
			}
			if atFailure.claimGone || atFailure.podMoved || atFailure.terminations != 0 {
				t.Errorf("at the failure: old NodeClaim gone %v, web pod moved %v, terminations %d; want the node untouched",
					atFailure.claimGone, atFailure.podMoved, atFailure.terminations)
			}
		})
	}
}

// TestQueueFailsWhenReplacementIsLost: when a replacement NodeClaim
// disappears (here its launch fails: between CreateFleet's request and its
// answer the EC2NodeClass switches to an arm64-only AMI, while the NodePool
// only allows amd64), the command fails at its next
// reconcile — not at the 10-minute deadline — and the candidate is
// untainted (semantics.md §A.4 orchestration step 7: "or a replacement
// NodeClaim disappears").
func TestQueueFailsWhenReplacementIsLost(t *testing.T) {
	tw := newTwin(t)
	amd64 := req(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "amd64")
	spot := req("karpenter.sh/capacity-type", corev1.NodeSelectorOpIn, "spot")
	tw.apply(nodeClass(amiID(ami130)), nodePool(withRequirements(amd64, spot), withLabels("team", "checkout")))
	old := tw.adopt(1, "c4.large", "spot", ami130, 4*time.Hour)[0]
	tw.apply(deployment("web", 1, "1200m"))
	tw.Settle()
	// A template label change drifts the node (NodePoolDrifted).
	tw.apply(nodePool(withRequirements(amd64, spot), withLabels("team", "payments")))
	if !tw.runUntil(time.Minute, func() bool { return len(tw.events("NodeClaimCreated")) > 0 }) {
		t.Fatalf("no replacement created\n%s", tw.dumpLog())
	}
	tw.apply(nodeClass(amiID(ami130ARM)))
	tw.runFor(2 * time.Minute)

	lost, ok := tw.firstEvent("LaunchFailed", nil)
	if !ok {
		t.Fatalf("replacement launched, want LaunchFailed\n%s", tw.dumpLog())
	}
	failed, ok := tw.firstEvent("DisruptionFailed", func(l logLine) bool { return l.NodeClaim == old.Name })
	if !ok || failed.At.Sub(lost.At) > time.Minute {
		t.Errorf("DisruptionFailed %v (+%s), want within 1m of the LaunchFailed at +%s\n%s", ok, failed.At.Sub(t0), lost.At.Sub(t0), tw.dumpLog())
	}
	if !strings.Contains(failed.Message, "lost") {
		t.Errorf("DisruptionFailed = %q, want it to say the replacement was lost", failed.Message)
	}
}
