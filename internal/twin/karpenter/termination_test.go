package karpenter_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/twin/karpenter"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// TestTerminationGracePeriodForcesDrain: with spec.template.spec.
// terminationGracePeriod, drift (the eventual class) disrupts a node even
// though a PDB blocks its pod; the blocked eviction is retried until
// T = deletion + TGP − pod terminationGracePeriodSeconds, when the pod is
// deleted without the Eviction API — a PDB violation (semantics.md §A.4
// "terminationGracePeriod forcing", §A.1 terminationGracePeriod).
func TestTerminationGracePeriodForcesDrain(t *testing.T) {
	cases := []struct {
		name     string
		tgp      time.Duration
		podGrace int64
		// wantForce is the force-deletion time after the node's deletion;
		// the termination reconcile runs every second, so up to 1 s later.
		wantForce time.Duration
		// wantBlocked: the eviction was refused first (429), so BlockedPods
		// records the pod, then outcome "forced".
		wantBlocked bool
	}{
		{name: "TGP 10m, pod grace 60s: forced at +9m", tgp: 10 * time.Minute, podGrace: 60, wantForce: 9 * time.Minute, wantBlocked: true},
		{name: "TGP 10m, pod grace 30s: forced at +9m30s", tgp: 10 * time.Minute, podGrace: 30, wantForce: 9*time.Minute + 30*time.Second, wantBlocked: true},
		{name: "TGP 1h, pod grace 300s: forced at +55m (docs example)", tgp: time.Hour, podGrace: 300, wantForce: 55 * time.Minute, wantBlocked: true},
		{name: "TGP 10m, pod grace 900s > TGP: forced when the drain starts", tgp: 10 * time.Minute, podGrace: 900, wantForce: 0, wantBlocked: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t)
			tw.apply(nodeClass(amiID(ami130)), nodePool(withTGP(tc.tgp)))
			tw.adopt(1, "c4.large", "spot", ami130, 4*time.Hour)
			tw.apply(deployment("web", 1, "1200m", withPodGrace(tc.podGrace)), pdb("web", "web", intOrStr(1), nil))
			tw.Settle()
			tw.apply(nodeClass(amiID(ami131)))

			if !tw.runUntil(2*time.Hour, tw.upgraded) {
				t.Fatalf("node not replaced within 2h\n%s", tw.dumpLog())
			}
			if _, ok := tw.firstEvent("DisruptionStarted", nil); !ok {
				t.Fatalf("drift never started although TGP is set\n%s", tw.dumpLog())
			}
			deletion, ok := tw.firstEvent("NodeTainted", nil)
			if !ok {
				t.Fatalf("no NodeTainted\n%s", tw.dumpLog())
			}
			forced := tw.events("PodForceDeleted")
			if len(forced) != 1 {
				t.Fatalf("PodForceDeleted events = %d, want 1\n%s", len(forced), tw.dumpLog())
			}
			got := forced[0].At.Sub(deletion.At)
			if got < tc.wantForce || got > tc.wantForce+time.Second {
				t.Errorf("pod force-deleted %s after the node's deletion, want %s (+ up to 1s)", got, tc.wantForce)
			}
			if !strings.Contains(forced[0].Message, deletion.At.Add(tc.tgp).UTC().Format(time.RFC3339)) {
				t.Errorf("PodForceDeleted = %q, want the node termination time %s", forced[0].Message, deletion.At.Add(tc.tgp).UTC().Format(time.RFC3339))
			}
			if w := tw.workload("Deployment", "web"); w.PDBViolations != 1 {
				t.Errorf("web PDB violations = %d, want 1", w.PDBViolations)
			}
			if b := tw.Kube.PDBBreaches(); len(b) != 1 || b[0].Mechanism != kube.BreachDeleted || !b[0].At.Equal(forced[0].At) ||
				!strings.HasPrefix(b[0].By, "Karpenter: terminationGracePeriod "+tc.tgp.String()) || !slices.Equal(b[0].PDBs, []string{"default/web"}) {
				t.Errorf("breaches %+v, want the web pod deleted at %v by the terminationGracePeriod under default/web", b, forced[0].At)
			}
			blocked := tw.karp.BlockedPods()
			if !tc.wantBlocked {
				for _, b := range blocked {
					if b.Outcome != "forced" {
						t.Errorf("blocked = %+v, want none or forced", b)
					}
				}
				return
			}
			if len(blocked) != 1 {
				t.Fatalf("BlockedPods() = %+v, want one entry", blocked)
			}
			b := blocked[0]
			if b.Outcome != "forced" || b.PDB != "default/web" || !strings.HasPrefix(b.Pod, "default/web-") {
				t.Errorf("blocked = %+v, want outcome forced, PDB default/web, a web pod", b)
			}
			if !b.Since.Equal(deletion.At) || !b.Until.Equal(forced[0].At) {
				t.Errorf("blocked from +%s to +%s, want +%s to +%s", b.Since.Sub(t0), b.Until.Sub(t0), deletion.At.Sub(t0), forced[0].At.Sub(t0))
			}
			if n := len(tw.events("FailedDraining")); n != 1 {
				t.Errorf("FailedDraining events = %d, want 1 (the first 429)", n)
			}
		})
	}
}

