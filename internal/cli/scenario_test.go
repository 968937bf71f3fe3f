package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/scenario"
)

// minimalScenario is the smallest valid scenario that exercises every check
// the bad-input tests break: one Karpenter node, a NodePool with a scheduled
// budget, an EC2NodeClass on a catalogued AMI, a Deployment with a PDB in a
// namespace a manifest creates, an ignored Service, and a script that
// scales, waits and updates the control plane n+1.
var minimalScenario = map[string]string{
	"scenario.yaml": `# A minimal valid scenario.
apiVersion: ladder.dev/v1alpha1
kind: Scenario
metadata:
  name: minimal
  description: the smallest scenario that exercises every check
spec:
  start: "2026-03-30T10:00:00Z"
  seed: 1
  timeLimit: 1h
  cluster:
    name: test
    version: "1.30"
    region: us-west-2
    zones: [us-west-2a, us-west-2b]
  nodeGroups:
    - name: default
      type: karpenter
      karpenter:
        nodePool: default
        nodes:
          - instanceType: m5.large
            zone: us-west-2a
            capacityType: on-demand
  manifests:
    - file: manifests/karpenter.yaml
    - file: manifests/app.yaml
  actions:
    - at: 1m
      scale: {kind: Deployment, namespace: app, name: web, replicas: 3}
    - wait: {settled: true}
    - upgradeControlPlane: {version: "1.31"}
    - wait: {for: 5m}
`,
	"manifests/karpenter.yaml": `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: [on-demand]
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 30s
    budgets:
      - nodes: "0"
        schedule: "0 22 * * *"
        duration: 2h
      - nodes: "1"
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: KarpenterNodeRole-test
  amiFamily: AL2023
  amiSelectorTerms:
    - id: ami-0f676a166352f02ab
  subnetSelectorTerms:
    - tags: {karpenter.sh/discovery: test}
  securityGroupSelectorTerms:
    - tags: {karpenter.sh/discovery: test}
`,
	"manifests/app.yaml": `apiVersion: v1
kind: Namespace
metadata:
  name: app
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: app
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:1.27
          resources:
            requests: {cpu: 100m, memory: 128Mi}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
  namespace: app
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: web}
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: app
spec:
  selector: {app: web}
  ports: [{port: 80}]
`,
}

// edit is one change to a fixture file: old must occur exactly once.
type edit struct{ file, old, new string }

// writeScenario writes the minimal scenario with edits applied into a new
// temporary directory and returns the scenario file's path and the files as
// written.
func writeScenario(t *testing.T, edits ...edit) (string, map[string]string) {
	t.Helper()
	files := map[string]string{}
	for k, v := range minimalScenario {
		files[k] = v
	}
	for _, e := range edits {
		content, ok := files[e.file]
		if !ok {
			content = "" // a new file
		}
		if e.old == "" {
			files[e.file] = content + e.new
			continue
		}
		if n := strings.Count(content, e.old); n != 1 {
			t.Fatalf("fixture %s: %q occurs %d times, want once", e.file, e.old, n)
		}
		files[e.file] = strings.Replace(content, e.old, e.new, 1)
	}
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "scenario.yaml"), files
}

// lineOf is the 1-based line of the first occurrence of s in content.
func lineOf(t *testing.T, content, s string) int {
	t.Helper()
	i := strings.Index(content, s)
	if i < 0 {
		t.Fatalf("%q is not in the file", s)
	}
	return strings.Count(content[:i], "\n") + 1
}

// errorLines returns stderr's lines without the leading "error: ".
func stderrLines(stderr string) []string {
	return strings.Split(strings.TrimSuffix(strings.TrimPrefix(stderr, "error: "), "\n"), "\n")
}

func TestScenarioValidateMinimal(t *testing.T) {
	path, _ := writeScenario(t)
	code, stdout, stderr := runLadder("scenario", "validate", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "scenario " + path + " is valid: 1 node group(s), 6 manifest(s) (1 ignored: Service×1), 4 action(s)\n"
	if stdout != want || stderr != "" {
		t.Errorf("stdout %q, stderr %q; want stdout %q", stdout, stderr, want)
	}
}

func TestScenarioValidateBuiltins(t *testing.T) {
	for _, name := range scenario.Builtins() {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := runLadder("scenario", "validate", name)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr: %s", code, stderr)
			}
			if !strings.HasPrefix(stdout, "scenario "+name+" is valid: ") {
				t.Errorf("stdout: %q", stdout)
			}
		})
	}
	code, stdout, stderr := runLadder("scenario", "validate", "karpenter-drift")
	want := "scenario karpenter-drift is valid: 1 node group(s), 12 manifest(s) (2 ignored: Service×2), 5 action(s)\n"
	if code != 0 || stdout != want || stderr != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}
}

