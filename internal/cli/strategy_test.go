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
