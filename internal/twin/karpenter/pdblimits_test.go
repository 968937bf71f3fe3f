package karpenter_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/ladder-eks/ladder/internal/rules/workload"
	"github.com/ladder-eks/ladder/internal/twin/karpenter"
)

// TestCandidatePDBLimits: Karpenter decides whether a node is a candidate
// from the PDBs' status, not from the Eviction API (semantics.md §A.4
// candidate eligibility; karpenter pkg/utils/pdb/pdb.go isEvictable):
// disruptionsAllowed == 0 blocks every pod of the PDB, even an unready one
// the API server would let go under IfHealthyBudget (§D.1 rule 8), unless
// the PDB says AlwaysAllow and the pod's Ready condition is False.
//
// Web runs two Ready pods, one per node; a bare pod "slow", labelled
// app=web, never becomes Ready on a third node. minAvailable 2 of the
// three: currentHealthy 2, desiredHealthy 2, disruptionsAllowed 0.
func TestCandidatePDBLimits(t *testing.T) {
	always := policyv1.AlwaysAllow
	cases := []struct {
		name   string
		policy *policyv1.UnhealthyPodEvictionPolicyType
		// wantSlowNodeDisrupted: the node of the unready pod is replaced.
		wantSlowNodeDisrupted bool
	}{
		{name: "IfHealthyBudget (default): the unready pod's node is blocked too", policy: nil, wantSlowNodeDisrupted: false},
		{name: "AlwaysAllow: the unready pod does not block its node", policy: &always, wantSlowNodeDisrupted: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t)
			tw.apply(nodeClass(amiID(ami130)), nodePool(withBudgets(budget("100%"))))
			tw.adopt(3, "c4.large", "spot", ami130, 4*time.Hour)
			budget := pdb("web", "web", intOrStr(2), nil)
			budget.Spec.UnhealthyPodEvictionPolicy = tc.policy
			tw.apply(deployment("web", 2, "1200m"), budget)
			tw.Settle()
			tw.apply(pod("slow", "1200m", withPodAnnotation(workload.StartupAnnotation, "100h"), withLabel("app", "web")))
			tw.runFor(time.Minute)
			slow := tw.PodsOf("slow")
			if len(slow) != 1 || slow[0].Spec.NodeName == "" || readyStatus(slow[0]) != corev1.ConditionFalse {
				t.Fatalf("want one bound pod slow with Ready=False, got %+v", slow)
			}
			slowNode := slow[0].Spec.NodeName
			if got := tw.Kube.PDBs("default")[0].Status; got.CurrentHealthy != 2 || got.DesiredHealthy != 2 || got.DisruptionsAllowed != 0 {
				t.Fatalf("PDB status = %+v, want currentHealthy 2, desiredHealthy 2, disruptionsAllowed 0", got)
			}

			tw.apply(nodeClass(amiID(ami131)))
			tw.runFor(10 * time.Minute)

			disrupted := map[string]bool{}
			for _, e := range tw.events("DisruptionStarted") {
				disrupted[e.Node] = true
			}
			if disrupted[slowNode] != tc.wantSlowNodeDisrupted {
				t.Errorf("node %s of the unready pod disrupted = %v, want %v\n%s", slowNode, disrupted[slowNode], tc.wantSlowNodeDisrupted, tw.dumpLog())
			}
			if len(disrupted) > 1 || (len(disrupted) == 1 && !disrupted[slowNode]) {
				t.Errorf("disrupted %v; the nodes of Ready web pods must stay blocked", disrupted)
			}
			want := "pdb prevents pod evictions (PodDisruptionBudget=[default/web])"
			found := 0
			for _, b := range tw.karp.BlockedPods() {
				if b.Outcome != "disruption-blocked" {
					continue
				}
				found++
				if b.PDB != "default/web" || b.Message != want {
					t.Errorf("blocked = %+v, want PDB default/web and message %q", b, want)
				}
			}
			if wantBlocked := 3 - len(disrupted); found != wantBlocked {
				t.Errorf("%d nodes disruption-blocked, want %d", found, wantBlocked)
			}
		})
	}
}

// TestCandidateDaemonSetDoNotDisrupt: every pod bound to the node counts
// for karpenter.sh/do-not-disrupt, DaemonSet pods included (karpenter
// state/statenode.go ValidatePodsDisruptable: "we will allow Mirror Pods
// and DaemonSets to block disruption using this annotation").
func TestCandidateDaemonSetDoNotDisrupt(t *testing.T) {
	for _, annotate := range []bool{false, true} {
		t.Run(fmt.Sprintf("annotated=%v", annotate), func(t *testing.T) {
			tw := newTwin(t)
			tw.apply(nodeClass(amiID(ami130)), nodePool(withBudgets(budget("100%"))))
			tw.adopt(1, "c4.large", "spot", ami130, 4*time.Hour)
			ds := daemonSet("agent", "100m")
			if annotate {
				ds.Spec.Template.Annotations = map[string]string{karpenter.DoNotDisrupt: "true"}
			}
			tw.apply(ds, deployment("web", 1, "500m"))
			tw.Settle()
			tw.apply(nodeClass(amiID(ami131)))
			replaced := tw.runUntil(30*time.Minute, tw.upgraded)
			if replaced == annotate {
				t.Fatalf("replaced = %v, want %v\n%s", replaced, !annotate, tw.dumpLog())
			}
			if !annotate {
				return
			}
			blocked := tw.karp.BlockedPods()
			if len(blocked) != 1 || !strings.HasPrefix(blocked[0].Pod, "default/agent-") ||
				blocked[0].Message != fmt.Sprintf("pod has %q annotation (Pod=%s)", karpenter.DoNotDisrupt, blocked[0].Pod) {
				t.Errorf("BlockedPods() = %+v, want the agent pod, blocked by its %s annotation", blocked, karpenter.DoNotDisrupt)
			}
		})
	}
}

func withLabel(k, v string) podOption {
	return func(p *corev1.PodTemplateSpec) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels[k] = v
	}
}

func readyStatus(p *corev1.Pod) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status
		}
	}
	return ""
}
