package karpenter_test

import (
	"strings"
	"testing"
	"time"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/disruption"
	"github.com/ladder-eks/ladder/internal/twin/karpenter"
)

// TestExpirationIsForceful: a NodeClaim older than expireAfter is deleted
// at creationTimestamp + expireAfter whatever the budgets say, and no
// replacement is launched first: its pods go Pending and the provisioner
// then launches a node for them (semantics.md §A.5, §F.6).
func TestExpirationIsForceful(t *testing.T) {
	cases := []struct {
		name        string
		expireAfter *time.Duration // nil: Never
		age         time.Duration
		budgets     []karpv1.Budget
		// wantExpiry is when the NodeClaim is deleted, from t0; 0: not
		// within 30 min.
		wantExpiry time.Duration
	}{
		{name: `expireAfter 2h, age 1h59m, budget "0"`, expireAfter: ptr(2 * time.Hour), age: time.Hour + 59*time.Minute, budgets: []karpv1.Budget{budget("0")}, wantExpiry: time.Minute},
		{name: `expireAfter 2h, age 1h59m, budget "100%"`, expireAfter: ptr(2 * time.Hour), age: time.Hour + 59*time.Minute, budgets: []karpv1.Budget{budget("100%")}, wantExpiry: time.Minute},
		{name: `expireAfter 24h, age 23h50m, budget "0" for Drifted`, expireAfter: ptr(24 * time.Hour), age: 23*time.Hour + 50*time.Minute, budgets: []karpv1.Budget{budget("0", karpv1.DisruptionReasonDrifted)}, wantExpiry: 10 * time.Minute},
		{name: `control: expireAfter 2h, age 1h`, expireAfter: ptr(2 * time.Hour), age: time.Hour, budgets: []karpv1.Budget{budget("0")}, wantExpiry: 0},
		{name: `control: expireAfter Never, age 10000h`, expireAfter: nil, age: 10000 * time.Hour, budgets: []karpv1.Budget{budget("0")}, wantExpiry: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			expire := func(np *karpv1.NodePool) { np.Spec.Template.Spec.ExpireAfter = disruption.ExplicitNever() }
			if tc.expireAfter != nil {
				expire = withExpireAfter(*tc.expireAfter)
			}
			tw := newTwin(t)
			tw.apply(nodeClass(amiID(ami130)), nodePool(withBudgets(tc.budgets...), expire))
			old := tw.adopt(1, "c4.large", "spot", "", tc.age)[0]
			tw.apply(deployment("web", 1, "1200m"))
			tw.Settle()

			expired := func() bool { _, ok := tw.firstEvent("NodeClaimExpired", nil); return ok }
			if tc.wantExpiry == 0 {
				tw.runFor(30 * time.Minute)
				if expired() || tw.claimNamed(old.Name) == nil {
					t.Fatalf("NodeClaim expired, want it kept\n%s", tw.dumpLog())
				}
				return
			}
			tw.runFor(tc.wantExpiry - time.Second)
			if expired() {
				t.Fatalf("expired before +%s\n%s", tc.wantExpiry, tw.dumpLog())
			}
			if !tw.runUntil(time.Hour, func() bool { return tw.claimNamed(old.Name) == nil && tw.workload("Deployment", "web").Ready == 1 }) {
				t.Fatalf("expired node not replaced within 1h\n%s", tw.dumpLog())
			}
			exp, _ := tw.firstEvent("NodeClaimExpired", nil)
			if !exp.At.Equal(t0.Add(tc.wantExpiry)) || exp.NodeClaim != old.Name || exp.Reason != "expired" {
				t.Errorf("NodeClaimExpired = %s at +%s reason %q, want %s at +%s reason expired", exp.NodeClaim, exp.At.Sub(t0), exp.Reason, old.Name, tc.wantExpiry)
			}
			if n := len(tw.events("DisruptionStarted")); n != 0 {
				t.Errorf("%d disruption commands; expiration deletes directly, without a command", n)
			}
			tainted, _ := tw.firstEvent("NodeTainted", func(l logLine) bool { return l.NodeClaim == old.Name })
			if !tainted.At.Equal(exp.At) {
				t.Errorf("old node tainted at +%s, want at the expiry +%s (no replacement first)", tainted.At.Sub(t0), exp.At.Sub(t0))
			}
			created := tw.events("NodeClaimCreated")
			if len(created) != 1 {
				t.Fatalf("NodeClaimCreated = %d, want 1 (the provisioner's, for the evicted pod)\n%s", len(created), tw.dumpLog())
			}
			// The pod is evicted at the expiry, goes Pending, and the batch
			// window (1 s) later the provisioner creates a NodeClaim.
			if want := exp.At.Add(testTimings.BatchIdle); !created[0].At.Equal(want) {
				t.Errorf("replacement created at +%s, want +%s (after the pod went Pending)", created[0].At.Sub(t0), want.Sub(t0))
			}
			if prov, ok := tw.firstEvent("ProvisionablePods", nil); !ok || !strings.Contains(strings.Join(prov.Fields, " "), "default/web-") {
				t.Errorf("no ProvisionablePods for the evicted web pod: %+v", prov)
			}
			// No replacement existed, so web had no ready pod until the new
			// node came up: Launch 2s + Register 30s + Initialize 10s + pod
			// startup 5s after the batch window.
			w := tw.workload("Deployment", "web")
			if w.MinReady != 0 || w.ZeroReady < 45*time.Second {
				t.Errorf("web MinReady %d, ZeroReady %s; want 0 and at least 45s", w.MinReady, w.ZeroReady)
			}
			if w.PDBViolations != 0 || len(tw.Kube.Killed()) != 0 {
				t.Errorf("web PDB violations %d, killed %v; want evictions only", w.PDBViolations, tw.Kube.Killed())
			}
			if st := tw.karp.Stats("default"); st.Replaced != 1 {
				t.Errorf("Replaced = %d, want 1", st.Replaced)
			}
		})
	}
}

