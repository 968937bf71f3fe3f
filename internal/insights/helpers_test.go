package insights

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// testNow is the instant budget windows are evaluated at in tests.
var testNow = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

// input decodes manifests (as file "test.yaml") for an upgrade to target,
// from current when it is not empty.
func input(t *testing.T, current, target, manifests string) *Input {
	t.Helper()
	objs, problems := Decode("test.yaml", []byte(manifests))
	in := &Input{Target: kubeversion.MustParse(target), Now: testNow, Objects: objs, Problems: problems}
	if current != "" {
		in.Current = kubeversion.MustParse(current)
	}
	return in
}

// checkNamed is the registered check with an id.
func checkNamed(t *testing.T, id string) Check {
	t.Helper()
	for _, c := range Checks() {
		if c.Info().ID == id {
			return c
		}
	}
	t.Fatalf("no check %q", id)
	return nil
}

// runCheck runs one check and returns its findings (the PASSING one
// included when it found nothing).
func runCheck(t *testing.T, id string, in *Input) []Finding {
	t.Helper()
	return Run(in, []Check{checkNamed(t, id)}).Findings
}

// want is an expected finding: its severity, object ("Kind ns/name"),
// field, and substrings its message must contain.
type want struct {
	sev    Severity
	object string
	field  string
	msg    []string
}

// checkCase is one table row: manifests that make a check fire or not.
type checkCase struct {
	name      string
	current   string // "" for manifests only
	target    string
	manifests string
	want      []want // nil: the check passes
}

func runCases(t *testing.T, id string, cases []checkCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target := tc.target
			if target == "" {
				target = "1.31"
			}
			in := input(t, tc.current, target, tc.manifests)
			for _, p := range in.Problems {
				if id != "invalid-manifest" {
					t.Fatalf("manifest problem: %v", p)
				}
			}
			got := runCheck(t, id, in)
			expectFindings(t, got, tc.want)
		})
	}
}

func expectFindings(t *testing.T, got []Finding, wants []want) {
	t.Helper()
	if len(wants) == 0 {
		if len(got) != 1 || got[0].Severity != Passing {
			t.Fatalf("want only PASSING, got %s", dump(got))
		}
		return
	}
	if len(got) != len(wants) {
		t.Fatalf("got %d findings, want %d:\n%s", len(got), len(wants), dump(got))
	}
	for i, w := range wants {
		f := got[i]
		if f.Severity != w.sev || f.Object.String() != w.object || f.Field != w.field {
			t.Errorf("finding %d: got %s %q field %q, want %s %q field %q", i, f.Severity, f.Object.String(), f.Field, w.sev, w.object, w.field)
		}
		for _, s := range w.msg {
			if !strings.Contains(f.Message+" | "+f.Recommendation, s) {
				t.Errorf("finding %d: %q (recommendation %q) does not contain %q", i, f.Message, f.Recommendation, s)
			}
		}
		if f.Recommendation == "" {
			t.Errorf("finding %d has no recommendation", i)
		}
	}
}

func dump(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("  " + string(f.Severity) + " " + f.Check + " " + f.Object.String() + " [" + f.Field + "] " + f.Message + "\n")
	}
	return b.String()
}

func mustMinor(s string) kubeversion.Minor { return kubeversion.MustParse(s) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
