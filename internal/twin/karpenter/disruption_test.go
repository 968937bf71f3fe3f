package karpenter_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/twin/karpenter"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// driftedFleet starts n c4.large spot nodes on ami130, each running one pod
// of Deployment web (1200m: one per node, so every drifted node needs a
// replacement), then switches the EC2NodeClass to ami131 at t0: every node
// is drifted (AMIDrift).
func driftedFleet(t *testing.T, n int, pool *karpv1.NodePool) *twin {
	t.Helper()
	tw := newTwin(t)
	tw.apply(nodeClass(amiID(ami130)), pool)
	tw.adopt(n, "c4.large", "spot", ami130, 4*time.Hour)
	tw.apply(deployment("web", int32(n), "1200m"))
	tw.Settle()
	for _, node := range tw.Kube.Nodes() {
		if got := tw.Kube.ActivePods(node.Name); got != 1 {
			t.Fatalf("node %s runs %d web pods, want 1", node.Name, got)
		}
	}
	tw.apply(nodeClass(amiID(ami131)))
	if got := len(tw.karp.Drifted()); got != n {
		t.Fatalf("Drifted() = %d, want %d", got, n)
	}
	return tw
}

// upgraded reports whether no NodeClaim runs ami130 and Karpenter is idle.
func (tw *twin) upgraded() bool {
	return tw.claimsOnAMI(ami130) == 0 && !tw.karp.Busy() && len(tw.karp.Drifted()) == 0
}

