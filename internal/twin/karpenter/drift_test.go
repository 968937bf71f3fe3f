package karpenter_test

import (
	"strings"
	"testing"
	"time"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/twin/karpenter"
)

// TestDriftNodeClassChanges: EC2NodeClass changes drift every NodeClaim at
// once, with the provider's reasons (semantics.md §A.3 "Dynamic drift"):
// amiSelectorTerms are not hashed, so a new AMI is AMIDrift; hashed fields
// (tags, role) are NodeClassDrift, which is checked first.
func TestDriftNodeClassChanges(t *testing.T) {
	cases := []struct {
		name string
		// class is the EC2NodeClass applied after three nodes run ami130.
		class *awsv1.EC2NodeClass
		want  string // drift reason of every NodeClaim, "" for none
	}{
		{name: "id 1.30 to id 1.31 (the seed's change)", class: nodeClass(amiID(ami131)), want: karpenter.DriftAMI},
		{name: "id to an older 1.30 release", class: nodeClass(amiID(ami130Older)), want: karpenter.DriftAMI},
		{name: "ids 1.30 and 1.31: the newest is launched", class: nodeClass(amiID(ami130), amiID(ami131)), want: karpenter.DriftAMI},
		{name: "same id applied again", class: nodeClass(amiID(ami130)), want: ""},
		// No AMI of the new selection maps to c4.large (amd64): the
		// instance's image is not among MapToInstanceTypes(...), so drifted.
		{name: "id to an arm64-only AMI: amd64 nodes drift", class: nodeClass(amiID(ami130ARM)), want: karpenter.DriftAMI},
		{name: "tags added (hashed)", class: func() *awsv1.EC2NodeClass {
			c := nodeClass(amiID(ami130))
			c.Spec.Tags = map[string]string{"team": "checkout"}
			return c
		}(), want: karpenter.DriftNodeClass},
		{name: "role changed (hashed)", class: func() *awsv1.EC2NodeClass {
			c := nodeClass(amiID(ami130))
			c.Spec.Role = "OtherRole"
			return c
		}(), want: karpenter.DriftNodeClass},
		{name: "tags added and AMI changed: NodeClassDrift first", class: func() *awsv1.EC2NodeClass {
			c := nodeClass(amiID(ami131))
			c.Spec.Tags = map[string]string{"team": "checkout"}
			return c
		}(), want: karpenter.DriftNodeClass},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t)
			tw.apply(nodeClass(amiID(ami130)), nodePool())
			claims := tw.adopt(3, "c4.large", "spot", ami130, 4*time.Hour)
			for _, c := range claims {
				if c.Drifted != "" {
					t.Fatalf("%s drifted (%s) before any change", c.Name, c.Drifted)
				}
			}
			tw.apply(tc.class)
			// No virtual time passes: drift is evaluated on the change.
			for _, c := range claims {
				if c.Drifted != tc.want {
					t.Errorf("%s: Drifted = %q, want %q", c.Name, c.Drifted, tc.want)
				}
				if tc.want != "" && !c.DriftedSince.Equal(t0) {
					t.Errorf("%s: DriftedSince = +%s, want +0s", c.Name, c.DriftedSince.Sub(t0))
				}
			}
			wantEvents := 0
			if tc.want != "" {
				wantEvents = len(claims)
			}
			if got := tw.events("NodeClaimDrifted"); len(got) != wantEvents {
				t.Errorf("NodeClaimDrifted events = %d, want %d", len(got), wantEvents)
			}
			if got := len(tw.karp.Drifted()); got != wantEvents {
				t.Errorf("Drifted() = %d NodeClaims, want %d", got, wantEvents)
			}
		})
	}
}