// TestExpirationConsumesDriftBudget: a node being deleted because it
// expired counts as disrupting, so it uses up the Drifted budget of its
// NodePool until its instance terminates (semantics.md §A.5 "Expired or
// manually deleted nodes count as disrupting", §A.1b).
func TestExpirationConsumesDriftBudget(t *testing.T) {
	cases := []struct {
		name string
		// stuck: the expired node's pod is protected by an exhausted PDB
		// and the NodePool has no TGP, so the node hangs while deleting.
		stuck       bool
		wantDrifted bool // the drifted node is replaced within 30 min
	}{
		{name: `expired node hangs on a PDB, budget "1": drifted node waits`, stuck: true, wantDrifted: false},
		{name: `expired node drains, budget "1": drifted node follows`, stuck: false, wantDrifted: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t)
			tw.apply(nodeClass(amiID(ami130)), nodePool(withBudgets(budget("1")), withExpireAfter(2*time.Hour)))
			// A expires at +30s; B is young.
			a := tw.adopt(1, "c4.large", "spot", "", 2*time.Hour-30*time.Second)[0]
			b := tw.adopt(1, "c4.large", "spot", "", time.Hour)[0]
			tw.apply(deployment("stuck", 1, "1200m"), deployment("web", 1, "1200m"))
			if tc.stuck {
				tw.apply(pdb("stuck", "stuck", intOrStr(1), nil))
			}
			tw.Settle()
			if tw.Kube.ActivePods(a.Node) != 1 || tw.Kube.ActivePods(b.Node) != 1 {
				t.Fatalf("want one pod on each node")
			}

			tw.runFor(31 * time.Second)
			exp, ok := tw.firstEvent("NodeClaimExpired", nil)
			if !ok || exp.NodeClaim != a.Name || !exp.At.Equal(t0.Add(30*time.Second)) {
				t.Fatalf("NodeClaimExpired = %+v, want %s at +30s\n%s", exp, a.Name, tw.dumpLog())
			}
			// Now B drifts (A, deleting, is not re-evaluated).
			tw.apply(nodeClass(amiID(ami131)))
			if b.Drifted != karpenter.DriftAMI {
				t.Fatalf("B Drifted = %q, want %q", b.Drifted, karpenter.DriftAMI)
			}

			replaced := tw.runUntil(30*time.Minute, func() bool { return tw.claimNamed(b.Name) == nil })
			if replaced != tc.wantDrifted {
				t.Fatalf("drifted node replaced = %v, want %v\n%s", replaced, tc.wantDrifted, tw.dumpLog())
			}
			if got := tw.karp.Stats("default").MaxConcurrentDisruptions; got != 1 {
				t.Errorf("MaxConcurrentDisruptions = %d, want 1 (A, then B)", got)
			}
			if tc.stuck {
				if tw.claimNamed(a.Name) == nil {
					t.Errorf("expired node %s is gone although its pod cannot be evicted and there is no TGP", a.Name)
				}
				if n := len(tw.events("DisruptionStarted")); n != 0 {
					t.Errorf("%d drift disruptions started while the expired node uses the budget\n%s", n, tw.dumpLog())
				}
				return
			}
			start, _ := tw.firstEvent("DisruptionStarted", nil)
			// A stops counting once its instance terminates: after its drain
			// (pod shutdown 5s, MinDrainTime 5s) — B can only start after that.
			if !start.At.After(exp.At.Add(5 * time.Second)) {
				t.Errorf("B disrupted at +%s, before the expired node A (+%s) finished draining", start.At.Sub(t0), exp.At.Sub(t0))
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestExpirationKeepsNodeClaimValues: expireAfter is copied onto the
// NodeClaim when it is created; changing it on the NodePool drifts the
// node but does not move its expiry (semantics.md §A.5).
func TestExpirationKeepsNodeClaimValues(t *testing.T) {
	cases := []struct {
		name      string
		newExpiry time.Duration
	}{
		{name: "NodePool expireAfter 2h to 30m: node still expires at 2h", newExpiry: 30 * time.Minute},
		{name: "NodePool expireAfter 2h to 10h: node still expires at 2h", newExpiry: 10 * time.Hour},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t)
			// Budget 0: the drift the change causes does not replace it.
			tw.apply(nodeClass(amiID(ami130)), nodePool(withBudgets(budget("0")), withExpireAfter(2*time.Hour)))
			c := tw.adopt(1, "c4.large", "spot", "", time.Hour)[0]
			tw.Settle()
			tw.apply(nodePool(withBudgets(budget("0")), withExpireAfter(tc.newExpiry)))
			if c.Drifted != karpenter.DriftNodePool {
				t.Errorf("Drifted = %q, want %q", c.Drifted, karpenter.DriftNodePool)
			}
			if *c.ExpireAfter != 2*time.Hour {
				t.Errorf("NodeClaim expireAfter = %s, want 2h", *c.ExpireAfter)
			}
			tw.runFor(2 * time.Hour)
			exp, ok := tw.firstEvent("NodeClaimExpired", nil)
			if !ok || !exp.At.Equal(t0.Add(time.Hour)) {
				t.Errorf("expired %v at +%s, want at +1h (created 1h ago, expireAfter 2h)\n%s", ok, exp.At.Sub(t0), tw.dumpLog())
			}
		})
	}
}