func TestScenarioValidateJSON(t *testing.T) {
	code, stdout, stderr := runLadder("scenario", "validate", "karpenter-drift", "-o", "json")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr: %s", code, stderr)
	}
	want := `{
  "scenario": "karpenter-drift",
  "valid": true,
  "errors": [],
  "warnings": []
}
`
	if stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
	}

	// Invalid: every error in the list, exit 1, one line on stderr.
	path, _ := writeScenario(t,
		edit{"scenario.yaml", `version: "1.30"`, `version: "1.99"`},
		edit{"scenario.yaml", "wait: {for: 5m}", "wait: {}"})
	code, stdout, stderr = runLadder("scenario", "validate", path, "-o", "json")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	var v struct {
		Scenario string   `json:"scenario"`
		Valid    *bool    `json:"valid"`
		Errors   []string `json:"errors"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if v.Scenario != path || v.Valid == nil || *v.Valid || v.Warnings == nil {
		t.Errorf("got %+v", v)
	}
	if len(v.Errors) != 2 { // the version and the wait (an unknown version does not also fail the update after it)
		t.Errorf("errors: %q, want 2", v.Errors)
	}
	for _, e := range v.Errors {
		if !strings.HasPrefix(e, path+":") || strings.Contains(e, "\n") {
			t.Errorf("error %q does not name %s on one line", e, path)
		}
	}
	if want := "error: scenario " + path + " is not valid: 2 error(s)\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}

	// A scenario that does not even parse is reported the same way.
	code, stdout, _ = runLadder("scenario", "validate", "nosuch", "-o", "json")
	if code != 1 || !strings.Contains(stdout, `"valid": false`) || !strings.Contains(stdout, `is neither a built-in scenario`) {
		t.Errorf("exit %d, stdout %s", code, stdout)
	}
}

// Warnings go to stderr, prefixed, and do not fail validation.
func TestScenarioValidateWarnings(t *testing.T) {
	path, _ := writeScenario(t, edit{"manifests/karpenter.yaml", "", `---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: spare
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: []
`})
	code, stdout, stderr := runLadder("scenario", "validate", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, " is valid: ") {
		t.Errorf("stdout: %q", stdout)
	}
	if !strings.HasPrefix(stderr, "warning: "+path+": NodePool \"spare\" has no node group") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr: %q", stderr)
	}
	_, stdout, stderr = runLadder("scenario", "validate", path, "-o", "json")
	if stderr != "" || !strings.Contains(stdout, `"valid": true`) || !strings.Contains(stdout, `NodePool \"spare\" has no node group`) {
		t.Errorf("stdout %s, stderr %q", stdout, stderr)
	}
}

