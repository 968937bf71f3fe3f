package karpenter_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// rehearsal runs a small upgrade from scratch — provisioning 6 pods, then
// an AMI change replaced one node at a time — and returns everything
// observable: every log line with its time and fields, and the final
// NodeClaims.
func rehearsal(t *testing.T, seed uint64) string {
	t.Helper()
	tw := newTwin(t, withSeed(seed))
	tw.apply(nodeClass(amiID(ami130)), nodePool(withBudgets(budget("1"))))
	tw.apply(deployment("web", 6, "600m"), pdb("web", "web", intOrStr(5), nil))
	if !tw.runUntil(time.Hour, func() bool { return tw.workload("Deployment", "web").Ready == 6 && !tw.karp.Busy() }) {
		t.Fatalf("seed %d: web never ready\n%s", seed, tw.dumpLog())
	}
	tw.apply(nodeClass(amiID(ami131)))
	if !tw.runUntil(2*time.Hour, tw.upgraded) {
		t.Fatalf("seed %d: not upgraded\n%s", seed, tw.dumpLog())
	}
	var b strings.Builder
	for _, l := range tw.log.Lines {
		fmt.Fprintf(&b, "%s %s %s %s %s %s %q %v\n", l.At.Sub(t0), l.Type, l.Code, l.Reason, l.NodeClaim, l.Node, l.Message, l.Fields)
	}
	for _, c := range tw.karp.NodeClaims() {
		fmt.Fprintf(&b, "claim %s %s %s %s %s %s %s %s\n", c.Name, c.InstanceType.Name, c.CapacityType, c.Zone, c.Node, c.ProviderID, c.AMI.ID, c.Initialized.Sub(t0))
	}
	for _, p := range tw.Kube.Pods() {
		fmt.Fprintf(&b, "pod %s/%s %s\n", p.Namespace, p.Name, p.Spec.NodeName)
	}
	return b.String()
}

// TestDeterminism: the same setup and seed give the same NodeClaims, nodes,
// pods and log, line for line and to the nanosecond of virtual time; a
// different seed changes the random names (so the comparison can fail).
func TestDeterminism(t *testing.T) {
	cases := []struct {
		name     string
		a, b     uint64
		wantSame bool
	}{
		{name: "seed 1 twice", a: 1, b: 1, wantSame: true},
		{name: "seed 42 twice", a: 42, b: 42, wantSame: true},
		{name: "seeds 1 and 2 differ", a: 1, b: 2, wantSame: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			first, second := rehearsal(t, tc.a), rehearsal(t, tc.b)
			if same := first == second; same != tc.wantSame {
				t.Errorf("runs identical = %v, want %v\nfirst:\n%s\nsecond:\n%s", same, tc.wantSame, first, second)
			}
			if !strings.Contains(first, "claim ") || !strings.Contains(first, "DisruptionStarted") {
				t.Errorf("fingerprint has no NodeClaims or disruptions:\n%s", first)
			}
		})
	}
}