// TestDriftAliasFollowsControlPlane: with alias al2023@latest, nodes drift
// only once Karpenter has discovered the new control-plane version (polled
// every 5 min) and re-resolved the alias (every 5 min), so at most 10 min
// after the upgrade (semantics.md §A.3 AMIDrift, the provider FAQ quoted at
// the end of §A.5). An AMI chosen by id does not follow the control plane.
func TestDriftAliasFollowsControlPlane(t *testing.T) {
	cases := []struct {
		name  string
		class *awsv1.EC2NodeClass
		// upgradeAt is when the control plane becomes 1.31 (0: never).
		upgradeAt time.Duration
		// quietUntil: not drifted at this time; driftedBy: drifted by then
		// (0: never, checked until +30m).
		quietUntil, driftedBy time.Duration
	}{
		{
			name:  "alias, upgrade at +1m: drift at the +5m poll",
			class: nodeClass(amiAlias("al2023@latest")), upgradeAt: 1 * time.Minute,
			quietUntil: 4*time.Minute + 59*time.Second, driftedBy: 5 * time.Minute,
		},
		{
			name:  "alias, upgrade at +5m1s, just after a poll: drift at +10m",
			class: nodeClass(amiAlias("al2023@latest")), upgradeAt: 5*time.Minute + time.Second,
			quietUntil: 9*time.Minute + 59*time.Second, driftedBy: 10 * time.Minute,
		},
		{
			name:  "alias, control plane stays 1.30",
			class: nodeClass(amiAlias("al2023@latest")), upgradeAt: 0,
			quietUntil: 30 * time.Minute,
		},
		{
			name:  "AMI by id ignores the upgrade",
			class: nodeClass(amiID(ami130)), upgradeAt: 1 * time.Minute,
			quietUntil: 30 * time.Minute,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t)
			// Budget 0: drift is detected but nothing is replaced.
			tw.apply(tc.class, nodePool(withBudgets(budget("0"))))
			claims := tw.adopt(2, "c4.large", "spot", "", 4*time.Hour)
			for _, c := range claims {
				if c.AMI.ID != ami130 {
					t.Fatalf("adopted on %s, want %s (al2023@latest for 1.30 on %s)", c.AMI.ID, ami130, t0.Format(time.DateOnly))
				}
			}
			if tc.upgradeAt > 0 {
				tw.Eng.At(t0.Add(tc.upgradeAt), func() { tw.cp = "1.31" })
				tw.Eng.RunUntil(t0.Add(tc.upgradeAt))
				for _, c := range claims {
					if c.Drifted != "" {
						t.Fatalf("%s drifted at the upgrade itself; Karpenter has not polled the version yet", c.Name)
					}
				}
			}
			tw.Eng.RunUntil(t0.Add(tc.quietUntil))
			for _, c := range claims {
				if c.Drifted != "" {
					t.Errorf("%s drifted (%s) at +%s, want not yet", c.Name, c.Drifted, c.DriftedSince.Sub(t0))
				}
			}
			if tc.driftedBy == 0 {
				return
			}
			if tc.driftedBy-tc.upgradeAt > 10*time.Minute {
				t.Fatalf("test case expects drift %s after the upgrade, more than 10 min", tc.driftedBy-tc.upgradeAt)
			}
			tw.Eng.RunUntil(t0.Add(tc.driftedBy))
			for _, c := range claims {
				if c.Drifted != karpenter.DriftAMI {
					t.Errorf("%s: Drifted = %q at +%s, want %q", c.Name, c.Drifted, tc.driftedBy, karpenter.DriftAMI)
					continue
				}
				if !c.DriftedSince.Equal(t0.Add(tc.driftedBy)) {
					t.Errorf("%s: DriftedSince = +%s, want +%s", c.Name, c.DriftedSince.Sub(t0), tc.driftedBy)
				}
			}
			if _, ok := tw.firstEvent("VersionDiscovered", func(l logLine) bool {
				return l.At.Equal(t0.Add(tc.driftedBy)) && strings.Contains(strings.Join(l.Fields, " "), "version=1.31")
			}); !ok {
				t.Errorf("no VersionDiscovered version=1.31 at +%s\n%s", tc.driftedBy, tw.dumpLog())
			}
		})
	}
}