// TestBudgetsLimitDrift: drift disrupts at most the NodePool's budget for
// reason Drifted at a time: min over the active budgets that apply to it
// (nil reasons apply to all), percentages rounded up, inactive budgets and
// budgets for other reasons ignored, 0 blocks (semantics.md §A.1b, §F.1,
// §F.2).
func TestBudgetsLimitDrift(t *testing.T) {
	cases := []struct {
		name     string
		nodes    int
		budgets  []karpv1.Budget // nil: the CRD default {nodes: "10%"}
		wantMax  int             // Stats().MaxConcurrentDisruptions
		wantDone bool            // every node replaced within 2h
		// wantBlock is a substring of BudgetBlocks() when budgets block.
		wantBlock string
	}{
		{name: `"20%" of 10 nodes: 2 at a time`, nodes: 10, budgets: []karpv1.Budget{budget("20%")}, wantMax: 2, wantDone: true},
		{name: `default "10%" of 10 nodes: 1 at a time`, nodes: 10, budgets: nil, wantMax: 1, wantDone: true},
		{name: `"10%" of 4 nodes rounds 0.4 up to 1`, nodes: 4, budgets: []karpv1.Budget{budget("10%")}, wantMax: 1, wantDone: true},
		{name: `"25%" of 10 nodes rounds 2.5 up to 3`, nodes: 10, budgets: []karpv1.Budget{budget("25%")}, wantMax: 3, wantDone: true},
		{name: `seed: "1" for Drifted, "100%" for Empty and Underutilized`, nodes: 4, budgets: []karpv1.Budget{
			budget("1", karpv1.DisruptionReasonDrifted),
			budget("100%", karpv1.DisruptionReasonEmpty, karpv1.DisruptionReasonUnderutilized),
		}, wantMax: 1, wantDone: true},
		{name: `"20%" and "3": the smaller, 2`, nodes: 10, budgets: []karpv1.Budget{budget("20%"), budget("3")}, wantMax: 2, wantDone: true},
		{name: `"0" blocks everything`, nodes: 10, budgets: []karpv1.Budget{budget("0")}, wantMax: 0, wantDone: false,
			wantBlock: "allow 0 Drifted disruptions"},
		{name: `"0%" blocks everything`, nodes: 4, budgets: []karpv1.Budget{budget("0%")}, wantMax: 0, wantDone: false,
			wantBlock: "allow 0 Drifted disruptions"},
		{name: `"0" for Drifted only`, nodes: 4, budgets: []karpv1.Budget{budget("0", karpv1.DisruptionReasonDrifted), budget("100%")}, wantMax: 0, wantDone: false,
			wantBlock: "allow 0 Drifted disruptions"},
		{name: `"0" for Empty only: Drifted is unbounded`, nodes: 10, budgets: []karpv1.Budget{budget("0", karpv1.DisruptionReasonEmpty)}, wantMax: 10, wantDone: true},
		{name: `explicitly no budgets: unbounded`, nodes: 4, budgets: []karpv1.Budget{}, wantMax: 4, wantDone: true},
		{name: `"0" 00:00-08:00 UTC, active at t0`, nodes: 4, budgets: []karpv1.Budget{scheduledBudget("0", "0 0 * * *", 8*time.Hour), budget("100%")}, wantMax: 0, wantDone: false,
			wantBlock: "allow 0 Drifted disruptions"},
		{name: `"0" 09:00-17:00 UTC, inactive at t0, is the only budget: unbounded`, nodes: 4, budgets: []karpv1.Budget{scheduledBudget("0", "0 9 * * *", 8*time.Hour)}, wantMax: 4, wantDone: true},
		{name: `"0" 09:00-17:00 UTC inactive, plus "20%"`, nodes: 10, budgets: []karpv1.Budget{scheduledBudget("0", "0 9 * * *", 8*time.Hour), budget("20%")}, wantMax: 2, wantDone: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// withBudgets passes nil on (CRD default) and an empty list as
			// an empty list (no budget at all).
			tw := driftedFleet(t, tc.nodes, nodePool(withBudgets(tc.budgets...)))
			done := tw.runUntil(2*time.Hour, tw.upgraded)
			if !tc.wantDone {
				tw.runFor(time.Hour)
			}
			if done != tc.wantDone {
				t.Fatalf("all nodes replaced = %v, want %v (%d left on %s)\n%s", done, tc.wantDone, tw.claimsOnAMI(ami130), ami130, tw.dumpLog())
			}
			st := tw.karp.Stats("default")
			if st.MaxConcurrentDisruptions != tc.wantMax {
				t.Errorf("MaxConcurrentDisruptions = %d, want %d\n%s", st.MaxConcurrentDisruptions, tc.wantMax, tw.dumpLog())
			}
			wantReplaced := 0
			if tc.wantDone {
				wantReplaced = tc.nodes
			}
			if st.Replaced != wantReplaced {
				t.Errorf("Replaced = %d, want %d", st.Replaced, wantReplaced)
			}
			if got := tw.claimsOnAMI(ami131); tc.wantDone && got != tc.nodes {
				t.Errorf("NodeClaims on %s = %d, want %d", ami131, got, tc.nodes)
			}
			if tc.wantDone {
				if w := tw.workload("Deployment", "web"); w.Ready != tc.nodes {
					t.Errorf("web ready = %d, want %d", w.Ready, tc.nodes)
				}
				if k := tw.Kube.Killed(); len(k) != 0 {
					t.Errorf("pods killed without eviction: %v", k)
				}
			}
			blocks := strings.Join(tw.karp.BudgetBlocks(), "\n")
			switch {
			case tc.wantBlock != "" && !strings.Contains(blocks, tc.wantBlock):
				t.Errorf("BudgetBlocks() = %q, want it to contain %q", blocks, tc.wantBlock)
			case tc.wantBlock != "" && !strings.Contains(blocks, "default"):
				t.Errorf("BudgetBlocks() = %q, want it to name NodePool default", blocks)
			case tc.wantBlock == "" && strings.Contains(blocks, "Drifted"):
				t.Errorf("BudgetBlocks() = %q, want no Drifted block", blocks)
			}
		})
	}
}

// TestDriftBudgetsBuiltOnlyForCandidates: the disruption controller builds
// a method's budget mapping only once the method has candidates ("If there
// are no candidates, move to the next disruption", controller.go disrupt;
// semantics.md §A.4), so a NodePool whose budgets allow 0 drifted
// disruptions reports no Drifted block while nothing has drifted, and does
// once a NodeClaim drifts. The drift pass reads a count of drifted
// NodeClaims first; it follows drift, its revert and the replacement of
// drifted NodeClaims.
func TestDriftBudgetsBuiltOnlyForCandidates(t *testing.T) {
	driftedBlock := func(tw *twin) bool {
		return strings.Contains(strings.Join(tw.karp.BudgetBlocks(), "\n"), "Drifted")
	}
	counts := func(t *testing.T, tw *twin, want int) {
		t.Helper()
		if kept, counted := tw.karp.DriftedCount(); kept != counted || counted != want {
			t.Errorf("drifted NodeClaims: kept count %d, counted %d, want %d", kept, counted, want)
		}
	}
	tw := newTwin(t)
	tw.apply(nodeClass(amiID(ami130)), nodePool(withBudgets(budget("0", karpv1.DisruptionReasonDrifted), budget("100%"))))
	tw.adopt(2, "c4.large", "spot", ami130, time.Hour)
	tw.runFor(time.Minute)
	if driftedBlock(tw) {
		t.Errorf("BudgetBlocks() = %q with nothing drifted, want no Drifted block", tw.karp.BudgetBlocks())
	}
	counts(t, tw, 0)
	tw.apply(nodeClass(amiID(ami131)))
	counts(t, tw, 2)
	tw.runFor(time.Minute)
	if !driftedBlock(tw) {
		t.Errorf("BudgetBlocks() = %q with 2 NodeClaims drifted, want the Drifted block", tw.karp.BudgetBlocks())
	}
	tw.apply(nodeClass(amiID(ami130)))
	counts(t, tw, 0)

	// Replaced: the drifted NodeClaims leave, and the count with them.
	tw = driftedFleet(t, 3, nodePool())
	counts(t, tw, 3)
	if !tw.runUntil(2*time.Hour, tw.upgraded) {
		t.Fatalf("drifted nodes not replaced\n%s", tw.dumpLog())
	}
	tw.runFor(10 * time.Minute)
	counts(t, tw, 0)
}

