package karpenter_test

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// TestEmptiness: a node whose last non-DaemonSet pod went away becomes
// consolidatable consolidateAfter later; the disruption poll (every 10 s)
// finds it and the command is re-validated 15 s later before the node is
// deleted — no replacement. consolidateAfter Never, or an Empty budget of
// 0, keep it (semantics.md §A.4 "Consolidation specifics", §A.1b).
func TestEmptiness(t *testing.T) {
	cases := []struct {
		name    string
		policy  karpv1.ConsolidationPolicy
		after   string
		budgets []karpv1.Budget // nil: the default "10%"
		daemon  bool            // a DaemonSet runs on every node
		// nodeDoNotDisrupt annotates the node that empties.
		nodeDoNotDisrupt bool
		// wantAfter is consolidateAfter; the command starts within
		// [last pod gone + wantAfter + 15s, + 10s more]. Negative: kept.
		wantAfter time.Duration
		wantBlock string
	}{
		{name: "WhenEmpty, 30s", policy: karpv1.ConsolidationPolicyWhenEmpty, after: "30s", wantAfter: 30 * time.Second},
		{name: "WhenEmptyOrUnderutilized, 30s", policy: karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized, after: "30s", wantAfter: 30 * time.Second},
		{name: "WhenEmpty, 5m", policy: karpv1.ConsolidationPolicyWhenEmpty, after: "5m", wantAfter: 5 * time.Minute},
		{name: "WhenEmpty, 30s, a DaemonSet pod stays: still empty", policy: karpv1.ConsolidationPolicyWhenEmpty, after: "30s", daemon: true, wantAfter: 30 * time.Second},
		{name: `WhenEmpty, 30s, budget "0" for Drifted only: Empty unbounded`, policy: karpv1.ConsolidationPolicyWhenEmpty, after: "30s",
			budgets: []karpv1.Budget{budget("0", karpv1.DisruptionReasonDrifted)}, wantAfter: 30 * time.Second},
		{name: "consolidateAfter Never: kept", policy: karpv1.ConsolidationPolicyWhenEmpty, after: karpv1.Never, wantAfter: -1},
		{name: "node annotated karpenter.sh/do-not-disrupt: kept", policy: karpv1.ConsolidationPolicyWhenEmpty, after: "30s", nodeDoNotDisrupt: true, wantAfter: -1},
		{name: `WhenEmpty, 30s, budget "0": kept`, policy: karpv1.ConsolidationPolicyWhenEmpty, after: "30s",
			budgets: []karpv1.Budget{budget("0")}, wantAfter: -1, wantBlock: "allow 0 Empty disruptions"},
		{name: `WhenEmpty, 30s, budget "0" for Empty: kept`, policy: karpv1.ConsolidationPolicyWhenEmpty, after: "30s",
			budgets: []karpv1.Budget{budget("0", karpv1.DisruptionReasonEmpty), budget("100%")}, wantAfter: -1, wantBlock: "allow 0 Empty disruptions"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t)
			opts := []poolOption{withConsolidation(tc.policy, tc.after)}
			if tc.budgets != nil {
				opts = append(opts, withBudgets(tc.budgets...))
			}
			tw.apply(nodeClass(amiID(ami130)), nodePool(opts...))
			tw.adopt(2, "c4.large", "spot", ami130, 4*time.Hour)
			tw.apply(deployment("a", 1, "1200m"), deployment("b", 1, "1200m"))
			if tc.daemon {
				tw.apply(daemonSet("agent", "50m"))
			}
			tw.Settle()
			nodeA := tw.PodsOf("a-")[0].Spec.NodeName
			nodeB := tw.PodsOf("b-")[0].Spec.NodeName
			if nodeA == nodeB || nodeA == "" {
				t.Fatalf("pods a and b on %q and %q, want two nodes", nodeA, nodeB)
			}
			claimA := tw.karp.NodeClaimForNode(nodeA).Name
			if tc.nodeDoNotDisrupt {
				if err := tw.Kube.UpdateNode(nodeA, func(n *corev1.Node) {
					n.Annotations = map[string]string{karpv1.DoNotDisruptAnnotationKey: "true"}
				}); err != nil {
					t.Fatal(err)
				}
			}

			// Both nodes are busy: nothing happens for 10 minutes.
			tw.runFor(10 * time.Minute)
			if n := len(tw.events("DisruptionStarted")); n != 0 {
				t.Fatalf("%d disruptions while both nodes run pods\n%s", n, tw.dumpLog())
			}
			if err := tw.Kube.Scale("Deployment", "default", "a", 0); err != nil {
				t.Fatal(err)
			}
			if !tw.runUntil(time.Minute, func() bool { return len(tw.podsOnNode(nodeA, "a-")) == 0 }) {
				t.Fatalf("pod a never left %s", nodeA)
			}
			gone := tw.Eng.Now()
			if tc.daemon && len(tw.podsOnNode(nodeA, "agent-")) != 1 {
				t.Fatalf("no agent pod on %s", nodeA)
			}

			if tc.wantAfter < 0 {
				tw.runFor(30 * time.Minute)
				if n := len(tw.events("DisruptionStarted")); n != 0 || tw.Kube.Node(nodeA) == nil {
					t.Errorf("empty node removed (%d commands), want it kept\n%s", n, tw.dumpLog())
				}
				if blocks := strings.Join(tw.karp.BudgetBlocks(), "\n"); !strings.Contains(blocks, tc.wantBlock) {
					t.Errorf("BudgetBlocks() = %q, want it to contain %q", blocks, tc.wantBlock)
				}
				return
			}
			if !tw.runUntil(tc.wantAfter+5*time.Minute, func() bool { return tw.Kube.Node(nodeA) == nil }) {
				t.Fatalf("empty node %s not removed\n%s", nodeA, tw.dumpLog())
			}
			start, _ := tw.firstEvent("DisruptionStarted", nil)
			earliest := gone.Add(tc.wantAfter + 15*time.Second)
			latest := earliest.Add(10 * time.Second)
			if start.At.Before(earliest) || start.At.After(latest) {
				t.Errorf("empty node disrupted %s after its last pod left, want %s to %s (consolidateAfter + 15s validation + up to 10s polling)",
					start.At.Sub(gone), earliest.Sub(gone), latest.Sub(gone))
			}
			if start.NodeClaim != claimA || start.Reason != "empty" || !strings.HasPrefix(start.Message, "disrupting nodeclaim(s) via delete, terminating 1 nodes (0 pods)") {
				t.Errorf("DisruptionStarted = %s %q reason %q, want %s via delete, reason empty", start.NodeClaim, start.Message, start.Reason, claimA)
			}
			if n := len(tw.events("NodeClaimCreated")); n != 0 {
				t.Errorf("%d NodeClaims created; an empty node needs no replacement", n)
			}
			if tw.Kube.Node(nodeB) == nil || len(tw.PodsOf("b-")) != 1 {
				t.Errorf("node %s or pod b gone; only the empty node should go", nodeB)
			}
			if len(tw.karp.NodeClaims()) != 1 {
				t.Errorf("NodeClaims = %d, want 1", len(tw.karp.NodeClaims()))
			}
			// Termination: no pod to drain, MinDrainTime 5s, then the
			// instance terminates (Terminate 30s) and the node goes.
			tainted, _ := tw.firstEvent("NodeTainted", nil)
			deleted, _ := tw.firstEvent("NodeDeleted", nil)
			if !tainted.At.Equal(start.At) || deleted.At.Sub(tainted.At) != 5*time.Second+testTimings.Terminate {
				t.Errorf("tainted at +%s, deleted %s later; want at the command (+%s) and 35s later",
					tainted.At.Sub(t0), deleted.At.Sub(tainted.At), start.At.Sub(t0))
			}
		})
	}
}