// TestScenarioValidateBadInput breaks the minimal scenario one thing at a
// time. Each must exit 1 without a panic, and each error line must name the
// file (and line, where the decoder knows it), the field and the fix.
func TestScenarioValidateBadInput(t *testing.T) {
	cases := []struct {
		name string
		edit edit
		// The error must be on a line "FILE:LINE: ", FILE relative to the
		// scenario's directory and LINE the line of at in that file (the
		// edited one unless file is set).
		file string
		at   string
		// lineInMessage: the decoder reports the line inside the message
		// ("yaml: line 16") rather than as FILE:LINE.
		lineInMessage bool
		field         string // the field the error names
		hint          string // text that tells the user what to do
		// knownGap: the error does not yet name its field and line; the
		// precise check skips, saying why, until it does (reported to the
		// scenario package's owners). The generic checks still run.
		knownGap string
	}{
		{name: "malformed YAML in the scenario",
			edit:  edit{"scenario.yaml", "zones: [us-west-2a, us-west-2b]", "zones: [us-west-2a, us-west-2b"},
			at:    "zones: [us-west-2a, us-west-2b",
			field: "malformed YAML",
			hint:  "did not find expected ',' or ']'"},
		{name: "malformed YAML in a manifest",
			edit:  edit{"manifests/app.yaml", "kind: Namespace\n", "kind: Namespace\n  bad: [x\n"},
			at:    "  bad: [x",
			field: "malformed YAML",
			hint:  "(fix the YAML syntax)"},
		{name: "unknown field in the scenario",
			edit:  edit{"scenario.yaml", "  nodeGroups:", "  nodeGrups:"},
			at:    "nodeGrups:",
			field: "spec.nodeGrups: unknown field",
			hint:  "(remove it or correct its spelling; see `ladder scenario validate --help`)"},
		{name: "unknown field in a Deployment",
			edit:  edit{"manifests/app.yaml", "  replicas: 1", "  replica: 1"},
			at:    "replica: 1",
			field: "Deployment app/web: spec.replica: unknown field",
			hint:  "(remove it or correct its spelling)"},
		{name: "a field of the wrong type in a Deployment",
			edit:  edit{"manifests/app.yaml", "  replicas: 1", `  replicas: "three"`},
			at:    `replicas: "three"`,
			field: "Deployment app/web: spec.replicas:",
			hint:  "expected an integer"},
		{name: "a kind in the wrong apiVersion",
			edit:  edit{"manifests/app.yaml", "apiVersion: apps/v1\nkind: Deployment", "apiVersion: apps/v2\nkind: Deployment"},
			at:    "apiVersion: apps/v2",
			field: "Deployment: apiVersion: unknown kind",
			hint:  "(Deployment is read as apiVersion apps/v1)"},
		{name: "unknown cluster version lists the known ones",
			edit:  edit{"scenario.yaml", `version: "1.30"`, `version: "1.99"`},
			at:    `version: "1.99"`,
			field: "spec.cluster.version:",
			hint:  `unknown EKS version "1.99" (known: ` + strings.Join(scenario.KnownVersions(), ", ") + ")"},
		{name: "control plane update to n+2",
			edit:  edit{"scenario.yaml", `upgradeControlPlane: {version: "1.31"}`, `upgradeControlPlane: {version: "1.32"}`},
			at:    `upgradeControlPlane: {version: "1.32"}`,
			field: "spec.actions[2].upgradeControlPlane.version:",
			hint:  "EKS updates one minor version at a time (add a step per version)"},
		{name: "unknown instance type of an existing node",
			edit:  edit{"scenario.yaml", "instanceType: m5.large", "instanceType: m5.huge"},
			at:    "instanceType: m5.huge",
			field: "spec.nodeGroups[0].karpenter.nodes[0].instanceType:",
			hint:  "(add it under spec.instanceTypes, or use one of "},
		{name: "a node in a zone the cluster does not have",
			edit:  edit{"scenario.yaml", "zone: us-west-2a", "zone: us-west-2c"},
			at:    "zone: us-west-2c",
			field: "spec.nodeGroups[0].karpenter.nodes[0].zone:",
			hint:  `"us-west-2c" is not one of the cluster's zones (us-west-2a, us-west-2b)`},
		{name: "invalid cron in a NodePool budget",
			edit:  edit{"manifests/karpenter.yaml", `schedule: "0 22 * * *"`, `schedule: "0 9 * *"`},
			at:    `schedule: "0 9 * *"`,
			field: "NodePool default: spec.disruption.budgets[0].schedule:",
			hint:  `(Karpenter evaluates it in UTC; use 5 fields, e.g. "0 9 * * mon-fri")`},
		{name: "a budget schedule without a duration",
			edit:  edit{"manifests/karpenter.yaml", "        duration: 2h\n", ""},
			at:    `      - nodes: "0"`,
			field: "NodePool default: spec.disruption.budgets[0].duration:",
			hint:  "(add how long each window lasts from each schedule hit, e.g. duration: 8h)"},
		{name: "a NodePool referring to a missing EC2NodeClass",
			edit:  edit{"manifests/karpenter.yaml", "        name: default\n      requirements", "        name: missing\n      requirements"},
			at:    "name: missing",
			field: "NodePool default: spec.template.spec.nodeClassRef.name:",
			hint:  "(add its manifest or fix the name)"},
		{name: "an EC2NodeClass AMI id not in the catalog",
			edit:  edit{"manifests/karpenter.yaml", "ami-0f676a166352f02ab", "ami-0123456789abcdef0"},
			at:    "id: ami-0123456789abcdef0",
			field: "EC2NodeClass default: spec.amiSelectorTerms[0].id:",
			hint:  "(declare it under spec.amis in the scenario with its kubernetesVersion)"},
		{name: "a manifest file that does not exist",
			edit:  edit{"scenario.yaml", "file: manifests/app.yaml", "file: manifests/nosuch.yaml"},
			at:    "file: manifests/nosuch.yaml",
			field: "spec.manifests[1].file:",
			hint:  "cannot read manifests/nosuch.yaml: no such file or directory"},
		{name: "a PDB with both minAvailable and maxUnavailable",
			edit:  edit{"manifests/app.yaml", "  minAvailable: 1\n", "  minAvailable: 1\n  maxUnavailable: 1\n"},
			at:    "spec:\n  minAvailable: 1",
			field: "PodDisruptionBudget app/web: spec:",
			hint:  "minAvailable and maxUnavailable cannot be both set (keep one of the two)"},
		{name: "a workload in a namespace no manifest creates",
			edit:  edit{"manifests/app.yaml", "kind: Namespace\nmetadata:\n  name: app\n", "kind: Namespace\nmetadata:\n  name: apps\n"},
			at:    "  namespace: app\nspec:\n  replicas",
			field: "Deployment app/web: metadata.namespace:",
			hint:  `namespace "app" is not created by any manifest (add a Namespace manifest)`},
		{name: "a scale action naming a missing Deployment",
			edit:  edit{"scenario.yaml", "name: web, replicas: 3", "name: nosuch, replicas: 3"},
			at:    "name: nosuch, replicas: 3",
			field: "spec.actions[0].scale.name:",
			hint:  "Deployment app/nosuch is not in the scenario's manifests"},
		{name: "a wait with neither settled nor for",
			edit:  edit{"scenario.yaml", "wait: {for: 5m}", "wait: {}"},
			at:    "wait: {}",
			field: "spec.actions[3].wait:",
			hint:  "set settled: true or for: DURATION"},
		{name: "an action with two verbs",
			edit:  edit{"scenario.yaml", "    - wait: {settled: true}\n", "    - wait: {settled: true}\n      upgradeControlPlane: {version: \"1.31\"}\n"},
			at:    "    - wait: {settled: true}",
			field: "spec.actions[1]:",
			hint:  "set exactly one of scale, apply, patch, upgradeControlPlane, drain, wait"},
		{name: "a field of the wrong type in the scenario",
			edit:  edit{"scenario.yaml", "seed: 1", "seed: one"},
			at:    "seed: one",
			field: "spec.seed:",
			hint:  "wrong type: expected an integer, got string"},
		{name: "a duplicate field in the scenario",
			edit:  edit{"scenario.yaml", "  seed: 1\n", "  seed: 1\n  seed: 2\n"},
			at:    "seed: 2",
			field: "malformed YAML",
			hint:  `key "seed" already set in map`},
		{name: "a duration that is not one",
			edit:  edit{"scenario.yaml", "timeLimit: 1h", "timeLimit: an hour"},
			at:    "timeLimit: an hour",
			field: "spec.timeLimit:",
			hint:  `"an hour" is not a duration such as "90s" or "3h57m"`},
		{name: "a start time that is not one",
			edit:  edit{"scenario.yaml", `start: "2026-03-30T10:00:00Z"`, `start: "monday"`},
			at:    `start: "monday"`,
			field: "spec.start:",
			hint:  "RFC 3339"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path, files := writeScenario(t, tc.edit)
			dir := filepath.Dir(path)
			code, stdout, stderr := runLadder("scenario", "validate", path)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if stdout != "" {
				t.Errorf("stdout: %q", stdout)
			}
			if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
				t.Fatalf("stderr has a panic:\n%s", stderr)
			}
			if !strings.HasPrefix(stderr, "error: ") || !strings.HasSuffix(stderr, "\n") {
				t.Errorf("stderr %q: want error lines", stderr)
			}
			// Every line names a file of the scenario.
			for _, l := range stderrLines(stderr) {
				if !strings.HasPrefix(l, dir+string(filepath.Separator)) {
					t.Errorf("error line does not name a file in %s: %q", dir, l)
				}
			}
			file := tc.file
			if file == "" {
				file = tc.edit.file
			}
			name := filepath.Join(dir, filepath.FromSlash(file))
			line := lineOf(t, files[file], tc.at)
			prefix := fmt.Sprintf("%s:%d: ", name, line)
			if tc.lineInMessage {
				prefix = name + ": "
			}
			var found string
			for _, l := range stderrLines(stderr) {
				if strings.HasPrefix(l, prefix) && strings.Contains(l, tc.field) {
					found = l
					break
				}
			}
			if found == "" && tc.knownGap != "" {
				t.Skipf("known gap: %s; stderr: %s", tc.knownGap, stderr)
			}
			if found == "" {
				t.Fatalf("no error line starts with %q and names %q; stderr:\n%s", prefix, tc.field, stderr)
			}
			if tc.lineInMessage && !strings.Contains(found, fmt.Sprintf("line %d:", line)) {
				t.Errorf("%q does not name line %d", found, line)
			}
			if !strings.Contains(found, tc.hint) {
				t.Errorf("%q\ndoes not say %q", found, tc.hint)
			}
			// rehearse refuses the same scenario with the same errors.
			code, rstdout, rstderr := runLadder("rehearse", "--scenario", path)
			if code != 1 || rstdout != "" || rstderr != stderr {
				t.Errorf("rehearse: exit %d, stdout %q, stderr:\n%s\nwant the validate errors", code, rstdout, rstderr)
			}
		})
	}
}

