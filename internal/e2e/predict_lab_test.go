//go:build lab

package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/journal"
)

// assertPredicted runs `ladder upgrade status --compare -o json` (args
// name the journal) after an upgrade of the small scenario and checks
// that the lab did what the rehearsal the upgrade made when it began said
// it would: every step done as rehearsed, initial's three nodes replaced,
// no drain stopped it, the control plane, add-ons and kubelets at 1.31.
// Only the time may differ: it is reported, not compared.
func assertPredicted(t *testing.T, l *lab, args ...string) {
	t.Helper()
	assertPredictedGroup(t, l, "initial", args...)
}

// assertPredictedGroup is assertPredicted for a scenario whose one node
// group of three is group.
func assertPredictedGroup(t *testing.T, l *lab, group string, args ...string) {
	t.Helper()
	code, out, errs := ladder(t, l.env, append([]string{"upgrade", "status", "--compare", "-o", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("ladder upgrade status --compare: exit %d\n%s\n%s", code, out, errs)
	}
	var c journal.Comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("ladder upgrade status --compare -o json: %v\n%s", err, out)
	}
	if !c.Agree {
		t.Errorf("prediction vs reality differ: %s", strings.Join(c.Differences, "; "))
	}
	if len(c.Groups) != 1 || c.Groups[0] != (journal.GroupDiff{Name: group, Predicted: 3, Actual: 3}) {
		t.Errorf("nodes replaced: %+v, want %s's 3 in both", c.Groups, group)
	}
	if a := c.Final.Actual; a == nil || a.ControlPlane != "1.31" || a.Kubelets["1.31"] != 3 || len(a.Kubelets) != 1 {
		t.Errorf("the end state recorded: %+v, want the control plane and 3 kubelets at 1.31", a)
	}
	if c.DurationRatio == nil {
		t.Error("no duration ratio")
	} else {
		t.Logf("prediction vs reality: agreed %v; lab time / rehearsed time %.3f", c.Agree, *c.DurationRatio)
	}
	code, text, _ := ladder(t, l.env, append([]string{"upgrade", "status", "--compare"}, args...)...)
	if code != 0 || !strings.Contains(text, "Agreed on every step") {
		t.Errorf("ladder upgrade status --compare: exit %d\n%s", code, text)
	}
}