// TestDoNotDisrupt: karpenter.sh/do-not-disrupt on a pod ("true", or a
// duration from the pod's start that has not elapsed) keeps its node from
// being a drift candidate unless the NodeClaim has a terminationGracePeriod;
// on the node it blocks even then; an invalid value is ignored
// (semantics.md §A.4 candidate eligibility and its Eventual exception).
func TestDoNotDisrupt(t *testing.T) {
	cases := []struct {
		name     string
		podValue string // pod annotation; "" for none
		node     bool   // annotate the node instead
		tgp      time.Duration
		// wantDisrupted: the node is replaced; wantForced: its pod is
		// deleted at deletion + TGP − 30 s instead of being evicted.
		wantDisrupted, wantForced bool
	}{
		{name: `pod "true", no TGP: blocked`, podValue: "true", wantDisrupted: false},
		{name: `pod "true", TGP 10m: disrupted, pod deleted at +9m30s`, podValue: "true", tgp: 10 * time.Minute, wantDisrupted: true, wantForced: true},
		{name: `node "true", TGP 10m: blocked`, node: true, tgp: 10 * time.Minute, wantDisrupted: false},
		{name: `pod "8h", started 4h ago: blocked`, podValue: "8h", wantDisrupted: false},
		{name: `pod "2h", started 4h ago: expired, disrupted`, podValue: "2h", wantDisrupted: true},
		{name: `pod "yes" (invalid): ignored, disrupted`, podValue: "yes", wantDisrupted: true},
		{name: `pod "false": disrupted`, podValue: "false", wantDisrupted: true},
		{name: `control: no annotation, disrupted`, wantDisrupted: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var opts []poolOption
			if tc.tgp > 0 {
				opts = append(opts, withTGP(tc.tgp))
			}
			tw := newTwin(t)
			tw.apply(nodeClass(amiID(ami130)), nodePool(opts...))
			node := tw.adopt(1, "c4.large", "spot", ami130, 4*time.Hour)[0].Node
			var podOpts []podOption
			if tc.podValue != "" {
				podOpts = append(podOpts, withPodAnnotation(karpenter.DoNotDisrupt, tc.podValue))
			}
			tw.apply(deployment("web", 1, "1200m", podOpts...))
			if tc.node {
				if err := tw.Kube.UpdateNode(node, func(n *corev1.Node) {
					if n.Annotations == nil {
						n.Annotations = map[string]string{}
					}
					n.Annotations[karpenter.DoNotDisrupt] = "true"
				}); err != nil {
					t.Fatal(err)
				}
			}
			tw.Settle()
			tw.apply(nodeClass(amiID(ami131)))

			done := tw.runUntil(time.Hour, tw.upgraded)
			if done != tc.wantDisrupted {
				t.Fatalf("replaced = %v, want %v\n%s", done, tc.wantDisrupted, tw.dumpLog())
			}
			if !tc.wantDisrupted {
				if n := len(tw.events("DisruptionStarted")); n != 0 {
					t.Errorf("%d disruptions started, want 0", n)
				}
				if hasTaint(tw.Kube.Node(node), karpenter.DisruptedTaintKey) {
					t.Errorf("blocked node is tainted %s", karpenter.DisruptedTaintKey)
				}
				blocked := tw.karp.BlockedPods()
				if len(blocked) == 0 {
					t.Fatalf("BlockedPods() is empty, want the do-not-disrupt block")
				}
				for _, b := range blocked {
					if b.Outcome != "disruption-blocked" || b.PDB != "" || !strings.Contains(b.Message, karpenter.DoNotDisrupt) {
						t.Errorf("blocked = %+v, want outcome disruption-blocked, no PDB, a message naming %s", b, karpenter.DoNotDisrupt)
					}
				}
				return
			}
			forced := tw.events("PodForceDeleted")
			if !tc.wantForced {
				if len(forced) != 0 {
					t.Errorf("pod force-deleted, want it evicted\n%s", tw.dumpLog())
				}
				if w := tw.workload("Deployment", "web"); w.PDBViolations != 0 {
					t.Errorf("PDB violations = %d, want 0", w.PDBViolations)
				}
				return
			}
			deletion, _ := tw.firstEvent("NodeTainted", nil)
			if len(forced) != 1 {
				t.Fatalf("PodForceDeleted events = %d, want 1\n%s", len(forced), tw.dumpLog())
			}
			want := tc.tgp - 30*time.Second
			if got := forced[0].At.Sub(deletion.At); got < want || got > want+time.Second {
				t.Errorf("pod force-deleted %s after the node's deletion, want %s (+ up to 1s)", got, want)
			}
		})
	}
}

