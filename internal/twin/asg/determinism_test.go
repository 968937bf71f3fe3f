package asg_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/rules/instancerefresh"
	"github.com/ladder-eks/ladder/internal/twin/asg"
)

// The same seed gives the same run: every activity line at the same
// virtual time, the same pods killed and the same drain blocks. Another
// seed gives other instance ids.
func TestSameSeedSameRun(t *testing.T) {
	a, b, c := rehearse(t, 42), rehearse(t, 42), rehearse(t, 43)
	if a != b {
		t.Fatalf("seed 42 twice differs:\n--- first\n%s\n--- second\n%s", a, b)
	}
	if a == c {
		t.Fatal("seeds 42 and 43 gave the same run")
	}
	if !strings.Contains(a, asg.EventNTHDrainFailed) || !strings.Contains(a, "killed") {
		t.Fatalf("the run does not exercise drain failures and killed pods:\n%s", a)
	}
}

// rehearse runs a refresh with every mechanism in play (launch-first and
// terminate-first sets, checkpoints, NTH with a PDB that blocks one node
// until the hook times out) and renders what happened.
func rehearse(t *testing.T, seed uint64) string {
	tw := newTwin(t, seed)
	tw.create(groupSpec("ng", 6, withHook(600*time.Second, asg.Abandon)))
	tw.apply(
		deployment("web", 6, "250m"),
		deployment("db", 2, "250m", inZone("us-west-2a")), pdb("db", 2, -1),
	)
	tw.Settle()
	tw.upgrade("ng", ami131)
	res := tw.refresh("ng", instancerefresh.Preferences{
		MinHealthyPercentage: ptr(80), MaxHealthyPercentage: ptr(120), InstanceWarmup: seconds(90),
		CheckpointPercentages: []int{50, 100}, CheckpointDelay: seconds(300),
	})
	tw.runUntilDone(res, 4*time.Hour)
	var b strings.Builder
	b.WriteString(tw.dump())
	for _, k := range tw.Kube.Killed() {
		fmt.Fprintf(&b, "killed %s/%s on %s at +%s\n", k.Namespace, k.Name, k.Node, since(k.At))
	}
	for _, d := range tw.Kube.DrainBlocks() {
		fmt.Fprintf(&b, "blocked %s on %s %s..%s %s\n", d.Pod, d.Node, since(d.Since), since(d.Until), d.Outcome)
	}
	fmt.Fprintf(&b, "%+v\n", res.Sets)
	return b.String()
}
