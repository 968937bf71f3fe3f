package journal

import (
	"bytes"
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