// drainOrder replaces one drifted node running Deployment web (600m),
// Deployment dns (300m, system-cluster-critical) and, with daemon, the
// DaemonSet agent, and returns those pods of the old node by name prefix.
func drainOrder(t *testing.T, daemon bool, prefixes []string) map[string]*corev1.Pod {
	t.Helper()
	tw := newTwin(t)
	tw.apply(nodeClass(amiID(ami130)), nodePool())
	node := tw.adopt(1, "c4.large", "spot", ami130, 4*time.Hour)[0].Node
	critical := func(p *corev1.PodTemplateSpec) { p.Spec.PriorityClassName = "system-cluster-critical" }
	tw.apply(deployment("web", 1, "600m"), deployment("dns", 1, "300m", critical))
	if daemon {
		tw.apply(daemonSet("agent", "50m"))
	}
	tw.Settle()
	pods := map[string]*corev1.Pod{}
	for _, prefix := range prefixes {
		p := tw.podsOnNode(node, prefix)
		if len(p) != 1 {
			t.Fatalf("%d %s pods on the node, want 1", len(p), prefix)
		}
		pods[prefix] = p[0]
	}
	tw.apply(nodeClass(amiID(ami131)))
	if !tw.runUntil(time.Hour, tw.upgraded) {
		t.Fatalf("not replaced\n%s", tw.dumpLog())
	}
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			t.Fatalf("%s never evicted", p.Name)
		}
	}
	return pods
}

var drainCases = []struct {
	name   string
	daemon bool
	want   []string // eviction order, by pod name prefix
}{
	{name: "web, then critical dns", daemon: false, want: []string{"web-", "dns-"}},
	{name: "web, then agent DaemonSet, then critical dns", daemon: true, want: []string{"web-", "agent-", "dns-"}},
}

// TestDrainPriorityOrder: the termination controller evicts non-critical
// pods, then non-critical DaemonSet pods, then system-cluster/node-critical
// pods, then critical DaemonSet pods (semantics.md §A.4 "Termination
// controller" step 3).
func TestDrainPriorityOrder(t *testing.T) {
	for _, tc := range drainCases {
		t.Run(tc.name, func(t *testing.T) {
			pods := drainOrder(t, tc.daemon, tc.want)
			for i := 1; i < len(tc.want); i++ {
				prev, cur := pods[tc.want[i-1]], pods[tc.want[i]]
				if !cur.DeletionTimestamp.After(prev.DeletionTimestamp.Time) {
					t.Errorf("%s evicted at +%s, not after %s (+%s)", cur.Name, cur.DeletionTimestamp.Sub(t0), prev.Name, prev.DeletionTimestamp.Sub(t0))
				}
			}
		})
	}
}

// TestDrainPriorityGroupsWaitForPodsGone: a group is evicted only once the
// previous group's pods are gone, not merely evicted: upstream
// terminator.go Drain groups every pod still waiting eviction, terminating
// ones included, and stops at the first non-empty group (semantics.md
// §A.4 "They are evicted in priority groups, one group at a time").
func TestDrainPriorityGroupsWaitForPodsGone(t *testing.T) {
	for _, tc := range drainCases {
		t.Run(tc.name, func(t *testing.T) {
			pods := drainOrder(t, tc.daemon, tc.want)
			for i := 1; i < len(tc.want); i++ {
				prev, cur := pods[tc.want[i-1]], pods[tc.want[i]]
				// A pod exits PodShutdown (5 s) after its eviction.
				if gap := cur.DeletionTimestamp.Sub(prev.DeletionTimestamp.Time); gap < kube.DefaultTimings.PodShutdown {
					t.Errorf("%s evicted %s after %s, want at least %s (once %s is gone)", cur.Name, gap, prev.Name, kube.DefaultTimings.PodShutdown, prev.Name)
				}
			}
		})
	}
}

// TestTerminatingInstanceKeepsItsAddress: TerminateInstances puts the
// instance in shutting-down; it keeps its private address, so no new
// instance can get its hostname, until it is terminated (Timings.Terminate
// later). Karpenter deletes the Node at its next poll of the instance
// (5 s), so the instance is gone at most 5 s before its Node — not the 30 s
// of shutting-down these timings give.
func TestTerminatingInstanceKeepsItsAddress(t *testing.T) {
	tw := driftedFleet(t, 1, nodePool())
	old := tw.karp.NodeClaims()[0]
	id := old.ProviderID[strings.LastIndex(old.ProviderID, "/")+1:]
	running := func() bool { return slices.Contains(tw.Cloud.Running(), id) }
	if !running() {
		t.Fatalf("instance %s of %s not running before the drift", id, old.Name)
	}
	var gone time.Time
	deleted := func() bool {
		if gone.IsZero() && !running() {
			gone = tw.Eng.Now()
		}
		_, ok := tw.firstEvent("NodeDeleted", func(l logLine) bool { return l.Node == old.Node })
		return ok
	}
	if !tw.runUntil(time.Hour, deleted) {
		t.Fatalf("node %s not deleted\n%s", old.Node, tw.dumpLog())
	}
	at, _ := tw.firstEvent("NodeDeleted", func(l logLine) bool { return l.Node == old.Node })
	if gone.IsZero() || at.At.Sub(gone) > 5*time.Second {
		t.Errorf("instance %s gone at +%s, its Node deleted at +%s: want the instance to keep its address until at most 5 s before",
			id, gone.Sub(t0), at.At.Sub(t0))
	}
}