// podsOnNode lists the non-terminating pods with the prefix on a node.
func (tw *twin) podsOnNode(node, prefix string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range tw.Kube.PodsOnNode(node) {
		if strings.HasPrefix(p.Name, prefix) && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// daemonSet is a DaemonSet in namespace default whose pods request cpu.
func daemonSet(name, cpu string) *appsv1.DaemonSet {
	labels := map[string]string{"app": name}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec(cpu)},
		},
	}
}

// TestEmptinessValidation: an emptiness command is re-validated 15 s after
// it is computed; a pod that lands on the node meanwhile cancels it, and
// the node stays (semantics.md §A.4 commandValidationDelay: "the candidates
// are still valid").
func TestEmptinessValidation(t *testing.T) {
	cases := []struct {
		name string
		// podAt is when a pod pinned to the empty node arrives, after its
		// last pod left; 0: none.
		podAt       time.Duration
		wantRemoved bool
	}{
		// The last pod leaves at +10m5s; consolidateAfter ends at +10m35s;
		// the +10m40s poll picks the node; validation ends at +10m55s.
		{name: "no pod arrives: removed", podAt: 0, wantRemoved: true},
		{name: "a pod arrives during validation (+41s): kept", podAt: 41 * time.Second, wantRemoved: false},
		{name: "a pod arrives before consolidateAfter (+20s): kept", podAt: 20 * time.Second, wantRemoved: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t)
			tw.apply(nodeClass(amiID(ami130)), nodePool(withConsolidation(karpv1.ConsolidationPolicyWhenEmpty, "30s")))
			tw.adopt(2, "c4.large", "spot", ami130, 4*time.Hour)
			tw.apply(deployment("a", 1, "1200m"), deployment("b", 1, "1200m"))
			tw.Settle()
			nodeA := tw.PodsOf("a-")[0].Spec.NodeName
			tw.runFor(10 * time.Minute)
			if err := tw.Kube.Scale("Deployment", "default", "a", 0); err != nil {
				t.Fatal(err)
			}
			tw.runFor(5 * time.Second)
			if got := tw.Kube.LastPodEvent(nodeA); !got.Equal(t0.Add(10*time.Minute + 5*time.Second)) {
				t.Fatalf("last pod left %s at +%s, want +10m5s", nodeA, got.Sub(t0))
			}
			if tc.podAt > 0 {
				p := pod("late", "100m", withNodeSelector(corev1.LabelHostname, nodeA))
				tw.Eng.At(t0.Add(10*time.Minute+5*time.Second+tc.podAt), func() { tw.apply(p) })
			}
			tw.runFor(30 * time.Minute)
			removed := tw.Kube.Node(nodeA) == nil
			if removed != tc.wantRemoved {
				t.Fatalf("node removed = %v, want %v\n%s", removed, tc.wantRemoved, tw.dumpLog())
			}
			if tc.wantRemoved {
				start, _ := tw.firstEvent("DisruptionStarted", nil)
				if !start.At.Equal(t0.Add(10*time.Minute + 55*time.Second)) {
					t.Errorf("command started at +%s, want +10m55s", start.At.Sub(t0))
				}
				return
			}
			if n := len(tw.events("DisruptionStarted")); n != 0 {
				t.Errorf("%d commands started, want 0", n)
			}
			if p := tw.Kube.Pod("default", "late"); p == nil || p.Spec.NodeName != nodeA {
				t.Errorf("pod late not running on %s", nodeA)
			}
		})
	}
}