// TestExpirationRespectsPodBlockers: an expired node is drained through
// the termination controller, which respects PDBs and do-not-disrupt pods
// unless the NodeClaim has a terminationGracePeriod: without one it hangs,
// with one its pods are deleted at expiry + TGP − pod grace (semantics.md
// §A.5 "Maximum node lifetime = expireAfter + terminationGracePeriod").
func TestExpirationRespectsPodBlockers(t *testing.T) {
	cases := []struct {
		name      string
		blocker   string // "pdb" or "do-not-disrupt"
		tgp       time.Duration
		wantForce time.Duration // after the expiry; 0: the node hangs
	}{
		{name: "exhausted PDB, no TGP: hangs", blocker: "pdb"},
		{name: `do-not-disrupt "true", no TGP: hangs`, blocker: "do-not-disrupt"},
		{name: "exhausted PDB, TGP 10m: pod deleted at +9m30s", blocker: "pdb", tgp: 10 * time.Minute, wantForce: 9*time.Minute + 30*time.Second},
		{name: `do-not-disrupt "true", TGP 20m: pod deleted at +19m30s`, blocker: "do-not-disrupt", tgp: 20 * time.Minute, wantForce: 19*time.Minute + 30*time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := []poolOption{withExpireAfter(2 * time.Hour)}
			if tc.tgp > 0 {
				opts = append(opts, withTGP(tc.tgp))
			}
			tw := newTwin(t)
			tw.apply(nodeClass(amiID(ami130)), nodePool(opts...))
			c := tw.adopt(1, "c4.large", "spot", "", 2*time.Hour-time.Minute)[0]
			var podOpts []podOption
			if tc.blocker == "do-not-disrupt" {
				podOpts = append(podOpts, withPodAnnotation(karpenter.DoNotDisrupt, "true"))
			}
			tw.apply(deployment("web", 1, "1200m", podOpts...))
			if tc.blocker == "pdb" {
				tw.apply(pdb("web", "web", intOrStr(1), nil))
			}
			tw.Settle()
			tw.runFor(time.Hour)
			exp, ok := tw.firstEvent("NodeClaimExpired", nil)
			if !ok || !exp.At.Equal(t0.Add(time.Minute)) {
				t.Fatalf("expired %v at +%s, want +1m", ok, exp.At.Sub(t0))
			}
			forced := tw.events("PodForceDeleted")
			if tc.wantForce == 0 {
				if tw.claimNamed(c.Name) == nil || len(forced) != 0 {
					t.Errorf("expired node gone or pod forced; want it hanging on its %s\n%s", tc.blocker, tw.dumpLog())
				}
				return
			}
			if len(forced) != 1 {
				t.Fatalf("PodForceDeleted = %d, want 1\n%s", len(forced), tw.dumpLog())
			}
			if got := forced[0].At.Sub(exp.At); got < tc.wantForce || got > tc.wantForce+time.Second {
				t.Errorf("pod deleted %s after the expiry, want %s (+ up to 1s)", got, tc.wantForce)
			}
			if tw.claimNamed(c.Name) != nil {
				t.Errorf("expired NodeClaim still present after its pod was deleted")
			}
		})
	}
}