// TestBudgetsNotReadyNodesConsume: NotReady nodes count in the total and
// are subtracted from what a budget allows, for every reason:
// allowed = budget − (#deleting + #NotReady) (semantics.md §A.1b
// BuildDisruptionBudgetMapping, §F.4).
func TestBudgetsNotReadyNodesConsume(t *testing.T) {
	cases := []struct {
		name     string
		notReady int
		wantMax  int
		wantDone bool
	}{
		{name: `budget "2", all Ready: 2 at a time`, notReady: 0, wantMax: 2, wantDone: true},
		{name: `budget "2", 1 NotReady: 1 at a time`, notReady: 1, wantMax: 1, wantDone: true},
		{name: `budget "2", 2 NotReady: none`, notReady: 2, wantMax: 0, wantDone: false},
		{name: `budget "2", 3 NotReady: none`, notReady: 3, wantMax: 0, wantDone: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t)
			tw.apply(nodeClass(amiID(ami130)), nodePool(withBudgets(budget("2"))))
			tw.adopt(4, "c4.large", "spot", ami130, 4*time.Hour)
			tw.apply(nodeClass(amiID(ami131)))
			// Nodes on the new AMI: not drifted, only NotReady.
			sick := tw.adopt(tc.notReady, "c4.large", "spot", "", 4*time.Hour)
			tw.apply(deployment("web", int32(4+tc.notReady), "1200m"))
			tw.Settle()
			for _, c := range sick {
				if c.Drifted != "" {
					t.Fatalf("%s is drifted (%s); it should only be NotReady", c.Name, c.Drifted)
				}
				if err := tw.Kube.SetNodeReady(c.Node, false); err != nil {
					t.Fatal(err)
				}
			}
			if got := len(tw.karp.Drifted()); got != 4 {
				t.Fatalf("Drifted() = %d, want 4", got)
			}
			done := tw.runUntil(2*time.Hour, tw.upgraded)
			if done != tc.wantDone {
				t.Fatalf("all drifted nodes replaced = %v, want %v\n%s", done, tc.wantDone, tw.dumpLog())
			}
			if got := tw.karp.Stats("default").MaxConcurrentDisruptions; got != tc.wantMax {
				t.Errorf("MaxConcurrentDisruptions = %d, want %d\n%s", got, tc.wantMax, tw.dumpLog())
			}
			if !tc.wantDone && len(tw.events("DisruptionStarted")) != 0 {
				t.Errorf("disruptions started although NotReady nodes use the whole budget\n%s", tw.dumpLog())
			}
		})
	}
}