// TestDriftNodePoolChanges: the static hash covers spec.template minus
// requirements, so template changes are NodePoolDrifted; spec.disruption,
// limits and weight are outside it and never drift; requirements drift
// only when the node's labels no longer satisfy them (semantics.md §A.3,
// upstream drift_test.go and the hash-controller tests).
func TestDriftNodePoolChanges(t *testing.T) {
	dedicated := corev1.Taint{Key: "dedicated", Value: "CheckoutApp", Effect: corev1.TaintEffectNoSchedule}
	base := func(opts ...poolOption) *karpv1.NodePool {
		return nodePool(append([]poolOption{withLabels("team", "checkout")}, opts...)...)
	}
	spotCMR := func(extra ...karpv1.NodeSelectorRequirementWithMinValues) poolOption {
		rs := append([]karpv1.NodeSelectorRequirementWithMinValues{
			req(awsv1.LabelInstanceCategory, corev1.NodeSelectorOpIn, "c", "m", "r"),
			req(awsv1.LabelInstanceSize, corev1.NodeSelectorOpIn, "large"),
		}, extra...)
		return withRequirements(rs...)
	}
	cases := []struct {
		name string
		pool *karpv1.NodePool
		want string
	}{
		// Template fields: hashed.
		{name: "template label team=checkout to team=payments", pool: nodePool(withLabels("team", "payments")), want: karpenter.DriftNodePool},
		{name: "template annotation added", pool: base(func(np *karpv1.NodePool) {
			np.Spec.Template.Annotations = map[string]string{"example.com/owner": "checkout"}
		}), want: karpenter.DriftNodePool},
		{name: "taint added", pool: base(withTaints(dedicated)), want: karpenter.DriftNodePool},
		{name: "startup taint added", pool: base(func(np *karpv1.NodePool) {
			np.Spec.Template.Spec.StartupTaints = []corev1.Taint{{Key: "node.cilium.io/agent-not-ready", Effect: corev1.TaintEffectNoExecute}}
		}), want: karpenter.DriftNodePool},
		{name: "expireAfter 720h to 360h", pool: base(withExpireAfter(360 * time.Hour)), want: karpenter.DriftNodePool},
		{name: "terminationGracePeriod set to 10m", pool: base(withTGP(10 * time.Minute)), want: karpenter.DriftNodePool},
		{name: "nodeClassRef to another EC2NodeClass", pool: base(func(np *karpv1.NodePool) {
			np.Spec.Template.Spec.NodeClassRef = &karpv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "other"}
		}), want: karpenter.DriftNodePool},
		{name: "label and requirement changed: static drift first", pool: nodePool(withLabels("team", "payments"),
			spotCMR(req(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "on-demand"))), want: karpenter.DriftNodePool},

		// Behaviour fields: outside the template.
		{name: "budgets 10% to 0", pool: base(withBudgets(budget("0"))), want: ""},
		{name: "budget with schedule added", pool: base(withBudgets(budget("10%"), scheduledBudget("0", "0 9 * * mon-fri", 8*time.Hour))), want: ""},
		{name: "limits cpu 1000", pool: base(func(np *karpv1.NodePool) {
			np.Spec.Limits = karpv1.Limits{corev1.ResourceCPU: resource.MustParse("1000")}
		}), want: ""},
		{name: "consolidation WhenEmpty after 30s", pool: base(withConsolidation(karpv1.ConsolidationPolicyWhenEmpty, "30s")), want: ""},
		{name: "weight 10", pool: base(func(np *karpv1.NodePool) { w := int32(10); np.Spec.Weight = &w }), want: ""},

		// Requirements: not hashed; drift iff the node no longer fits.
		{name: "capacity-type spot to on-demand", pool: base(spotCMR(req(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "on-demand"))), want: karpenter.DriftRequirements},
		{name: "capacity-type spot to spot or on-demand", pool: base(spotCMR(req(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot", "on-demand"))), want: ""},
		{name: "capacity-type Exists", pool: base(spotCMR(req(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpExists))), want: ""},
		{name: "capacity-type DoesNotExist", pool: base(spotCMR(req(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpDoesNotExist))), want: karpenter.DriftRequirements},
		{name: "arch arm64 added on an amd64 node", pool: base(spotCMR(req(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot"), req(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "arm64"))), want: karpenter.DriftRequirements},
		{name: "category c/m/r to c only: c4.large still fits", pool: base(withRequirements(
			req(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot"),
			req(awsv1.LabelInstanceCategory, corev1.NodeSelectorOpIn, "c"),
		)), want: ""},
		{name: "category c/m/r to m/r: c4.large no longer fits", pool: base(withRequirements(
			req(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot"),
			req(awsv1.LabelInstanceCategory, corev1.NodeSelectorOpIn, "m", "r"),
		)), want: karpenter.DriftRequirements},
		{name: "instance-cpu Gt 1 with label 2", pool: base(spotCMR(req(awsv1.LabelInstanceCPU, corev1.NodeSelectorOpGt, "1"))), want: ""},
		{name: "instance-cpu Gt 2 with label 2", pool: base(spotCMR(req(awsv1.LabelInstanceCPU, corev1.NodeSelectorOpGt, "2"))), want: karpenter.DriftRequirements},
		{name: "instance-cpu Lt 4 with label 2", pool: base(spotCMR(req(awsv1.LabelInstanceCPU, corev1.NodeSelectorOpLt, "4"))), want: ""},
		{name: "instance-cpu Lt 1 with label 2", pool: base(spotCMR(req(awsv1.LabelInstanceCPU, corev1.NodeSelectorOpLt, "1"))), want: karpenter.DriftRequirements},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t)
			other := nodeClass(amiID(ami130))
			other.ObjectMeta = metav1.ObjectMeta{Name: "other"}
			tw.apply(nodeClass(amiID(ami130)), other, base())
			claims := tw.adopt(2, "c4.large", "spot", ami130, 4*time.Hour)
			tw.apply(tc.pool)
			for _, c := range claims {
				if c.Drifted != tc.want {
					t.Errorf("%s: Drifted = %q, want %q", c.Name, c.Drifted, tc.want)
				}
			}
		})
	}
}

// TestDriftClearsWhenReverted: the Drifted condition is re-evaluated and
// removed once the NodeClaim matches again (semantics.md §A.3 "It is
// cleared when the NodeClaim is no longer drifted").
func TestDriftClearsWhenReverted(t *testing.T) {
	cases := []struct {
		name           string
		change, revert func(tw *twin)
		wantWhileDrift string
	}{
		{
			name:           "AMI 1.30 to 1.31 and back",
			change:         func(tw *twin) { tw.apply(nodeClass(amiID(ami131))) },
			revert:         func(tw *twin) { tw.apply(nodeClass(amiID(ami130))) },
			wantWhileDrift: karpenter.DriftAMI,
		},
		{
			name:           "template label changed and back",
			change:         func(tw *twin) { tw.apply(nodePool(withBudgets(budget("0")), withLabels("team", "payments"))) },
			revert:         func(tw *twin) { tw.apply(nodePool(withBudgets(budget("0")), withLabels("team", "checkout"))) },
			wantWhileDrift: karpenter.DriftNodePool,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t)
			tw.apply(nodeClass(amiID(ami130)), nodePool(withBudgets(budget("0")), withLabels("team", "checkout")))
			c := tw.adopt(1, "c4.large", "spot", ami130, time.Hour)[0]
			tc.change(tw)
			if c.Drifted != tc.wantWhileDrift {
				t.Fatalf("after the change Drifted = %q, want %q", c.Drifted, tc.wantWhileDrift)
			}
			tw.runFor(time.Minute)
			tc.revert(tw)
			if c.Drifted != "" {
				t.Errorf("after the revert Drifted = %q, want none", c.Drifted)
			}
			if n := len(tw.karp.Drifted()); n != 0 {
				t.Errorf("Drifted() = %d, want 0", n)
			}
		})
	}
}

// A drift pass simulates candidate after candidate against one base: each
// simulation packs on the base's capacity and must leave it as it found it,
// also while replacements are still initializing and pods wait for them.
func TestSimulationsLeaveTheBaseAsTheyFoundIt(t *testing.T) {
	tw := newTwin(t)
	tw.apply(nodeClass(amiID(ami130)), nodePool(withBudgets(budget("2"))))
	tw.apply(deployment("web", 12, "600m"), pdb("web", "web", nil, intOrStr(2)))
	if !tw.runUntil(time.Hour, func() bool { return tw.workload("Deployment", "web").Ready == 12 && !tw.karp.Busy() }) {
		t.Fatalf("web never ready\n%s", tw.dumpLog())
	}
	tw.apply(nodeClass(amiID(ami131)))
	total := 0
	for range 120 {
		sims, ok := tw.karp.SimulateEveryCandidate()
		if !ok {
			t.Fatalf("after %d simulations the base's capacity changed", total+sims)
		}
		total += sims
		if tw.upgraded() {
			break
		}
		tw.runFor(15 * time.Second)
	}
	if total < 10 {
		t.Fatalf("only %d simulations ran: the test does not exercise them", total)
	}
}
