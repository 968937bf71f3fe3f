package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The text report lists each violation under the status line — when, the
// pod, its PDB, how it went and the step — up to maxViolationLines, then
// says how many more the JSON has; a report without violations has no
// violations key at all (the JSON stays as it was).
func TestViolationsInTheSummary(t *testing.T) {
	r := &Report{Scenario: "s", Seed: 1, Status: Violated}
	for i := range maxViolationLines + 2 {
		r.Violations = append(r.Violations, Violation{T: 75, Pod: fmt.Sprintf("shop/web-%d", i), Node: "n1", PDB: "shop/web",
			Mechanism: "deleted", By: "Karpenter: terminationGracePeriod 5m0s of nodeclaim default-x"})
	}
	r.Violations[0].Mechanism, r.Violations[0].By = "node-removed", "DeleteNodegroup blue"
	r.Violations[0].Hop, r.Violations[0].Step, r.Violations[0].Name = "1.31", "node-group", "blue"
	var out bytes.Buffer
	if err := r.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	want := []string{
		"Scenario s (seed 1): violated after 0s of virtual time",
		"  violated: 00:01:15 pod shop/web-0 taken down while PodDisruptionBudget shop/web allowed no disruption: its node n1 went away with it (DeleteNodegroup blue); step 1.31 node-group blue",
		"  violated: 00:01:15 pod shop/web-1 taken down while PodDisruptionBudget shop/web allowed no disruption: it was deleted without the Eviction API (Karpenter: terminationGracePeriod 5m0s of nodeclaim default-x)",
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d\n got %q\nwant %q", i, lines[i], w)
		}
	}
	if l := lines[1+maxViolationLines]; l != "  violated: … and 2 more PDB violation(s) (-o json lists them in violations[])" {
		t.Errorf("after %d violations: %q", maxViolationLines, l)
	}

	var js bytes.Buffer
	if err := (&Report{Status: Succeeded, Phases: []Phase{{Kind: "pre-checks"}}}).WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["violations"]; ok {
		t.Errorf("a report without violations has a violations key")
	}
	if _, ok := m["phases"].([]any)[0].(map[string]any)["pdbViolations"]; ok {
		t.Errorf("a phase without violations has a pdbViolations key")
	}
}
