package journal

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestCompareAgreesWithItsOwnRehearsal: the twin carrying the upgrade out
// with a journal is the rehearsal again, so the comparison agrees on every
// step, every group's nodes replaced, the drains and the end state, for
// every mechanism of the workshop (in place, blue/green, Karpenter drift,
// instance refresh, Fargate) and for pdb-deadlock's blocked drain.
func TestCompareAgreesWithItsOwnRehearsal(t *testing.T) {
	for _, name := range []string{"workshop", "pdb-deadlock"} {
		t.Run(name, func(t *testing.T) {
			rec, run := rehearseInto(t, name, "1.31")
			final := StateOf(run)
			rec.Outcome = &final
			c, err := rec.Compare()
			if err != nil {
				t.Fatal(err)
			}
			if !c.Agree {
				t.Fatalf("differences: %q", c.Differences)
			}
			replaced := 0
			for _, g := range c.Groups {
				replaced += g.Actual
			}
			if replaced == 0 || c.DurationRatio == nil || *c.DurationRatio != 1 {
				t.Errorf("replaced %d nodes in all, ratio %v; want some, and 1 (the same twin)", replaced, c.DurationRatio)
			}
			var out bytes.Buffer
			if err := c.WriteText(&out); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "Agreed on every step") {
				t.Errorf("text:\n%s", out.String())
			}
		})
	}
}

// TestCompareNamesEachDifference: a group that replaced a node fewer, a
// drain that blocked where the rehearsal's did not, a kubelet left behind
// and an unfinished step are each named.
func TestCompareNamesEachDifference(t *testing.T) {
	rec, run := rehearseInto(t, "workshop", "1.31")
	final := StateOf(run)
	final.Kubelets = map[string]int{"1.31": final.Kubelets["1.31"] - 1, "1.30": 1}
	rec.Outcome = &final
	e := rec.Entries["1.31/node-group/initial"]
	e.Replaced--
	e.BlockedPod, e.BlockedPDB, e.BlockedNode = "default/orders-0", "default/orders", "ip-10-0-0-1"
	rec.Entries["1.31/node-group/initial"] = e
	last := rec.Entries["1.31/node-group/fp-profile"]
	last.State = "failed"
	rec.Entries["1.31/node-group/fp-profile"] = last
	c, err := rec.Compare()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"step 1.31/node-group/fp-profile is failed, the rehearsal's done",
		"node group initial:",
		"pod default/orders-0 (PDB default/orders)",
		"kubelets 1 at 1.30",
	}
	if c.Agree || len(c.Differences) != len(want) {
		t.Fatalf("differences %q, want %d", c.Differences, len(want))
	}
	for i, w := range want {
		if !strings.Contains(c.Differences[i], w) {
			t.Errorf("difference %d is %q, want it to name %q", i, c.Differences[i], w)
		}
	}
}

// TestCompareNeedsARehearsalAndAnEnd: a journal begun before the
// comparison existed is refused with why; an upgrade still running
// compares, naming its missing end state.
func TestCompareNeedsARehearsalAndAnEnd(t *testing.T) {
	if _, err := (&Record{Cluster: "demo", To: "1.31"}).Compare(); err == nil || !strings.Contains(err.Error(), "no rehearsal") {
		t.Errorf("a journal without a rehearsal: %v", err)
	}
	rec, _ := rehearseInto(t, "workshop", "1.31")
	c, err := rec.Compare()
	if err != nil {
		t.Fatal(err)
	}
	if c.Agree || !strings.Contains(strings.Join(c.Differences, "\n"), "not finished") {
		t.Errorf("without an end state: %q", c.Differences)
	}
}

// TestCompareSaysWhatDiffersAtTheEnd: an upgrade that ends with every
// kubelet at the target but a node more than the rehearsal (a Fargate
// pod's node) does not "agree on the end state": the comparison says
// which dimensions agree and which differ, and where the node count
// differs and why — a Karpenter node more and a Fargate node fewer too,
// though the total is the same; a journal whose end state was recorded
// without node kinds says so.
func TestCompareSaysWhatDiffersAtTheEnd(t *testing.T) {
	rec, run := rehearseInto(t, "workshop", "1.31")
	p := StateOf(run)
	total := p.Kubelets["1.31"]
	if len(p.Kubelets) != 1 || p.Nodes["fargate"] == 0 || p.Nodes["karpenter"] == 0 {
		t.Fatalf("the workshop's end: %+v", p)
	}
	fargateMore := StateOf(run)
	fargateMore.Kubelets["1.31"]++
	fargateMore.Nodes["fargate"]++
	swapped := StateOf(run)
	swapped.Nodes["karpenter"]++
	swapped.Nodes["fargate"]--
	older := StateOf(run)
	older.Kubelets["1.31"]++
	older.Nodes = nil
	for _, c := range []struct {
		name  string
		final State
		want  string
	}{
		{"a Fargate node more", fargateMore, fmt.Sprintf("%d nodes (kubelets %d at 1.31), the rehearsal's %d (%d at 1.31): Fargate nodes %d, the rehearsal's %d (each Fargate pod runs on a node of its own",
			total+1, total+1, total, total, p.Nodes["fargate"]+1, p.Nodes["fargate"])},
		{"Karpenter packing", swapped, fmt.Sprintf("%d nodes (kubelets %d at 1.31), the rehearsal's %d (%d at 1.31): Karpenter nodes %d, the rehearsal's %d (Karpenter packs the pods onto as many nodes as its bin-packing picks, then consolidates them); Fargate nodes %d, the rehearsal's %d",
			total, total, total, total, p.Nodes["karpenter"]+1, p.Nodes["karpenter"], p.Nodes["fargate"]-1, p.Nodes["fargate"])},
		{"an older journal", older, "the journal does not say of which node groups"},
	} {
		t.Run(c.name, func(t *testing.T) {
			final := c.final
			rec.Outcome = &final
			cmp, err := rec.Compare()
			if err != nil {
				t.Fatal(err)
			}
			if cmp.Agree || len(cmp.Differences) != 1 || !strings.Contains(cmp.Differences[0], c.want) {
				t.Fatalf("agree %v, differences %q; want one naming %q", cmp.Agree, cmp.Differences, c.want)
			}
			if want := []string{DimSteps, DimReplaced, DimDrains, DimVersions}; !slices.Equal(cmp.Agreed, want) || !slices.Equal(cmp.Differed, []string{DimNodes}) {
				t.Errorf("agreed %q, differed %q", cmp.Agreed, cmp.Differed)
			}
			var out bytes.Buffer
			if err := cmp.WriteText(&out); err != nil {
				t.Fatal(err)
			}
			verdict := "Agreed on every step, the nodes replaced, the drains and the versions at the end; differs on the node count at the end (time taken/rehearsed 1.00):\n  - "
			if !strings.Contains(out.String(), verdict) || strings.Contains(out.String(), "the end state;") {
				t.Errorf("text:\n%s", out.String())
			}
			if v := cmp.Verdict(); !strings.HasPrefix(v, "prediction vs reality: agreed on every step, the nodes replaced, the drains and the versions at the end; differs on the node count at the end: 1 difference(s), first: ") {
				t.Errorf("verdict %q", v)
			}
		})
	}
}
