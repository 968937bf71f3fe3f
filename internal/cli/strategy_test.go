package cli

import (
	"regexp"
	"strings"
	"testing"
)

// --strategy ladder rehearses the workshop's self-managed group by Ladder's
// own surge and drain: the step names the strategy, Ladder's wave drains
// both old nodes at once (no PDB selects their pods) and the group's
// instances are terminated by request with the capacity decremented, not
// by a refresh; an unknown strategy is refused naming the choices.
func TestRehearseStrategyLadder(t *testing.T) {
	code, stdout, stderr := runLadder("rehearse", "--scenario", "workshop", "--strategy", "ladder")
	if code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, stderr)
	}
	if !regexp.MustCompile(`(?m)^1\.31 +node-group +default-selfmng +ladder +1\.30 +1\.31 +\S+ +\S+ +succeeded `).MatchString(stdout) {
		t.Errorf("no succeeded ladder step for default-selfmng:\n%s", stdout)
	}
	for _, want := range []string{
		"node group default-selfmng: desired capacity 2 → 4 for 2 old nodes",
		"node group default-selfmng: wave 1: ",
		"shrinking the capacity from 4 to 3",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(stdout, "Instance refresh ") {
		t.Errorf("an instance refresh ran under --strategy ladder")
	}
	code, _, stderr = runLadder("rehearse", "--scenario", "workshop", "--strategy", "bogus")
	if code != 1 || !strings.Contains(stderr, `--strategy "bogus": use instance-refresh or ladder`) {
		t.Errorf("--strategy bogus: exit %d, stderr %q", code, stderr)
	}
}

// --strategy ladder reports the group's surge above its size (the desired
// capacity Ladder raised itself), and `ladder plan` takes it too: the step
// is the ladder's, its surge the rehearsal's, its commands set the desired
// capacity, drain and terminate instead of starting a refresh.
func TestStrategyLadderSurgeAndPlan(t *testing.T) {
	code, stdout, stderr := runLadder("rehearse", "--scenario", "workshop", "--strategy", "ladder")
	if code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, stderr)
	}
	if !regexp.MustCompile(`(?m)^default-selfmng +self-managed +2 +2 +2 +\d+ +2 +ladder$`).MatchString(stdout) {
		t.Errorf("the group's row does not show a surge of 2 under ladder:\n%s", stdout)
	}
	code, stdout, stderr = runLadder("plan", "--scenario", "workshop", "--strategy", "ladder")
	if code != 0 {
		t.Fatalf("plan: exit %d, stderr: %s", code, stderr)
	}
	if !regexp.MustCompile(`(?m)^\| \d+ \| Node group default-selfmng \| ladder \| 1\.30 → 1\.31 \| \S+ \| 2 \| 2 \|`).MatchString(stdout) {
		t.Errorf("the plan's step for default-selfmng is not ladder's with 2 replaced and a surge of 2:\n%s", stdout)
	}
	for _, want := range []string{"aws autoscaling set-desired-capacity --auto-scaling-group-name default-selfmng --desired-capacity 4", "terminate-instance-in-auto-scaling-group"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the plan lacks %q", want)
		}
	}
	if strings.Contains(stdout, "start-instance-refresh --auto-scaling-group-name default-selfmng") {
		t.Errorf("the plan starts an instance refresh under --strategy ladder")
	}
	if code, _, stderr := runLadder("plan", "--scenario", "workshop", "--strategy", "bogus"); code != 1 || !strings.Contains(stderr, "use instance-refresh or ladder") {
		t.Errorf("plan --strategy bogus: exit %d, %q", code, stderr)
	}
}
