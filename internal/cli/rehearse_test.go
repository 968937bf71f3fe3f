package cli

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The seed's 1.31 node version, as kubectl get nodes shows it.
const seedNodeVersion = "v1.31.14-eks-ecaa3a6"

// TestRehearseDefault: `ladder rehearse` with no arguments rehearses the
// workshop to the control plane's next minor.
func TestRehearseDefault(t *testing.T) {
	code, stdout, stderr := runLadder("rehearse")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr: %s", code, stderr)
	}
	for _, want := range []string{"Scenario workshop (seed 1): succeeded after ", "\nUPGRADE 1.30 → 1.31\n", "\nADD-ONS\n",
		"\nfp-profile ", " fargate ", " restart\n", " blue-green\n", " instance-refresh\n", " drift\n", " in-place\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

func TestRehearseKarpenterDriftText(t *testing.T) {
	code, stdout, stderr := runLadder("rehearse", "--scenario", "karpenter-drift")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr: %s", code, stderr)
	}
	if first := strings.SplitN(stdout, "\n", 2)[0]; !strings.HasPrefix(first, "Scenario karpenter-drift (seed 1): succeeded after ") {
		t.Errorf("first line %q", first)
	}
	_, nodes, ok := strings.Cut(stdout, "\nNODES (kubectl get nodes)\n")
	if !ok {
		t.Fatalf("no NODES table:\n%s", stdout)
	}
	nodes, _, _ = strings.Cut(nodes, "\n\n")
	rows := strings.Split(nodes, "\n")
	if !regexp.MustCompile(`^NAME +STATUS +ROLES +AGE +VERSION( |$)`).MatchString(rows[0]) {
		t.Errorf("NODES header %q, want kubectl's NAME STATUS ROLES AGE VERSION", rows[0])
	}
	row := regexp.MustCompile(`^ip-[0-9-]+\.us-west-2\.compute\.internal +Ready +<none> +[0-9]+[smhd]\S* +` + regexp.QuoteMeta(seedNodeVersion) + ` `)
	if len(rows) != 3 {
		t.Fatalf("%d nodes, want 2:\n%s", len(rows)-1, nodes)
	}
	for _, r := range rows[1:] {
		if !row.MatchString(r) {
			t.Errorf("node row %q, want a Ready %s node", r, seedNodeVersion)
		}
	}
	for _, section := range []string{"\nTIMELINE (virtual time since 2026-03-30T10:00:00Z)\n", "\nWORKLOADS\n", "\nNODE GROUPS\n"} {
		if !strings.Contains(stdout, section) {
			t.Errorf("no %q section", strings.TrimSpace(section))
		}
	}
}

