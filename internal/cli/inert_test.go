package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/termtext"
)

// hostileText is what an attacker writes into a name, a label or a
// message: an OSC that retitles the terminal, a screen clear, a
// right-to-left override, NUL, CR, a line feed that would forge a line.
const hostileText = "x\x1b]0;pwned\x07\x1b[2J\u202e\x00\r\ny"

// hostileEscaped is hostileText as the text outputs print it (termtext).
const hostileEscaped = `x^[]0;pwned\a^[[2J\u202e\x00\r\ny`

// inert fails the test when out holds a byte that is not inert on a
// terminal (anything but printable text, line feeds and tabs): every byte
// of the output is scanned.
func inert(t *testing.T, what, out string) {
	t.Helper()
	if i, r := termtext.FirstRaw([]byte(out), true); i >= 0 {
		t.Errorf("%s: %U at byte %d reaches the terminal raw: %q", what, r, i, out[max(0, i-40):min(len(out), i+40)])
	}
}

// yamlQuoted is s as a double-quoted YAML string.
func yamlQuoted(s string) string {
	r := strings.NewReplacer("\x1b", `\e`, "\x07", `\a`, "\x00", `\0`, "\r", `\r`, "\n", `\n`, "\u202e", `\u202e`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// TestTerminalOutputIsInert feeds names, labels and values holding escape
// sequences, bidi overrides, NUL, CR and LF through every text output —
// check -f (table, wide), rehearse, inventory, plan, scenario validate and
// their errors — and scans every byte each writes on standard output and
// standard error: none is a control character, and each value is shown
// escaped, the way kubectl escapes it.
func TestTerminalOutputIsInert(t *testing.T) {
	h := yamlQuoted(hostileText)
	manifest := filepath.Join(t.TempDir(), "hostile.yaml")
	if err := os.WriteFile(manifest, []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: `+h+`
  namespace: `+h+`
  labels: {app: `+h+`}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: `+h+`, image: nginx}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"check", "-f", manifest, "--target", "1.31"},
		{"check", "-f", manifest, "--target", "1.31", "-o", "wide"},
		{"check", "-f", manifest + "\x1b[2J", "--target", "1.31"}, // the error quotes the path
	} {
		_, stdout, stderr := runLadder(args...)
		what := strings.Join(args, " ")
		inert(t, what+": stdout", stdout)
		inert(t, what+": stderr", stderr)
		if !strings.Contains(stdout+stderr, `^[[2J`) {
			t.Errorf("%s: the hostile value is not shown escaped:\n%s%s", what, stdout, stderr)
		}
	}
	// The names are findings: the API server refuses them.
	_, stdout, _ := runLadder("check", "-f", manifest, "--target", "1.31")
	for _, want := range []string{"metadata.name: Invalid value: ", "metadata.namespace: Invalid value: ", "metadata.labels: Invalid value: "} {
		if !strings.Contains(stdout, want) || !strings.Contains(stdout, "ERROR    invalid-manifest") {
			t.Errorf("check -f: no invalid-manifest ERROR saying %q:\n%s", want, stdout)
		}
	}

	// A scenario whose own name and Karpenter group name (neither an
	// object Kubernetes or EKS validates) are hostile, and one with a
	// group name holding a Markdown table's "|".
	path, _ := writeScenario(t,
		edit{"scenario.yaml", "  name: minimal\n", "  name: " + h + "\n"},
		edit{"scenario.yaml", "    - name: default\n      type: karpenter", "    - name: " + yamlQuoted("pipe|"+hostileText) + "\n      type: karpenter"})
	for _, args := range [][]string{
		{"scenario", "validate", path},
		{"rehearse", "--scenario", path},
		{"inventory", "--scenario", path},
		{"plan", "--scenario", path},
	} {
		_, stdout, stderr := runLadder(args...)
		what := strings.Join(args[:len(args)-1], " ")
		inert(t, what+": stdout", stdout)
		inert(t, what+": stderr", stderr)
		if args[0] != "scenario" && !strings.Contains(stdout, hostileEscaped) {
			t.Errorf("%s: %s is not shown escaped:\n%s", what, hostileEscaped, stdout)
		}
		if args[0] == "plan" && !strings.Contains(stdout, `| Node group pipe\|`+hostileEscaped+` |`) {
			t.Errorf("plan: the group's \"|\" is not escaped in the steps table:\n%s", stdout)
		}
	}
	// A scenario refused for a hostile object name: one error line,
	// escaped.
	bad, _ := writeScenario(t, edit{"manifests/app.yaml", "kind: PodDisruptionBudget\nmetadata:\n  name: web", "kind: PodDisruptionBudget\nmetadata:\n  name: " + h})
	code, _, stderr := runLadder("scenario", "validate", bad)
	inert(t, "scenario validate (refused)", stderr)
	if code != 1 || len(stderrLines(stderr)) != 1 || !strings.Contains(stderr, "PodDisruptionBudget app/"+hostileEscaped+": metadata.name: Invalid value:") {
		t.Errorf("scenario validate: exit %d, stderr %q; want one escaped line naming metadata.name", code, stderr)
	}
}