// TestReplaceFlowOrder: one drifted node is replaced as in the seed's log:
// disrupting (the node is tainted karpenter.sh/disrupted:NoSchedule first)
// → created → launched → registered → initialized nodeclaim → tainted node
// → deleted node → deleted nodeclaim; nothing of the old node is deleted
// before its replacement is initialized, and its pod leaves through the
// Eviction API (semantics.md §A.4 "Replace / orchestration sequence" and
// "Termination controller").
func TestReplaceFlowOrder(t *testing.T) {
	cases := []struct {
		name    string
		timings karpenter.Timings
	}{
		{name: "test timings", timings: testTimings},
		{name: "slow registration (3m)", timings: karpenter.Timings{BatchIdle: time.Second, BatchMax: 10 * time.Second, Launch: 5 * time.Second, Register: 3 * time.Minute, Initialize: 20 * time.Second, Terminate: 45 * time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t, withTimings(tc.timings))
			tw.apply(nodeClass(amiID(ami130)), nodePool())
			old := tw.adopt(1, "c4.large", "spot", ami130, 4*time.Hour)[0]
			oldNode := old.Node
			tw.apply(deployment("web", 1, "1200m"))
			tw.Settle()
			oldPod := tw.PodsOf("web-")[0]

			var newClaim string
			tw.watch(func(l logLine) {
				switch {
				case l.Code == "DisruptionStarted":
					if !hasTaint(tw.Kube.Node(oldNode), karpenter.DisruptedTaintKey) {
						t.Errorf("at %q the old node is not tainted %s", l.Message, karpenter.DisruptedTaintKey)
					}
				case l.Code == "NodeClaimCreated":
					newClaim = l.NodeClaim
				case l.Code == "NodeClaimInitialized" && l.NodeClaim == newClaim:
					if tw.Kube.Node(oldNode) == nil || tw.claimNamed(old.Name) == nil {
						t.Errorf("old node or NodeClaim gone before the replacement was initialized")
					}
					if p := tw.Kube.Pod(oldPod.Namespace, oldPod.Name); p == nil || p.DeletionTimestamp != nil {
						t.Errorf("old pod evicted before the replacement was initialized")
					}
				}
			})

			tw.apply(nodeClass(amiID(ami131)))
			if !tw.runUntil(time.Hour, tw.upgraded) {
				t.Fatalf("node not replaced within 1h\n%s", tw.dumpLog())
			}

			type step struct{ code, claim string }
			var got []step
			flow := map[string]bool{"DisruptionStarted": true, "NodeClaimCreated": true, "NodeClaimLaunched": true, "NodeClaimRegistered": true,
				"NodeClaimInitialized": true, "NodeTainted": true, "NodeDeleted": true, "NodeClaimDeleted": true}
			at := map[string]time.Time{}
			for _, l := range tw.log.Lines {
				if flow[l.Code] {
					who := "other"
					switch l.NodeClaim {
					case old.Name:
						who = "old"
					case newClaim:
						who = "new"
					}
					got = append(got, step{l.Code, who})
					at[l.Code+"/"+who] = l.At
				}
			}
			want := []step{
				{"DisruptionStarted", "old"},
				{"NodeClaimCreated", "new"},
				{"NodeClaimLaunched", "new"},
				{"NodeClaimRegistered", "new"},
				{"NodeClaimInitialized", "new"},
				{"NodeTainted", "old"},
				{"NodeDeleted", "old"},
				{"NodeClaimDeleted", "old"},
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("flow =\n  %v\nwant\n  %v\n%s", got, want, tw.dumpLog())
			}

			// Timing: drift at t0, the first 10 s disruption poll starts the
			// command, the replacement follows Launch/Register/Initialize,
			// the old node is drained at once, deleted after Terminate.
			start := t0.Add(10 * time.Second)
			initialized := start.Add(tc.timings.Launch + tc.timings.Register + tc.timings.Initialize)
			for _, c := range []struct {
				key  string
				want time.Time
			}{
				{"DisruptionStarted/old", start},
				{"NodeClaimCreated/new", start},
				{"NodeClaimInitialized/new", initialized},
				{"NodeTainted/old", initialized},
			} {
				if !at[c.key].Equal(c.want) {
					t.Errorf("%s at +%s, want +%s", c.key, at[c.key].Sub(t0), c.want.Sub(t0))
				}
			}
			if d := at["NodeDeleted/old"].Sub(at["NodeTainted/old"]); d < tc.timings.Terminate {
				t.Errorf("old node deleted %s after the taint, want at least Terminate = %s", d, tc.timings.Terminate)
			}

			msg := tw.events("DisruptionStarted")[0]
			wantMsg := fmt.Sprintf("disrupting nodeclaim(s) via replace, terminating 1 nodes (1 pods) %s/c4.large/spot and replacing with node from types c4.large", oldNode)
			if !strings.HasPrefix(msg.Message, wantMsg) || msg.Reason != "drifted" {
				t.Errorf("DisruptionStarted = %q reason %q, want prefix %q reason drifted", msg.Message, msg.Reason, wantMsg)
			}

			// The pod was evicted (DisruptionTarget condition), not killed.
			evicted := false
			for _, c := range oldPod.Status.Conditions {
				if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
					evicted = true
				}
			}
			if !evicted {
				t.Errorf("old pod %s has no DisruptionTarget condition: not evicted through the Eviction API", oldPod.Name)
			}
			if k := tw.Kube.Killed(); len(k) != 0 {
				t.Errorf("pods killed without eviction: %v", k)
			}
			nc := tw.karp.NodeClaims()
			if len(nc) != 1 || nc[0].Name != newClaim {
				t.Fatalf("NodeClaims = %v, want only %s", nc, newClaim)
			}
			if v := tw.Kube.Node(nc[0].Node).Status.NodeInfo.KubeletVersion; v != kubelet131 {
				t.Errorf("replacement kubelet = %s, want %s", v, kubelet131)
			}
			if pods := tw.PodsOf("web-"); len(pods) != 1 || pods[0].Spec.NodeName != nc[0].Node {
				t.Errorf("web pods after the upgrade: %d, want 1 on %s", len(pods), nc[0].Node)
			}
		})
	}
}