// rehearseJSON runs ladder rehearse -o json with args and decodes the report.
func rehearseJSON(t *testing.T, wantCode int, args ...string) (map[string]any, string) {
	t.Helper()
	code, stdout, stderr := runLadder(append([]string{"rehearse", "-o", "json"}, args...)...)
	if code != wantCode {
		t.Fatalf("exit %d, want %d; stderr: %s", code, wantCode, stderr)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	return rep, stdout
}

// checkFields asserts obj has each field with the JSON type given:
// "string", "number", "bool", "array" or "object".
func checkFields(t *testing.T, where string, obj any, fields map[string]string) {
	t.Helper()
	m, ok := obj.(map[string]any)
	if !ok {
		t.Errorf("%s: not an object: %v", where, obj)
		return
	}
	for f, typ := range fields {
		v, ok := m[f]
		if !ok {
			t.Errorf("%s: no field %q", where, f)
			continue
		}
		if got := jsonType(v); got != typ {
			t.Errorf("%s.%s: %s, want %s", where, f, got, typ)
		}
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case nil:
		return "null"
	}
	return "unknown"
}

func list(t *testing.T, rep map[string]any, field string) []any {
	t.Helper()
	l, ok := rep[field].([]any)
	if !ok {
		t.Fatalf("%s is %s, want an array", field, jsonType(rep[field]))
	}
	return l
}

func TestRehearseKarpenterDriftJSON(t *testing.T) {
	rep, _ := rehearseJSON(t, 0, "--scenario", "karpenter-drift")
	checkFields(t, "report", rep, map[string]string{
		"scenario": "string", "status": "string", "makespanSeconds": "number", "controlPlane": "object",
		"nodes": "array", "workloads": "array", "groups": "array", "blocked": "array", "events": "array",
	})
	if rep["scenario"] != "karpenter-drift" || rep["status"] != "succeeded" {
		t.Errorf("scenario %v, status %v", rep["scenario"], rep["status"])
	}
	if ms, _ := rep["makespanSeconds"].(float64); ms <= 0 {
		t.Errorf("makespanSeconds %v", rep["makespanSeconds"])
	}
	checkFields(t, "controlPlane", rep["controlPlane"], map[string]string{"version": "string"})
	if v := rep["controlPlane"].(map[string]any)["version"]; v != "1.31" {
		t.Errorf("controlPlane.version %v", v)
	}

	nodes := list(t, rep, "nodes")
	if len(nodes) != 2 {
		t.Errorf("%d nodes, want 2", len(nodes))
	}
	for _, n := range nodes {
		checkFields(t, "nodes[]", n, map[string]string{"name": "string", "group": "string", "groupType": "string", "version": "string", "ready": "bool"})
		if m, ok := n.(map[string]any); ok && (m["version"] != seedNodeVersion || m["ready"] != true || m["group"] != "default" || m["groupType"] != "karpenter") {
			t.Errorf("node %v, want a ready %s node of group default (karpenter)", m, seedNodeVersion)
		}
	}
	workloads := list(t, rep, "workloads")
	if len(workloads) != 5 {
		t.Errorf("%d workloads, want 5 (2 Deployments, 3 DaemonSets)", len(workloads))
	}
	for _, w := range workloads {
		checkFields(t, "workloads[]", w, map[string]string{"namespace": "string", "name": "string", "kind": "string",
			"desired": "number", "minReady": "number", "zeroReadySeconds": "number", "pdbViolations": "number"})
	}
	groups := list(t, rep, "groups")
	if len(groups) != 1 {
		t.Errorf("%d groups, want 1", len(groups))
	}
	for _, g := range groups {
		checkFields(t, "groups[]", g, map[string]string{"name": "string", "type": "string", "replaced": "number", "maxConcurrentDisruptions": "number"})
		if m, ok := g.(map[string]any); ok && (m["replaced"] != float64(2) || m["maxConcurrentDisruptions"] != float64(1)) {
			t.Errorf("group %v: want 2 nodes replaced one at a time", m)
		}
	}
	for _, b := range list(t, rep, "blocked") {
		checkFields(t, "blocked[]", b, map[string]string{"node": "string", "pod": "string", "outcome": "string"})
	}

	// node, group and reason are omitted when empty, but each is on some
	// event, and a string wherever it is.
	events := list(t, rep, "events")
	if len(events) == 0 {
		t.Fatal("no events")
	}
	seen := map[string]bool{}
	last := -1.0
	for i, e := range events {
		checkFields(t, "events[]", e, map[string]string{"t": "number", "type": "string", "message": "string"})
		m, _ := e.(map[string]any)
		for _, f := range []string{"node", "group", "reason"} {
			if v, ok := m[f]; ok {
				seen[f] = true
				if jsonType(v) != "string" {
					t.Errorf("events[%d].%s is %s, want string", i, f, jsonType(v))
				}
			}
		}
		if tt, _ := m["t"].(float64); tt < last {
			t.Errorf("events[%d].t %v goes back in time from %v", i, tt, last)
		} else {
			last = tt
		}
	}
	for _, f := range []string{"node", "group", "reason"} {
		if !seen[f] {
			t.Errorf("no event has %q", f)
		}
	}
}

// The same scenario and seed give byte-identical output; another seed
// gives another run that still succeeds.
func TestRehearseDeterministic(t *testing.T) {
	_, a := rehearseJSON(t, 0)
	_, b := rehearseJSON(t, 0)
	if a != b {
		t.Error("two runs of the default scenario differ")
	}
	_, text1, _ := runLadder("rehearse")
	_, text2, _ := runLadder("rehearse")
	if text1 != text2 {
		t.Error("two text runs differ")
	}

	rep, seven := rehearseJSON(t, 0, "--seed", "7")
	if seven == a {
		t.Error("--seed 7 gives the same output as seed 1")
	}
	if rep["status"] != "succeeded" || rep["seed"] != float64(7) {
		t.Errorf("--seed 7: status %v, seed %v", rep["status"], rep["seed"])
	}
	if _, again := rehearseJSON(t, 0, "--seed", "7"); again != seven {
		t.Error("two runs with --seed 7 differ")
	}
}

// unschedulable adds a Deployment whose one pod no node and no NodePool can
// take, so the rehearsal is stuck.
func unschedulable(name, podSpec string) edit {
	return edit{"manifests/app.yaml", "", `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + name + `
  namespace: app
spec:
  replicas: 1
  selector:
    matchLabels: {app: ` + name + `}
  template:
    metadata:
      labels: {app: ` + name + `}
    spec:
` + podSpec}
}

// A pod that fits nowhere: the rehearsal stops at its time limit, stuck,
// exit 2, and says which pod and why, in the scheduler's words.
func TestRehearseStuckPod(t *testing.T) {
	cases := []struct {
		name    string
		edit    edit
		pod     string
		why     []string
		timeArg []string
		limit   float64
	}{
		{name: "500 CPUs",
			edit: unschedulable("huge", `      containers:
        - name: huge
          image: nginx:1.27
          resources:
            requests: {cpu: "500"}
`),
			pod:   "pod app/huge-",
			why:   []string{"0/1 nodes are available: 1 Insufficient cpu.", "no instance type satisfied resources {cpu=500000m"},
			limit: 3600},
		{name: "a nodeSelector nothing satisfies, with --time-limit",
			edit: unschedulable("picky", `      nodeSelector: {team: nowhere}
      containers:
        - name: picky
          image: nginx:1.27
`),
			pod:     "pod app/picky-",
			why:     []string{"0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.", `label "team" does not have known values`},
			timeArg: []string{"--time-limit", "20m"},
			limit:   1200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path, _ := writeScenario(t, tc.edit)
			args := append([]string{"rehearse", "--scenario", path}, tc.timeArg...)

			// Never a hang: the run is virtual time; give it a wall-clock bound.
			type result struct {
				code           int
				stdout, stderr string
			}
			done := make(chan result, 1)
			go func() {
				code, stdout, stderr := runLadder(append(args, "-o", "json")...)
				done <- result{code, stdout, stderr}
			}()
			var res result
			select {
			case res = <-done:
			case <-time.After(60 * time.Second):
				t.Fatal("ladder rehearse did not return within 60s of wall-clock time")
			}
			if res.code != 2 {
				t.Fatalf("exit %d, want 2; stderr: %s", res.code, res.stderr)
			}
			if res.stderr != "error: rehearsal stuck\n" {
				t.Errorf("stderr %q", res.stderr)
			}
			var rep struct {
				Status           string   `json:"status"`
				MakespanSeconds  float64  `json:"makespanSeconds"`
				TimeLimitSeconds float64  `json:"timeLimitSeconds"`
				Stuck            []string `json:"stuck"`
			}
			if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Status != "stuck" || rep.TimeLimitSeconds != tc.limit || rep.MakespanSeconds > rep.TimeLimitSeconds {
				t.Errorf("status %s after %vs, limit %vs; want stuck within %vs", rep.Status, rep.MakespanSeconds, rep.TimeLimitSeconds, tc.limit)
			}
			var reason string
			for _, s := range rep.Stuck {
				if strings.HasPrefix(s, tc.pod) {
					reason = s
				}
			}
			if reason == "" {
				t.Fatalf("no stuck reason names %s: %q", tc.pod, rep.Stuck)
			}
			for _, w := range tc.why {
				if !strings.Contains(reason, w) {
					t.Errorf("stuck reason %q\ndoes not say %q", reason, w)
				}
			}

			// The text report says the same, up front.
			code, stdout, _ := runLadder(args...)
			if code != 2 || !strings.Contains(stdout, "  stuck: "+reason+"\n") || !strings.Contains(strings.SplitN(stdout, "\n", 2)[0], ": stuck after ") {
				t.Errorf("text: exit %d:\n%s", code, stdout)
			}
		})
	}
}

func TestRehearseBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string // the whole of stderr
	}{
		{"an unknown scenario lists the built-in ones", []string{"rehearse", "--scenario", "nosuch"},
			`error: "nosuch" is neither a built-in scenario (` + builtinList() + ") nor a file\n"},
		{"a missing scenario file", []string{"rehearse", "--scenario", "/nonexistent/scenario.yaml"},
			"error: reading scenario: open /nonexistent/scenario.yaml: no such file or directory\n"},
		{"-o yaml", []string{"rehearse", "-o", "yaml"}, "error: -o \"yaml\": use text or json\n"},
		{"a stray argument", []string{"rehearse", "karpenter-drift"}, `error: unknown command "karpenter-drift" for "ladder rehearse"` + "\n"},
		{"a bad --seed", []string{"rehearse", "--seed", "-1"}, `error: invalid argument "-1" for "--seed" flag: strconv.ParseUint: parsing "-1": invalid syntax` + "\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runLadder(tc.args...)
			if code != 1 || stdout != "" {
				t.Errorf("exit %d, stdout %q; want exit 1 and nothing", code, stdout)
			}
			if stderr != tc.want {
				t.Errorf("stderr %q, want %q", stderr, tc.want)
			}
		})
	}
}

// An n+2 control-plane update is caught before the run: the scenario could
// not run, exit 1, with the validation error.
func TestRehearseInvalidScenario(t *testing.T) {
	path, files := writeScenario(t, edit{"scenario.yaml", `upgradeControlPlane: {version: "1.31"}`, `upgradeControlPlane: {version: "1.32"}`})
	code, stdout, stderr := runLadder("rehearse", "--scenario", path)
	line := lineOf(t, files["scenario.yaml"], `version: "1.32"`)
	want := "error: " + path + ":" + strconv.Itoa(line) + ": spec.actions[2].upgradeControlPlane.version: 1.32 is not one minor after 1.30: EKS updates one minor version at a time (add a step per version)\n"
	if code != 1 || stdout != "" || stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}
}