// Every problem is reported, not only the first.
func TestScenarioValidateReportsEveryProblem(t *testing.T) {
	path, _ := writeScenario(t,
		edit{"scenario.yaml", "zone: us-west-2a", "zone: us-west-2c"},
		edit{"scenario.yaml", "wait: {for: 5m}", "wait: {}"},
		edit{"manifests/karpenter.yaml", "ami-0f676a166352f02ab", "ami-0123456789abcdef0"},
		edit{"manifests/app.yaml", "  minAvailable: 1\n", "  minAvailable: 1\n  maxUnavailable: 1\n"})
	code, _, stderr := runLadder("scenario", "validate", path)
	if code != 1 {
		t.Errorf("exit %d", code)
	}
	lines := stderrLines(stderr)
	for _, want := range []string{".zone:", ".wait:", "spec.amiSelectorTerms[0].id:", "PodDisruptionBudget app/web: spec:"} {
		n := 0
		for _, l := range lines {
			if strings.Contains(l, want) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d lines name %q, want 1; stderr:\n%s", n, want, stderr)
		}
	}
	if len(lines) != 4 {
		t.Errorf("%d error lines, want 4:\n%s", len(lines), stderr)
	}
}

func TestScenarioValidateUsage(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"scenario", "validate"}, "error: ladder scenario validate needs a scenario: a file or a built-in name (" + builtinList() + ")\n"},
		{[]string{"scenario", "validate", "a.yaml", "b.yaml"}, "error: ladder scenario validate takes one scenario, got 2: a.yaml b.yaml\n"},
		{[]string{"scenario", "validate", "nosuch"}, `error: "nosuch" is neither a built-in scenario (` + builtinList() + ") nor a file\n"},
		{[]string{"scenario", "validate", "/nonexistent/scenario.yaml"}, "error: reading scenario: open /nonexistent/scenario.yaml: no such file or directory\n"},
		{[]string{"scenario", "validate", scenario.Default, "-o", "yaml"}, "error: -o \"yaml\": use text or json\n"},
		{[]string{"scenario", "nosuch"}, "error: unknown command \"nosuch\" for \"ladder scenario\" (use validate, generate, list, show or instance-types; see ladder scenario --help)\n"},
		{[]string{"scenario", "show"}, "error: ladder scenario show takes one built-in scenario name (" + builtinList() + ")\n"},
		{[]string{"scenario", "show", "nosuch"}, `error: no built-in scenario "nosuch" (built-in: ` + builtinList() + ")\n"},
		{[]string{"scenario", "instance-types", "z9"}, "error: no catalogued instance type matches z9 (filter by family, e.g. m5, or by type, e.g. m5.large)\n"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runLadder(tc.args...)
			if code != 1 || stdout != "" || stderr != tc.want {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, tc.want)
			}
		})
	}
}

