//go:build lab

package e2e

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// selfmngScenario is testdata/selfmng: one self-managed group of three
// nodes under Deployment web and its PDB (minAvailable 2 of 3), to be
// replaced by Ladder itself.
const selfmngScenario = "testdata/selfmng/scenario.yaml"

// TestLadderStrategyOnTheLab: `ladder upgrade --to 1.31 --approve
// --strategy ladder` on the lab replaces a self-managed group through the
// lab's Auto Scaling endpoint acting on the real API server: the desired
// capacity raised from 3 to 6 (SetDesiredCapacity, new KWOK nodes on the
// 1.31 AMI), the old nodes drained in three waves of one — never more than
// the PDB allows — and each terminated with the capacity decremented
// (TerminateInstanceInAutoScalingGroup), ending with three nodes at 1.31,
// each original node deleted once, no PDB exceeded, and the run agreeing
// with its rehearsal.
func TestLadderStrategyOnTheLab(t *testing.T) {
	l := startLab(t, selfmngScenario)
	settle(t, l)
	original := l.nodes(t)
	if len(original) != 3 {
		t.Fatalf("%d nodes at the start, want the group's 3", len(original))
	}
	watch := watchBudgets(t, l)
	journalFile := filepath.Join(t.TempDir(), "journal.json")
	began := time.Now()
	code, out, errs := ladder(t, l.env, "upgrade", "--to", "1.31", "--approve", "--strategy", "ladder", "--journal", journalFile, "--progress", "none")
	t.Logf("ladder upgrade --strategy ladder: exit %d in %s", code, time.Since(began).Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("ladder upgrade --strategy ladder: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "node group workers: desired capacity 3 → 6 for 3 old nodes") {
		t.Errorf("no surge from 3 to 6:\n%s", out)
	}
	waves := regexp.MustCompile(`(?m)node group workers: wave \d+: (.*)$`).FindAllStringSubmatch(out, -1)
	if len(waves) != 3 {
		t.Errorf("%d drain waves, want 3 of one node (minAvailable 2 of 3):\n%s", len(waves), out)
	}
	for _, w := range waves {
		if n := len(strings.Fields(w[1])); n != 1 {
			t.Errorf("a wave drained %d nodes at once, the PDB allows 1: %s", n, w[0])
		}
	}
	nodes := l.nodes(t)
	if len(nodes) != 3 {
		t.Errorf("%d nodes at the end, want the group's 3 (the desired capacity back at its size)", len(nodes))
	}
	for name, n := range nodes {
		if g := n.Labels["alpha.eksctl.io/nodegroup-name"]; g != "workers" {
			t.Errorf("node %s is in group %q, want workers", name, g)
		}
	}
	assertReplaced(t, l, nodes, original, watch)
	assertJournalDone(t, journalFile)
	assertPredictedGroup(t, l, "workers", "--journal", journalFile)
	if t.Failed() {
		t.Logf("ladder upgrade's output:\n%s\n%s", out, errs)
	}
}

// assertReplaced checks the nodes after an upgrade to 1.31: none of the
// original ones left, every kubelet at 1.31, every pod Ready, each
// original node deleted once and no PDB ever exceeded while it ran.
func assertReplaced(t *testing.T, l *lab, nodes, original map[string]corev1.Node, watch *budgetWatch) {
	t.Helper()
	for name, n := range nodes {
		if _, old := original[name]; old {
			t.Errorf("original node %s is still there (kubelet %s)", name, n.Status.NodeInfo.KubeletVersion)
		}
		if v := n.Status.NodeInfo.KubeletVersion; !strings.HasPrefix(v, "v1.31.") {
			t.Errorf("node %s: kubelet %s, want v1.31.x", name, v)
		}
	}
	podsReady(t, l)
	watch.mu.Lock()
	defer watch.mu.Unlock()
	for name := range original {
		if n := watch.deleted[name]; n != 1 {
			t.Errorf("original node %s deleted %d times, want once", name, n)
		}
	}
	for _, v := range watch.violations {
		t.Errorf("PDB exceeded: %s", v)
	}
}