// TestDriftBlockedByPDB: without terminationGracePeriod, a pod whose PDB
// allows no disruption now makes its node no candidate at all: nothing is
// tainted or launched, and BlockedPods shows "disruption-blocked" with the
// PDB (semantics.md §A.4 candidate eligibility, §D.1).
func TestDriftBlockedByPDB(t *testing.T) {
	cases := []struct {
		name        string
		pdb         *policyv1.PodDisruptionBudget
		second      *policyv1.PodDisruptionBudget // a second PDB on the same pods
		wantBlocked bool
	}{
		{name: "minAvailable 2 of 2 replicas", pdb: pdb("web", "web", intOrStr(2), nil), wantBlocked: true},
		{name: "minAvailable 100%", pdb: pdb("web", "web", func() *intstr.IntOrString { v := intstr.FromString("100%"); return &v }(), nil), wantBlocked: true},
		{name: "maxUnavailable 0", pdb: pdb("web", "web", nil, intOrStr(0)), wantBlocked: true},
		{name: "control: minAvailable 1 of 2 replicas", pdb: pdb("web", "web", intOrStr(1), nil), wantBlocked: false},
		// Two PDBs on one pod: the Eviction API answers 500, a blocker
		// even when both would allow it (semantics.md §F.7).
		{name: "two PDBs, each minAvailable 0", pdb: pdb("web", "web", intOrStr(0), nil), second: pdb("web-2", "web", intOrStr(0), nil), wantBlocked: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t)
			tw.apply(nodeClass(amiID(ami130)), nodePool(withBudgets(budget("100%"))))
			tw.adopt(2, "c4.large", "spot", ami130, 4*time.Hour)
			tw.apply(deployment("web", 2, "1200m"), tc.pdb)
			wantPDB := "default/web"
			if tc.second != nil {
				tw.apply(tc.second)
				wantPDB = "default/web,default/web-2"
			}
			tw.Settle()
			tw.apply(nodeClass(amiID(ami131)))
			done := tw.runUntil(30*time.Minute, tw.upgraded)
			if done == tc.wantBlocked {
				t.Fatalf("replaced = %v, want %v\n%s", done, !tc.wantBlocked, tw.dumpLog())
			}
			if !tc.wantBlocked {
				if w := tw.workload("Deployment", "web"); w.PDBViolations != 0 || w.Ready != 2 {
					t.Errorf("web: ready %d, PDB violations %d; want 2 and 0", w.Ready, w.PDBViolations)
				}
				return
			}
			if n := len(tw.events("DisruptionStarted")); n != 0 {
				t.Errorf("%d disruptions started, want 0\n%s", n, tw.dumpLog())
			}
			if n := len(tw.events("NodeClaimCreated")); n != 0 {
				t.Errorf("%d NodeClaims created, want 0", n)
			}
			for _, n := range tw.Kube.Nodes() {
				if hasTaint(n, karpenter.DisruptedTaintKey) {
					t.Errorf("node %s tainted %s although it is no candidate", n.Name, karpenter.DisruptedTaintKey)
				}
			}
			blocked := tw.karp.BlockedPods()
			if len(blocked) == 0 {
				t.Fatalf("BlockedPods() is empty, want the web pods")
			}
			for _, b := range blocked {
				if b.Outcome != "disruption-blocked" || b.PDB != wantPDB || !strings.HasPrefix(b.Pod, "default/web-") || !b.Until.IsZero() {
					t.Errorf("blocked = %+v, want outcome disruption-blocked, PDB %s, a web pod, still blocked", b, wantPDB)
				}
			}
		})
	}
}