func TestScenarioGenerate(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
	}{
		{"defaults", []string{"--nodes", "6", "--pods-per-node", "10"}},
		{"seeded, another version, type and budget", []string{"--nodes", "7", "--pods-per-node", "15", "--seed", "9",
			"--version", "1.33", "--instance-type", "m5.2xlarge", "--budget", "2"}},
		{"no drift, namespaces", []string{"--nodes", "4", "--pods-per-node", "5", "--no-drift", "--namespaces", "3"}},
		{"percent budget", []string{"--nodes", "10", "--pods-per-node", "20", "--budget", "25%"}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"scenario", "generate"}, tc.args...)
			code, stdout, stderr := runLadder(args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			code, again, _ := runLadder(args...)
			if code != 0 || again != stdout {
				t.Errorf("a second run differs")
			}
			// -o FILE writes the same bytes.
			file := filepath.Join(dir, fmt.Sprintf("gen-%d.yaml", i))
			code, out, stderr := runLadder(append(args, "-o", file)...)
			if code != 0 || stderr != "" {
				t.Fatalf("-o: exit %d: %s", code, stderr)
			}
			if want := "wrote " + file + " (check it with: ladder scenario validate " + file + ")\n"; out != want {
				t.Errorf("stdout %q, want %q", out, want)
			}
			data, err := os.ReadFile(file)
			if err != nil || string(data) != stdout {
				t.Fatalf("file differs from stdout (%v)", err)
			}
			code, out, stderr = runLadder("scenario", "validate", file)
			if code != 0 || stderr != "" || !strings.Contains(out, " is valid: 1 node group(s), ") {
				t.Errorf("validate: exit %d, stdout %q, stderr:\n%s", code, out, stderr)
			}
		})
	}
}

