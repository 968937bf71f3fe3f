package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/scenario"
)

// internalNote matches a citation of the project's own reference notes
// (shared/reference: semantics.md, aws-apis.md, eks-data.md, anchors.md,
// fleet-rollback-ownership.md, and their "§2.7" sections). A user has
// none of them: what Ladder prints cites the public page instead (AWS,
// Kubernetes, Karpenter documentation). A public URL's path
// (kubernetes.io/docs/reference/...) is not a citation of them.
var internalNote = regexp.MustCompile(`(?:^|[^/\w.-])(?:shared/)?reference/|\b(?:semantics|aws-apis|eks-data|anchors|fleet-rollback-ownership)\.md\b|§`)

func TestInternalNoteMatcher(t *testing.T) {
	for _, s := range []string{"(aws-apis.md §2.7)", "see semantics.md", "shared/reference/eks-data.md", "reference/anchors.md", "§E"} {
		if !internalNote.MatchString(s) {
			t.Errorf("%q is not caught", s)
		}
	}
	for _, s := range []string{"https://kubernetes.io/docs/reference/using-api/deprecation-guide/", "https://docs.aws.amazon.com/eks/latest/userguide/rollback-cluster.html", "docs/plan.md"} {
		if internalNote.MatchString(s) {
			t.Errorf("%q is caught", s)
		}
	}
}

// TestUserTextCitesNoInternalNotes runs the commands whose text users
// read — check, plan (its runbook, rollbacks included) and rehearse — on
// every built-in scenario, in each output format, and fails on a citation
// of the project's internal reference notes.
func TestUserTextCitesNoInternalNotes(t *testing.T) {
	for _, name := range scenario.Builtins() {
		runs := [][]string{
			{"check", "--scenario", name, "--now", "2026-03-30T09:00:00Z", "--show-passing", "-o", "wide"},
			{"check", "--scenario", name, "--now", "2026-03-30T09:00:00Z", "--show-passing", "-o", "json"},
			{"check", "--scenario", name, "--now", "2026-03-30T09:00:00Z", "-o", "sarif"},
			{"plan", "--scenario", name},
			{"plan", "--scenario", name, "-o", "json"},
			{"rehearse", "--scenario", name},
		}
		for _, args := range runs {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				code, stdout, stderr := runLadder(args...)
				if code != 0 && code != 2 || stdout == "" {
					t.Fatalf("exit %d, stderr: %s", code, stderr)
				}
				for i, line := range strings.Split(stdout+stderr, "\n") {
					if loc := internalNote.FindStringIndex(line); loc != nil {
						t.Errorf("line %d cites an internal note (%q); cite the public documentation instead:\n%s", i+1, line[loc[0]:loc[1]], line)
					}
				}
			})
		}
	}
}