// TestDriftOrder: drift takes candidates by when they drifted (the Drifted
// condition's lastTransitionTime), but puts every empty candidate (no
// reschedulable pods) before the non-empty ones (semantics.md §A.4 "Drift
// sort"; upstream drift.go ComputeCommands: sort by time, then
// FilterReject empty/non-empty, Concat(empty, nonEmpty)).
func TestDriftOrder(t *testing.T) {
	cases := []struct {
		name string
		// Nodes A, B, C: A drifts at t0, B and C at +5m; empty ones run no
		// pod.
		emptyA, emptyB, emptyC bool
		// want is the order in which they are disrupted with budget "1":
		// groups in order, any order inside a group.
		want [][]string
	}{
		{name: "all busy: oldest drift first", want: [][]string{{"A"}, {"B", "C"}}},
		{name: "C empty: C first, then A (drifted earlier) before B", emptyC: true, want: [][]string{{"C"}, {"A"}, {"B"}}},
		{name: "A and C empty: A then C, then busy B", emptyA: true, emptyC: true, want: [][]string{{"A"}, {"C"}, {"B"}}},
		{name: "A busy, B empty: empty B first though A drifted earlier", emptyB: true, want: [][]string{{"B"}, {"A"}, {"C"}}},
		{name: "A busy, B and C empty: both empty ones first", emptyB: true, emptyC: true, want: [][]string{{"B", "C"}, {"A"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t)
			tw.apply(nodeClass(amiID(ami130)), nodePool(withBudgets(budget("0"))))
			label := map[string]string{}
			for i, n := range []struct {
				label, ami string
				empty      bool
			}{{"A", ami130Older, tc.emptyA}, {"B", ami130, tc.emptyB}, {"C", ami130, tc.emptyC}} {
				// A runs an older 1.30 AMI: drifted at once.
				c, err := tw.karp.Adopt("default", "c4.large", zones[i], "spot", n.ami, t0.Add(-4*time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				label[c.Name] = n.label
				if !n.empty {
					tw.apply(pod("pod-"+strings.ToLower(n.label), "1200m", withNodeName(c.Node)))
				}
			}
			tw.Settle()
			tw.runFor(5 * time.Minute)
			tw.apply(nodeClass(amiID(ami131)))
			tw.apply(nodePool(withBudgets(budget("1"))))
			tw.runUntil(time.Hour, func() bool { return len(tw.events("DisruptionStarted")) == 3 })
			var got []string
			for _, l := range tw.events("DisruptionStarted") {
				got = append(got, label[l.NodeClaim])
			}
			i := 0
			for _, group := range tc.want {
				for range group {
					if i >= len(got) || !slices.Contains(group, got[i]) {
						t.Fatalf("disruption order = %v, want groups %v\n%s", got, tc.want, tw.dumpLog())
					}
					i++
				}
			}
		})
	}
}

// TestDriftBlockedWhenPodsCannotMove: a drifted node whose pods the
// scheduling simulation cannot place anywhere — not on another node, not
// on a replacement — is skipped, and BlockedPods says why (semantics.md
// §A.4; upstream drift.go emits Blocked when !AllNonPendingPodsScheduled).
func TestDriftBlockedWhenPodsCannotMove(t *testing.T) {
	cases := []struct {
		name      string
		opts      func(node string) []podOption
		wantMoved bool
	}{
		{name: "pod pinned to its node by hostname", opts: func(node string) []podOption {
			return []podOption{withNodeSelector(corev1.LabelHostname, node)}
		}, wantMoved: false},
		{name: "pod needs on-demand, NodePool is spot only", opts: func(string) []podOption {
			return []podOption{withNodeSelector(karpv1.CapacityTypeLabelKey, "on-demand")}
		}, wantMoved: false},
		{name: "control: pod free to move", opts: func(string) []podOption { return nil }, wantMoved: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t)
			tw.apply(nodeClass(amiID(ami130)), nodePool())
			c := tw.adopt(1, "c4.large", "spot", ami130, 4*time.Hour)[0]
			tw.apply(pod("db", "1200m", append(tc.opts(c.Node), withNodeName(c.Node))...))
			tw.Settle()
			tw.apply(nodeClass(amiID(ami131)))
			moved := tw.runUntil(30*time.Minute, tw.upgraded)
			if moved != tc.wantMoved {
				t.Fatalf("replaced = %v, want %v\n%s", moved, tc.wantMoved, tw.dumpLog())
			}
			if moved {
				return
			}
			if n := len(tw.events("NodeClaimCreated")); n != 0 {
				t.Errorf("%d NodeClaims created for a pod that cannot move", n)
			}
			blocked := tw.karp.BlockedPods()
			if len(blocked) != 1 || blocked[0].Pod != "default/db" || blocked[0].Node != c.Node || !blocked[0].Until.IsZero() ||
				!strings.Contains(blocked[0].Message, "cannot be rescheduled") {
				t.Errorf("BlockedPods() = %+v, want default/db on %s, still blocked, cannot be rescheduled", blocked, c.Node)
			}
		})
	}
}