// --mix writes a cluster of every node type that validates, the same bytes
// each time, upgraded by the playbook.
func TestScenarioGenerateMix(t *testing.T) {
	args := []string{"scenario", "generate", "--nodes", "20", "--pods-per-node", "10", "--seed", "4", "--mix"}
	code, stdout, stderr := runLadder(args...)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, again, _ := runLadder(args...); again != stdout {
		t.Errorf("a second run differs")
	}
	for _, want := range []string{"--mix\n", "type: karpenter", "type: managed", "amiType: CUSTOM", "type: self-managed", "terminationHook: true",
		"type: fargate", "- name: aws-ebs-csi-driver", "alias: al2023@latest", "key: eks.amazonaws.com/compute-type, operator: NotIn", "  upgrade:\n    to: \"1.31\""} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	file := filepath.Join(t.TempDir(), "mix.yaml")
	if code, _, stderr := runLadder(append(args, "-o", file)...); code != 0 {
		t.Fatalf("-o: exit %d: %s", code, stderr)
	}
	code, out, stderr := runLadder("scenario", "validate", file)
	if code != 0 || !strings.Contains(out, " is valid: 5 node group(s), ") || !strings.Contains(out, ", 0 action(s)") {
		t.Errorf("validate: exit %d, stdout %q, stderr:\n%s", code, out, stderr)
	}
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if l != "" && !strings.Contains(l, "Fargate") {
			t.Errorf("validate warns: %s", l)
		}
	}
}

// rehearseGenerated generates a scenario with the generate flags given,
// rehearses it and returns the JSON report.
func rehearseGenerated(t *testing.T, flags ...string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "generated.yaml")
	if code, _, stderr := runLadder(append([]string{"scenario", "generate", "-o", file}, flags...)...); code != 0 {
		t.Fatalf("generate: %s", stderr)
	}
	code, stdout, stderr := runLadder("rehearse", "--scenario", file, "-o", "json")
	if code != 0 {
		t.Fatalf("rehearse: exit %d: %s", code, stderr)
	}
	return stdout
}

