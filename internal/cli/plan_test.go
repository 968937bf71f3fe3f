package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPlanCommand: the runbook of a scenario as Markdown and JSON, the
// default target (the next minor), a scenario without a playbook given the
// default one, and bad flags refused with the fix.
func TestPlanCommand(t *testing.T) {
	code, stdout, stderr := runLadder("plan", "--scenario", "workshop", "--now", "2025-08-01T00:00:00Z")
	if code != 0 || !strings.HasPrefix(stdout, "# Upgrade runbook: eksworkshop-eksctl 1.30 → 1.31\n") ||
		!strings.Contains(stdout, "| extended support | the upgrade ends a surcharge of $365 a month |") {
		t.Fatalf("plan workshop: exit %d, stderr %s\n%s", code, stderr, stdout)
	}
	code, stdout, stderr = runLadder("plan", "--scenario", "karpenter-drift", "-o", "json", "--now", "2025-08-01T00:00:00Z")
	var rb struct {
		From, To string
		Hops     []struct {
			Steps []struct{ Kind, Strategy string }
		}
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &rb) != nil || len(rb.Hops) != 1 {
		t.Fatalf("plan karpenter-drift: exit %d, stderr %s\n%s", code, stderr, stdout)
	}
	drift := false
	for _, s := range rb.Hops[0].Steps {
		drift = drift || s.Strategy == "drift"
	}
	if !drift {
		t.Errorf("karpenter-drift's runbook has no drift step: %+v", rb.Hops[0].Steps)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "--scenario", "workshop", "-o", "yaml"}, `-o "yaml": use markdown or json`},
		{[]string{"plan", "--scenario", "workshop", "--cluster", "x"}, "give one or the other"},
		{[]string{"plan", "--scenario", "workshop", "--now", "yesterday"}, "--now \"yesterday\": use RFC 3339"},
		{[]string{"plan", "--scenario", "workshop", "--to", "1.30"}, "not newer than"},
	} {
		code, _, stderr := runLadder(c.args...)
		if code != 1 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q, want one line with %q", c.args, code, stderr, c.want)
		}
	}
}