// TestDriftBlockedOutcomeWhileStillBlocked: a node that stays blocked keeps
// outcome "disruption-blocked" in BlockedPods, however often the 10 s
// disruption loop re-examines it (semantics.md §A.4; Blocked.Outcome).
func TestDriftBlockedOutcomeWhileStillBlocked(t *testing.T) {
	tw := newTwin(t)
	tw.apply(nodeClass(amiID(ami130)), nodePool())
	c := tw.adopt(1, "c4.large", "spot", ami130, 4*time.Hour)[0]
	tw.apply(pod("db", "1200m", withNodeName(c.Node), withNodeSelector(corev1.LabelHostname, c.Node)))
	tw.Settle()
	tw.apply(nodeClass(amiID(ami131)))
	tw.runFor(30 * time.Minute)
	blocked := tw.karp.BlockedPods()
	if len(blocked) != 1 || blocked[0].Outcome != "disruption-blocked" || !blocked[0].Until.IsZero() {
		t.Errorf("BlockedPods() = %+v, want one entry, outcome disruption-blocked, Until zero", blocked)
	}
}

// TestBudgetsCountOnlyInitializedNodes: the budget's node total counts
// only managed, initialized nodes, not NodeClaims still launching
// (semantics.md §A.1b, §F.4): with "50%" of 2 initialized nodes only 1 may
// be disrupting, even while 2 more NodeClaims are on their way.
func TestBudgetsCountOnlyInitializedNodes(t *testing.T) {
	slow := testTimings
	slow.Register = 10 * time.Minute
	cases := []struct {
		name     string
		inFlight int32 // pending pods, one NodeClaim each
		wantMax  int
	}{
		{name: `"50%" of 2, nothing launching: 1`, inFlight: 0, wantMax: 1},
		{name: `"50%" of 2, 2 NodeClaims launching: still 1`, inFlight: 2, wantMax: 1},
		{name: `"50%" of 2, 4 NodeClaims launching: still 1`, inFlight: 4, wantMax: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t, withTimings(slow))
			tw.apply(nodeClass(amiID(ami130)), nodePool(withBudgets(budget("50%"))))
			tw.adopt(2, "c4.large", "spot", ami130, 4*time.Hour)
			tw.apply(deployment("web", 2, "1200m"))
			tw.Settle()
			tw.apply(deployment("batch", tc.inFlight, "1200m"))
			tw.runFor(5 * time.Second)
			if got := len(tw.karp.NodeClaims()); got != 2+int(tc.inFlight) {
				t.Fatalf("NodeClaims = %d, want %d", got, 2+tc.inFlight)
			}
			tw.apply(nodeClass(amiID(ami131)))
			// Until +10m nothing new initializes.
			tw.runFor(9 * time.Minute)
			if got := tw.karp.Stats("default").MaxConcurrentDisruptions; got != tc.wantMax {
				t.Errorf("MaxConcurrentDisruptions = %d, want %d\n%s", got, tc.wantMax, tw.dumpLog())
			}
		})
	}
}