// A small --mix cluster rehearses to success: the playbook upgrades the
// control plane, the add-ons and every node group, each by its own
// mechanism, and every node ends at the target.
func TestScenarioGenerateMixRehearses(t *testing.T) {
	stdout := rehearseGenerated(t, "--nodes", "10", "--pods-per-node", "10", "--mix")
	var rep struct {
		Status string
		Phases []struct{ Kind, Name, Strategy, Status string }
		Nodes  []struct{ Name, Group, Version string }
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Status != "succeeded" {
		t.Fatalf("status %s", rep.Status)
	}
	var groups []string
	for _, p := range rep.Phases {
		if p.Status != "succeeded" {
			t.Errorf("phase %s %s: %s", p.Kind, p.Name, p.Status)
		}
		if p.Kind == "node-group" {
			groups = append(groups, p.Name+"("+p.Strategy+")")
		}
	}
	if got, want := strings.Join(groups, " "), "managed-1(in-place) custom-ami-1(in-place) karpenter(drift) self-managed(instance-refresh) fargate(restart)"; got != want {
		t.Errorf("node-group phases %s, want %s", got, want)
	}
	for _, n := range rep.Nodes {
		if !strings.HasPrefix(n.Version, "v1.31.") {
			t.Errorf("node %s of %s at %s after the upgrade", n.Name, n.Group, n.Version)
		}
	}
}

// A small generated scenario rehearses to success: every node drifts and is
// replaced.
func TestScenarioGenerateRehearses(t *testing.T) {
	stdout := rehearseGenerated(t, "--nodes", "4", "--pods-per-node", "10", "--budget", "1")
	var rep struct {
		Status string
		Groups []struct {
			Replaced                 int `json:"replaced"`
			MaxConcurrentDisruptions int `json:"maxConcurrentDisruptions"`
		}
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Status != "succeeded" || len(rep.Groups) != 1 || rep.Groups[0].Replaced != 4 || rep.Groups[0].MaxConcurrentDisruptions != 1 {
		t.Errorf("got %+v; want 4 nodes replaced one at a time", rep)
	}
}

func TestScenarioGenerateBadFlags(t *testing.T) {
	base := []string{"scenario", "generate", "--nodes", "3", "--pods-per-node", "10"}
	cases := []struct {
		name string
		args []string
		want string // a prefix of the one stderr line
	}{
		{"zero nodes", []string{"scenario", "generate", "--nodes", "0", "--pods-per-node", "10"}, "error: --nodes 0: use 1 to 5000"},
		{"missing --nodes", []string{"scenario", "generate", "--pods-per-node", "10"}, `error: required flag(s) "nodes" not set`},
		{"--nodes not a number", []string{"scenario", "generate", "--nodes", "many", "--pods-per-node", "10"}, `error: invalid argument "many" for "--nodes" flag`},
		{"too many pods per node", []string{"scenario", "generate", "--nodes", "3", "--pods-per-node", "201"}, "error: --pods-per-node 201: use 1 to 200"},
		{"more pods than the type holds", append(base[:4:4], "--pods-per-node", "100"), "error: --pods-per-node 100: m5.xlarge holds at most 58 pods, 3 of them daemons"},
		{"unknown version", append(base, "--version", "1.99"), `error: --version "1.99": use a Kubernetes minor that has an AL2023 AMI, as does the minor before it (1.`},
		{"no version", append(base, "--version", "latest"), `error: --version "latest": use a Kubernetes minor`},
		{"unknown instance type", append(base, "--instance-type", "m5.huge"), `error: --instance-type "m5.huge" is not in the catalog (list them with: ladder scenario instance-types)`},
		{"bad budget", append(base, "--budget", "150%"), `error: --budget "150%": use a node count such as "5" or a percentage from "0%" to "100%"`},
		{"negative namespaces", append(base, "--namespaces", "-1"), "error: --namespaces -1: must be 0 (one per 50 Deployments) or more"},
		{"unwritable output", append(base, "-o", "/nonexistent/dir/gen.yaml"), "error: -o /nonexistent/dir/gen.yaml: no such directory /nonexistent/dir"},
		{"a stray argument", append(base, "extra"), `error: unknown command "extra" for "ladder scenario generate"`},
		{"--mix with --no-drift", append(base[:4:4], "--pods-per-node", "10", "--mix", "--no-drift"), "error: --no-drift cannot be combined with --mix"},
		{"--mix with too few nodes", append(base, "--mix"), "error: --nodes 3: --mix needs 10 or more, to share them among Karpenter (45%), managed (30%), custom-AMI managed (10%) and self-managed (15%) groups"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runLadder(tc.args...)
			if code != 1 || stdout != "" {
				t.Errorf("exit %d, stdout %q; want exit 1 and nothing", code, stdout)
			}
			if !strings.HasPrefix(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr %q, want one line starting %q", stderr, tc.want)
			}
		})
	}
}

func TestScenarioList(t *testing.T) {
	code, stdout, stderr := runLadder("scenario", "list")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if !regexp.MustCompile(`^NAME +DESCRIPTION$`).MatchString(lines[0]) {
		t.Errorf("header %q", lines[0])
	}
	names := scenario.Builtins()
	if len(lines) != len(names)+1 {
		t.Fatalf("%d rows for %d built-in scenarios:\n%s", len(lines)-1, len(names), stdout)
	}
	col := strings.Index(lines[0], "DESCRIPTION")
	for i, name := range names {
		sc, err := scenario.LoadBuiltin(name)
		if err != nil {
			t.Fatal(err)
		}
		want := name + strings.Repeat(" ", col-len(name)) + sc.Metadata.Description
		if lines[i+1] != want {
			t.Errorf("row %q, want %q", lines[i+1], want)
		}
	}
}

func TestScenarioShow(t *testing.T) {
	code, stdout, stderr := runLadder("scenario", "show", "karpenter-drift")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	src, err := scenario.BuiltinSource("karpenter-drift")
	if err != nil {
		t.Fatal(err)
	}
	// The scenario exactly as built in, then each manifest file.
	if !strings.Contains(stdout, "# file: scenario.yaml\n"+string(src)) {
		t.Errorf("the scenario's YAML is not shown under # file: scenario.yaml:\n%s", stdout)
	}
	sc, err := scenario.LoadBuiltin("karpenter-drift")
	if err != nil {
		t.Fatal(err)
	}
	last := 0
	for _, m := range sc.Spec.Manifests {
		i := strings.Index(stdout, "# file: "+m.File+"\n")
		if i < last {
			t.Errorf("# file: %s missing or out of order", m.File)
		}
		last = i
	}
	for _, want := range []string{"kind: NodePool", "kind: EC2NodeClass", "id: ami-0f676a166352f02ab", "name: checkout-redis", "kind: DaemonSet"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// show --to writes files that validate and rehearse as the built-in does,
// and never overwrites.
func TestScenarioShowTo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my-cluster")
	code, stdout, stderr := runLadder("scenario", "show", scenario.Default, "--to", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(stdout, "wrote "+filepath.Join(dir, "scenario.yaml")+"\n") {
		t.Errorf("stdout: %q", stdout)
	}
	path := filepath.Join(dir, "scenario.yaml")
	if code, out, stderr := runLadder("scenario", "validate", path); code != 0 {
		t.Fatalf("validate the copy: exit %d: %s%s", code, out, stderr)
	}
	_, want, _ := runLadder("rehearse", "-o", "json")
	code, got, stderr := runLadder("rehearse", "--scenario", path, "-o", "json")
	if code != 0 {
		t.Fatalf("rehearse the copy: exit %d: %s", code, stderr)
	}
	// The copy lacks only the ignored Services, whose note is the one difference.
	strip := regexp.MustCompile(`(?m)^  "notes": \[\n(    .*\n)*  \],\n`)
	if strip.ReplaceAllString(got, "") != strip.ReplaceAllString(want, "") {
		t.Errorf("the copy rehearses differently from the built-in scenario")
	}

	before, _ := os.ReadFile(path)
	code, stdout, stderr = runLadder("scenario", "show", scenario.Default, "--to", dir)
	if code != 1 || stdout != "" || !strings.HasPrefix(stderr, "error: --to "+dir+": "+path+" already exists") {
		t.Errorf("second --to: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("the second --to changed %s", path)
	}
}

func TestScenarioInstanceTypes(t *testing.T) {
	code, stdout, stderr := runLadder("scenario", "instance-types", "m5.large", "c5")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if !regexp.MustCompile(`^NAME +ARCH +VCPU +MEMORY +MAX-PODS +ON-DEMAND +SPOT$`).MatchString(lines[0]) {
		t.Errorf("header %q", lines[0])
	}
	if !regexp.MustCompile(`(?m)^m5\.large +amd64 +2 +8192Mi +29 +\$0\.0960 `).MatchString(stdout) || !strings.Contains(stdout, "\nc5.large ") {
		t.Errorf("stdout:\n%s", stdout)
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "m5.large ") && !strings.HasPrefix(l, "c5.") {
			t.Errorf("row %q matches neither filter", l)
		}
	}
	code, stdout, _ = runLadder("scenario", "instance-types", "m5.large", "-o", "json")
	var rows []map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &rows) != nil || len(rows) != 1 || rows[0]["maxPods"] != float64(29) {
		t.Errorf("exit %d, JSON %s", code, stdout)
	}
}

// --help teaches: what the command does, the scenario format and examples.
func TestScenarioHelp(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"scenario", "--help"}, []string{"docs/scenario.md", "spec.nodeGroups[]", "Available Commands:", "validate", "generate", "list", "show", "Examples:"}},
		{[]string{"scenario"}, []string{"Usage:", "Available Commands:"}},
		{[]string{"scenario", "validate", "--help"}, []string{"docs/scenario.md", "Exit status: 0 valid, 1 invalid", "one line each", "Examples:", "-o json"}},
		{[]string{"scenario", "generate", "--help"}, []string{"--pods-per-node", "--no-drift", "Examples:", "byte-identical", "--mix", "self-managed", "Fargate", "--nodes 5000 --pods-per-node 20 --mix"}},
		{[]string{"scenario", "list", "--help"}, []string{"ladder scenario show NAME", "Examples:"}},
		{[]string{"scenario", "show", "--help"}, []string{"# file: PATH", "--to", "Examples:"}},
		{[]string{"scenario", "instance-types", "--help"}, []string{"spec.instanceTypes", "Examples:"}},
		{[]string{"rehearse", "--help"}, []string{"Exit status: 0 succeeded, 2 violated, failed or stuck, 1", "Examples:"}},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runLadder(tc.args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("help lacks %q:\n%s", w, stdout)
				}
			}
		})
	}
}
