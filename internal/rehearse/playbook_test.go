package rehearse

import (
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
)

func loadTestdata(t *testing.T, path string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestPlaybookHops: the playbook upgrades one minor per hop — pre-checks,
// control plane, then the Karpenter group by drift (its EC2NodeClass moved
// to al2023@latest) — and every node runs the hop's kubelet before the next
// hop starts (semantics.md §E one minor at a time, §D.4 skew; workshop §4,
// §6.3).
func TestPlaybookHops(t *testing.T) {
	for _, tc := range []struct {
		to   string
		hops int
	}{{"", 1}, {"1.33", 3}} {
		t.Run("to "+tc.to, func(t *testing.T) {
			rep, err := Run(loadTestdata(t, "testdata/playbook/scenario.yaml"), Options{To: tc.to})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Status != report.Succeeded {
				t.Fatalf("status %s: %v %s", rep.Status, rep.Stuck, rep.Failure)
			}
			if len(rep.Hops) != tc.hops || len(rep.Phases) != 3*tc.hops {
				t.Fatalf("hops %v, %d phases; want %d hops of 3 phases", rep.Hops, len(rep.Phases), tc.hops)
			}
			want := rep.Hops[len(rep.Hops)-1].To
			if rep.ControlPlane.Version != want || rep.ControlPlane.From != "1.30" {
				t.Errorf("control plane %s → %s, want 1.30 → %s", rep.ControlPlane.From, rep.ControlPlane.Version, want)
			}
			for i, ph := range rep.Phases {
				kinds := []string{"pre-checks", "control-plane", "node-group"}
				if ph.Kind != kinds[i%3] || ph.Hop != i/3 || ph.Status != report.Succeeded {
					t.Errorf("phase %d = %+v, want %s of hop %d, succeeded", i, ph, kinds[i%3], i/3)
				}
				if i > 0 && ph.Start < rep.Phases[i-1].End {
					t.Errorf("phase %d starts at %v before phase %d ends at %v", i, ph.Start, i-1, rep.Phases[i-1].End)
				}
			}
			// Every node caught up with each hop before the next began:
			// the node-group phase of a hop ends with no node behind.
			for _, n := range rep.Nodes {
				if !strings.HasPrefix(n.Version, "v"+want+".") {
					t.Errorf("node %s runs %s, want %s", n.Name, n.Version, want)
				}
			}
			if rep.Groups[0].Strategy != "drift" || rep.Probe == nil || rep.Probe.Seconds == 0 {
				t.Errorf("group strategy %q, probe %+v", rep.Groups[0].Strategy, rep.Probe)
			}
		})
	}
}

// TestPlaybookPreCheckStopsAHop: a group left alone (strategy none) stays
// at 1.30; three hops later its kubelets are 3 minors behind, the limit, and
// the pre-check of the fourth hop (1.34) refuses, naming the node
// (semantics.md §D.4).
func TestPlaybookPreCheckStopsAHop(t *testing.T) {
	sc := loadTestdata(t, "testdata/playbook/scenario.yaml")
	sc.Spec.NodeGroups[0].Upgrade.Strategy = scenario.NoUpgrade
	sc.Spec.NodeGroups[0].Upgrade.AMI = ""
	rep, err := Run(sc, Options{To: "1.34"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != report.Failed || rep.ControlPlane.Version != "1.33" {
		t.Fatalf("status %s, control plane %s; want failed at 1.33", rep.Status, rep.ControlPlane.Version)
	}
	last := rep.Phases[len(rep.Phases)-1]
	if last.Kind != "pre-checks" || last.Status != report.Failed || !strings.Contains(last.Message, "more than 3 minor versions behind Kubernetes 1.34") {
		t.Errorf("last phase = %+v, want the 1.34 pre-check failed on the kubelet skew", last)
	}
	if !strings.Contains(rep.Failure, "pre-check for 1.34") {
		t.Errorf("failure = %q", rep.Failure)
	}
}

// TestPatchAfterPlaybookKeepsItsAMITerms: the playbook's drift points the
// EC2NodeClass at al2023@latest; a later patch of another field starts
// from that, as kubectl apply's merge would, and does not put back the
// 1.30 AMI id (which would drift every node back to 1.30).
func TestPatchAfterPlaybookKeepsItsAMITerms(t *testing.T) {
	sc := loadTestdata(t, "testdata/playbook/scenario.yaml")
	sc.Spec.Upgrade = nil
	sc.Spec.Actions = []scenario.Action{
		{Upgrade: &scenario.PlaybookAction{To: "1.31"}},
		{Patch: &scenario.PatchAction{Kind: "EC2NodeClass", Name: "default", Patch: []byte(`{"spec":{"tags":{"team":"checkout"}}}`)}},
	}
	rep, err := Run(sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != report.Succeeded {
		t.Fatalf("status %s: %v %s", rep.Status, rep.Stuck, rep.Failure)
	}
	for _, n := range rep.Nodes {
		if !strings.HasPrefix(n.Version, "v1.31.") {
			t.Errorf("node %s runs %s after the patch, want 1.31", n.Name, n.Version)
		}
	}
}