// TestDriftWaitsForUninitializedCapacity: a disruption whose pods would
// only fit on a NodeClaim that is not initialized yet is not started: the
// scheduling simulation marks those pods "would schedule against
// uninitialized nodeclaim" (upstream disruption/helpers.go
// SimulateScheduling), so no node is drained before the capacity its pods
// need is up (semantics.md §A.4: replacements first, delete only once they
// are initialized).
func TestDriftWaitsForUninitializedCapacity(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T) (tw *twin, candidate string, replacementInit func() (time.Time, bool))
	}{
		{
			// A (c4.xlarge, pod of 2500m) drifted first gets replacement RA
			// (c4.xlarge, 1420m spare); B's 1000m pod fits only in RA.
			name: "B's pod fits only on A's replacement, still launching",
			run: func(t *testing.T) (*twin, string, func() (time.Time, bool)) {
				tw := newTwin(t)
				reqs := withRequirements(req(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot"), req("karpenter.k8s.aws/instance-category", corev1.NodeSelectorOpIn, "c", "m", "r"))
				tw.apply(nodeClass(amiID(ami130)), nodePool(reqs, withBudgets(budget("0"))))
				a, err := tw.karp.Adopt("default", "c4.xlarge", "us-west-2a", "spot", ami130Older, t0.Add(-time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				b, err := tw.karp.Adopt("default", "c4.large", "us-west-2b", "spot", ami130, t0.Add(-time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				tw.apply(pod("a", "2500m", withNodeName(a.Node)))
				tw.apply(deployment("b", 1, "1000m"))
				tw.Settle()
				if p := tw.PodsOf("b-"); len(p) != 1 || p[0].Spec.NodeName != b.Node {
					t.Fatalf("pod b not on node B")
				}
				tw.runFor(5 * time.Minute)
				tw.apply(nodeClass(amiID(ami131)), nodePool(reqs, withBudgets(budget("2"))))
				return tw, b.Name, func() (time.Time, bool) {
					l, ok := tw.firstEvent("NodeClaimInitialized", nil)
					return l.At, ok
				}
			},
		},
		{
			// The command timed out at +10m10s; its replacement is still
			// launching (registers at +15m12s), the node must not be
			// drained onto it before it is initialized.
			name: "after a timed-out command, its replacement is still launching",
			run: func(t *testing.T) (*twin, string, func() (time.Time, bool)) {
				timings := testTimings
				timings.Register = 15 * time.Minute
				tw := newTwin(t, withTimings(timings))
				tw.apply(nodeClass(amiID(ami130)), nodePool())
				old := tw.adopt(1, "c4.large", "spot", ami130, 4*time.Hour)[0]
				tw.apply(deployment("web", 1, "1200m"))
				tw.Settle()
				tw.apply(nodeClass(amiID(ami131)))
				return tw, old.Name, func() (time.Time, bool) {
					l, ok := tw.firstEvent("NodeClaimInitialized", nil)
					return l.At, ok
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw, candidate, initialized := tc.run(t)
			tw.runUntil(time.Hour, func() bool { _, ok := initialized(); return ok && tw.claimNamed(candidate) == nil })
			drained, ok := tw.firstEvent("NodeTainted", func(l logLine) bool { return l.NodeClaim == candidate })
			if !ok {
				t.Fatalf("candidate %s never drained\n%s", candidate, tw.dumpLog())
			}
			at, ok := initialized()
			if !ok || drained.At.Before(at) {
				t.Errorf("candidate drained at +%s, before the capacity its pods need was initialized (+%s)\n%s", drained.At.Sub(t0), at.Sub(t0), tw.dumpLog())
			}
		})
	}
}

// TestDriftReplacementKeepsVolumeZone: a drifted node whose pod uses a
// zonal EBS volume gets its replacement in the volume's zone, and the old
// instance terminates only once the volume has detached (semantics.md §A.4
// termination step 4, awaitVolumeDetachment).
func TestDriftReplacementKeepsVolumeZone(t *testing.T) {
	for _, zone := range zones {
		t.Run(zone, func(t *testing.T) {
			tw := newTwin(t)
			sc, pvc := zonalStorage(zone)
			tw.apply(nodeClass(amiID(ami130)), nodePool(), sc, pvc)
			old, err := tw.karp.Adopt("default", "c4.large", zone, "spot", ami130, t0.Add(-4*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			tw.apply(deployment("db", 1, "1200m", withClaim("data")))
			tw.Settle()
			if p := tw.PodsOf("db-"); len(p) != 1 || p[0].Spec.NodeName != old.Node {
				t.Fatalf("db pod not on the adopted node in %s", zone)
			}
			tw.apply(nodeClass(amiID(ami131)))
			if !tw.runUntil(time.Hour, func() bool { return tw.upgraded() && tw.workload("Deployment", "db").Ready == 1 }) {
				t.Fatalf("not replaced\n%s", tw.dumpLog())
			}
			nc := tw.karp.NodeClaims()
			if len(nc) != 1 || nc[0].Zone != zone {
				t.Fatalf("replacement %v, want one NodeClaim in %s", nc, zone)
			}
			// Pod exits 5s after eviction, the volume detaches 10s later,
			// then the instance terminates (30s).
			tainted, _ := tw.firstEvent("NodeTainted", nil)
			deleted, _ := tw.firstEvent("NodeDeleted", nil)
			want := kube.DefaultTimings.PodShutdown + kube.DefaultTimings.VolumeDetach + testTimings.Terminate
			if got := deleted.At.Sub(tainted.At); got < want || got > want+time.Second {
				t.Errorf("old node deleted %s after the drain started, want %s (+ up to 1s)", got, want)
			}
		})
	}
}
