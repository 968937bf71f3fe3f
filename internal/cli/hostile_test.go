package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// managedGroup adds an EKS managed node group with the given updateConfig
// to the minimal scenario, after its Karpenter group.
func managedGroup(updateConfig string) edit {
	return edit{"scenario.yaml", "  manifests:\n", fmt.Sprintf(`    - name: mng
      type: managed
      managed: {instanceTypes: [m5.large], desired: 2, max: 3, updateConfig: %s}
  manifests:
`, updateConfig)}
}

// appendAction adds an action at the end of the minimal scenario's script.
func appendAction(action string) edit {
	return edit{"scenario.yaml", "    - wait: {for: 5m}\n", "    - wait: {for: 5m}\n    - " + action + "\n"}
}

// TestHostileScenarios feeds each command that reads a scenario — scenario
// validate, rehearse, inventory --scenario and check --scenario — a
// scenario that is wrong in one way, and wants the same single line from
// each: FILE:LINE, the field, what to do; never a panic, a hang, an
// enormous line or a rehearsal that starts anyway.
func TestHostileScenarios(t *testing.T) {
	const pvc = `---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  namespace: app
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: nope
  resources:
    requests: {storage: 1Gi}
`
	const secondPDB = `---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web # again
  namespace: app
spec:
  maxUnavailable: 1
  selector:
    matchLabels: {app: web}
`
	cases := []struct {
		name  string
		edits []edit
		file  string // the file the error points into (default: the first edit's)
		at    string // text on the line the error points at
		// lineOffset is added to at's line: a YAML parser names the
		// second of two repeated keys.
		lineOffset int
		field      string
		hint       string
	}{
		{name: "negative replicas",
			edits: []edit{{"manifests/app.yaml", "  replicas: 1", "  replicas: -3"}},
			at:    "replicas: -3", field: "Deployment app/web: spec.replicas:", hint: "-3: must be greater than or equal to 0"},
		{name: "replicas beyond what a cluster runs",
			edits: []edit{{"manifests/app.yaml", "  replicas: 1", "  replicas: 100000000"}},
			at:    "replicas: 100000000", field: "Deployment app/web: spec.replicas:", hint: "more than the 150000 pods a cluster may run"},
		{name: "negative PDB minAvailable",
			edits: []edit{{"manifests/app.yaml", "  minAvailable: 1", "  minAvailable: -1"}},
			at:    "minAvailable: -1", field: "PodDisruptionBudget app/web: spec.minAvailable:", hint: "must be greater than or equal to 0"},
		{name: "PDB minAvailable over 100%",
			edits: []edit{{"manifests/app.yaml", "  minAvailable: 1", `  minAvailable: "150%"`}},
			at:    `minAvailable: "150%"`, field: "PodDisruptionBudget app/web: spec.minAvailable:", hint: "must not be greater than 100%"},
		{name: "the same object twice",
			edits: []edit{{"manifests/app.yaml", "", secondPDB}},
			at:    "name: web # again", field: "PodDisruptionBudget app/web: metadata.name:", hint: "PodDisruptionBudget app/web already exists (first at "},
		{name: "both maxUnavailable and maxUnavailablePercentage",
			edits: []edit{managedGroup("{maxUnavailable: 1, maxUnavailablePercentage: 33}")},
			at:    "managed: {instanceTypes", field: "spec.nodeGroups[1].managed.updateConfig:", hint: "set maxUnavailable or maxUnavailablePercentage, not both"},
		{name: "maxUnavailablePercentage over 100",
			edits: []edit{managedGroup("{maxUnavailablePercentage: 150}")},
			at:    "managed: {instanceTypes", field: "spec.nodeGroups[1].managed.updateConfig.maxUnavailablePercentage:", hint: "150 is outside 1-100"},
		{name: "maxUnavailable 0",
			edits: []edit{managedGroup("{maxUnavailable: 0}")},
			at:    "managed: {instanceTypes", field: "spec.nodeGroups[1].managed.updateConfig.maxUnavailable:", hint: "0 is outside 1-100"},
		{name: "absurd node count",
			edits: []edit{{"scenario.yaml", "capacityType: on-demand\n", "capacityType: on-demand\n            count: 100000000\n"}},
			at:    "count: 100000000", field: "spec.nodeGroups[0].karpenter.nodes[0].count:", hint: "100000000 is more than the 5000 nodes"},
		{name: "an absurd green group",
			edits: []edit{managedGroup("{maxUnavailable: 1}"), {"scenario.yaml", "updateConfig: {maxUnavailable: 1}}\n", "updateConfig: {maxUnavailable: 1}}\n      upgrade: {strategy: blue-green, green: {name: g, desired: 100000000}}\n"}},
			at:    "upgrade: {strategy: blue-green", field: "spec.nodeGroups[1].upgrade.green.desired:", hint: "100000000 is more than the 5000 nodes"},
		{name: "a patch that makes a budget invalid",
			edits: []edit{appendAction(`patch: {kind: NodePool, name: default, patch: {spec: {disruption: {budgets: [{nodes: "abc"}]}}}}`)},
			at:    "patch: {kind: NodePool", field: "spec.actions[4].patch.patch:", hint: `leaves NodePool default invalid: spec.disruption.budgets[0].nodes: "abc" is not a valid budget`},
		{name: "a json patch with a map body",
			edits: []edit{appendAction(`patch: {kind: NodePool, name: default, type: json, patch: {spec: {}}}`)},
			at:    "patch: {kind: NodePool", field: "spec.actions[4].patch.patch:", hint: "a json patch (RFC 6902) is a list of operations"},
		{name: "a second document in the scenario file",
			edits: []edit{{"scenario.yaml", "", "---\napiVersion: ladder.dev/v1alpha1\nkind: Scenario\n"}},
			at:    "---\napiVersion", field: "a scenario file is one YAML document", hint: `remove this "---" and what follows`},
		{name: "an unknown StorageClass",
			edits: []edit{{"manifests/app.yaml", "", pvc}},
			at:    "storageClassName: nope", field: "PersistentVolumeClaim app/data: spec.storageClassName:", hint: `StorageClass "nope" is not in the scenario's manifests`},
		{name: "a manifest path outside the scenario directory",
			edits: []edit{{"scenario.yaml", "file: manifests/app.yaml", "file: ../../etc/passwd"}},
			at:    "file: ../../etc/passwd", field: "spec.manifests[1].file:", hint: "a manifest path must stay in the scenario directory"},
		{name: "a budget duration in days",
			edits: []edit{{"manifests/karpenter.yaml", "duration: 2h", "duration: 1d"}},
			at:    "duration: 1d", field: "NodePool default: spec.disruption.budgets[0].duration:", hint: `"1d" is not a duration (use a number with a unit of h or m`},
		{name: "a bad CPU quantity",
			edits: []edit{{"manifests/app.yaml", "cpu: 100m", "cpu: 100zz"}},
			at:    "cpu: 100zz", field: "Deployment app/web: spec.template.spec.containers[0].resources.requests.cpu:", hint: `"100zz" is not a quantity`},
		{name: "an unknown region",
			edits: []edit{{"scenario.yaml", "region: us-west-2", "region: mars-north-1"}},
			at:    "region: mars-north-1", field: "spec.cluster.region:", hint: `"mars-north-1" is not an AWS Region`},
		{name: "a time limit of a century",
			edits: []edit{{"scenario.yaml", "timeLimit: 1h", "timeLimit: 1000000h"}},
			at:    "timeLimit: 1000000h", field: "spec.timeLimit:", hint: "is more than the 720h0m0s a rehearsal may run"},
		{name: "a NodePool weight of 0",
			edits: []edit{{"manifests/karpenter.yaml", "spec:\n  template:", "spec:\n  weight: 0\n  template:"}},
			at:    "weight: 0", field: "NodePool default: spec.weight:", hint: "0 is out of range: the NodePool CRD allows 1 to 100"},
		{name: "a NodePool weight beyond int32",
			edits: []edit{{"manifests/karpenter.yaml", "spec:\n  template:", "spec:\n  weight: 3000000000\n  template:"}},
			at:    "weight: 3000000000", field: "NodePool default: spec.weight:", hint: "3000000000 is out of range (-2147483648 to 2147483647)"},
		{name: "a consolidateAfter outside the CRD's pattern",
			edits: []edit{{"manifests/karpenter.yaml", "consolidateAfter: 30s", "consolidateAfter: 1.5h"}},
			at:    "consolidateAfter: 1.5h", field: "NodePool default: spec.disruption.consolidateAfter:", hint: `"1.5h" is not a duration the NodePool CRD takes (pattern ^(([0-9]+(s|m|h))+|Never)$)`},
		{name: "a negative NodePool limit",
			edits: []edit{{"manifests/karpenter.yaml", "spec:\n  template:", "spec:\n  limits: {cpu: -4}\n  template:"}},
			at:    "limits: {cpu: -4}", field: "NodePool default: spec.limits.cpu:", hint: "-4 is negative: Karpenter would launch no node"},
		{name: "requirements whose intersection is empty",
			edits: []edit{{"manifests/karpenter.yaml", "          values: [on-demand]\n", "          values: [on-demand]\n        - key: karpenter.sh/capacity-type\n          operator: In\n          values: [spot]\n"}},
			at:    "- key: karpenter.sh/capacity-type\n          operator: In\n          values: [spot]", field: "NodePool default: spec.template.spec.requirements[1]:",
			hint: "karpenter.sh/capacity-type In [spot] and requirements[0] (In [on-demand]) leave karpenter.sh/capacity-type no value: their intersection is empty"},
		{name: "an EKS cluster name EKS refuses",
			edits: []edit{{"scenario.yaml", "name: test", "name: -test"}},
			at:    "name: -test", field: "spec.cluster.name:", hint: `"-test" is not a valid name (EKS CreateCluster refuses it: 1 to 100 letters, digits, '-' and '_'`},
		{name: "an EKS cluster name of 101 characters",
			edits: []edit{{"scenario.yaml", "name: test", "name: " + strings.Repeat("c", 101)}},
			at:    "name: ccc", field: "spec.cluster.name:", hint: "101 characters is longer than 100"},
		{name: "a managed node group name EKS refuses",
			edits: []edit{managedGroup("{maxUnavailable: 1}"), {"scenario.yaml", "    - name: mng\n", "    - name: mng.blue\n"}},
			file:  "scenario.yaml", at: "name: mng.blue", field: "spec.nodeGroups[1].name:", hint: `"mng.blue" is not a valid name (EKS CreateNodegroup refuses it: 1 to 63 letters`},
		{name: "an object name the API server refuses",
			edits: []edit{{"manifests/app.yaml", "kind: PodDisruptionBudget\nmetadata:\n  name: web", "kind: PodDisruptionBudget\nmetadata:\n  name: Web"}},
			at:    "name: Web", field: "PodDisruptionBudget app/Web: metadata.name:", hint: `Invalid value: "Web": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters`},
		{name: "a label value of 64 characters",
			edits: []edit{{"manifests/app.yaml", "  namespace: app\nspec:\n  replicas: 1", "  namespace: app\n  labels: {team: " + strings.Repeat("t", 64) + "}\nspec:\n  replicas: 1"}},
			at:    "labels: {team: ttt", field: "Deployment app/web: metadata.labels:", hint: "must be no more than 63 bytes"},
		{name: "a key repeated 100,000 times",
			edits: []edit{{"scenario.yaml", "  seed: 1\n", strings.Repeat("  seed: 1\n", 100000)}},
			at:    "seed: 1", lineOffset: 1, field: "malformed YAML:", hint: `key "seed" already set in map (99999 errors in all; the first is shown)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path, files := writeScenario(t, tc.edits...)
			dir := filepath.Dir(path)
			file := tc.file
			if file == "" {
				file = tc.edits[0].file
			}
			prefix := fmt.Sprintf("%s:%d: ", filepath.Join(dir, filepath.FromSlash(file)), lineOf(t, files[file], tc.at)+tc.lineOffset)

			code, stdout, stderr := runLadder("scenario", "validate", path)
			if code != 1 || stdout != "" {
				t.Errorf("validate: exit %d, stdout %q; want 1 and nothing", code, stdout)
			}
			lines := stderrLines(stderr)
			if len(lines) != 1 {
				t.Fatalf("validate: %d lines, want one:\n%.2000s", len(lines), stderr)
			}
			line := lines[0]
			if len(line) > 1000 {
				t.Errorf("validate: a line of %d bytes: %.300s…", len(line), line)
			}
			if !strings.HasPrefix(line, prefix) || !strings.Contains(line, tc.field) || !strings.Contains(line, tc.hint) {
				t.Fatalf("validate: %q\nwant it to start %q, name %q and say %q", line, prefix, tc.field, tc.hint)
			}
			// Every other command refuses it with the same line, before
			// building any twin.
			for _, args := range [][]string{{"rehearse", "--scenario", path}, {"inventory", "--scenario", path}} {
				code, stdout, got := runLadder(args...)
				if code != 1 || stdout != "" || got != stderr {
					t.Errorf("%s: exit %d, stdout %q, stderr:\n%s\nwant exit 1 and the validate line", args[0], code, stdout, got)
				}
			}
			code, _, got := runLadder("check", "--scenario", path)
			if code == 0 || !strings.Contains(got, line) || len(stderrLines(got)) != 1 {
				t.Errorf("check --scenario: exit %d, stderr:\n%s\nwant the validate line", code, got)
			}
		})
	}
}

// 10 MB of one repeated key, in the scenario or in a manifest, is one
// short line, not one error per key (an 85 MB line before).
func TestTenMegabytesOfARepeatedKey(t *testing.T) {
	for _, e := range []edit{
		{"scenario.yaml", "  seed: 1\n", strings.Repeat("  seed: 1\n", 1<<20)},
		{"manifests/app.yaml", "  replicas: 1\n", strings.Repeat("  replicas: 1\n", 800000)},
	} {
		path, _ := writeScenario(t, e)
		code, _, stderr := runLadder("scenario", "validate", path)
		if code != 1 || len(stderrLines(stderr)) != 1 || len(stderr) > 400 || !strings.Contains(stderr, "errors in all; the first is shown") {
			t.Errorf("%s: exit %d, %d bytes of stderr: %.400s", e.file, code, len(stderr), stderr)
		}
	}
}

// A wait longer than the time limit leaves the rehearsal stuck at the
// limit: it neither simulates the whole wait nor reports success.
func TestRehearseWaitPastTheTimeLimitIsStuck(t *testing.T) {
	path, _ := writeScenario(t, edit{"scenario.yaml", "wait: {for: 5m}", "wait: {for: 1000000h}"})
	code, stdout, stderr := runLadder("rehearse", "--scenario", path, "-o", "json")
	if code != 2 || stderr != "error: rehearsal stuck\n" {
		t.Fatalf("exit %d, stderr %q; want 2 and rehearsal stuck", code, stderr)
	}
	var rep struct {
		Status string `json:"status"`
		Events []struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Status != "stuck" {
		t.Errorf("status %q, want stuck", rep.Status)
	}
	found := false
	for _, e := range rep.Events {
		found = found || (e.Code == "TimeLimit" && strings.Contains(e.Message, "waiting 1000000h0m0s would end past the time limit"))
	}
	if !found {
		t.Errorf("no TimeLimit event says why; events: %+v", rep.Events)
	}
}

func TestRehearseFlagsRefused(t *testing.T) {
	path, _ := writeScenario(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"zero time limit", []string{"--time-limit", "0"}, "error: --time-limit 0s: use a positive virtual duration of at most 720h0m0s, e.g. --time-limit 6h\n"},
		{"negative time limit", []string{"--time-limit", "-1h"}, "error: --time-limit -1h0m0s: use a positive virtual duration of at most 720h0m0s, e.g. --time-limit 6h\n"},
		{"a century", []string{"--time-limit", "1000000h"}, "error: --time-limit 1000000h0m0s: use a positive virtual duration of at most 720h0m0s, e.g. --time-limit 6h\n"},
		{"--to on a script that never upgrades", []string{"--to", "1.32"},
			fmt.Sprintf("error: --to 1.32: the script of %s (spec.actions) has no upgrade action, so --to would change nothing (add an action {upgrade: {to: \"1.32\"}} or leave out --to)\n", path)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runLadder(append([]string{"rehearse", "--scenario", path}, tc.args...)...)
			if code != 1 || stdout != "" || stderr != tc.want {
				t.Errorf("exit %d, stdout %q, stderr %q\nwant exit 1 and %q", code, stdout, stderr, tc.want)
			}
		})
	}
}
