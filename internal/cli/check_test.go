package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const checkRemovedPDB = `apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: web
  namespace: shop
spec:
  maxUnavailable: 1
  selector:
    matchLabels: {app: web}
`

const checkSingleReplica = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
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
          image: public.ecr.aws/nginx/nginx:1.27
          readinessProbe:
            httpGet: {path: /, port: 80}
`

const checkClean = `apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  namespace: shop
data:
  LOG_LEVEL: info
`

func writeCheckFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// liveError is what ladder check says when it cannot read a live cluster
// (liveInput's error; the test machine has no cluster).
func liveError(t *testing.T, kubeconfig, kubeContext string) string {
	t.Helper()
	_, err := liveInput(context.Background(), kubeconfig, kubeContext, "", liveRequestTimeout)
	if err == nil {
		t.Skip("a live cluster is reachable from this machine")
	}
	return "error: " + err.Error() + "\n"
}

// TestCheckExitCodes: 0 nothing at or above --fail-on, 2 findings at or
// above it, 1 Ladder could not run.
func TestCheckExitCodes(t *testing.T) {
	dir := t.TempDir()
	removed := writeCheckFile(t, dir, "removed.yaml", checkRemovedPDB)
	warning := writeCheckFile(t, dir, "warning.yaml", checkSingleReplica)
	clean := writeCheckFile(t, dir, "clean.yaml", checkClean)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"removed API is an ERROR", []string{"-f", removed, "--target", "1.25"}, 2, "error: check: 1 ERROR, 0 WARNING; failing on ERROR and above (--fail-on)\n"},
		{"only deprecated at 1.24", []string{"-f", removed, "--target", "1.24"}, 0, ""},
		{"warnings pass by default", []string{"-f", warning, "--target", "1.31"}, 0, ""},
		{"--fail-on WARNING", []string{"-f", warning, "--target", "1.31", "--fail-on", "warning"}, 2, "error: check: 0 ERROR, 1 WARNING; failing on WARNING and above (--fail-on)\n"},
		{"clean", []string{"-f", clean, "--target", "1.31", "--fail-on", "WARNING"}, 0, ""},
		{"no source reads the current context's cluster", []string{"--target", "1.31"}, 1, liveError(t, "", "")},
		{"no target without a cluster", []string{"-f", clean}, 1, "error: --target is required when only manifests are given (there is no cluster or scenario to take the current version from), e.g. --target 1.32\n"},
		{"bad target", []string{"-f", clean, "--target", "one.thirty"}, 1, "error: --target: \"one.thirty\" is not a Kubernetes version (want e.g. 1.31 or v1.31.14-eks-ecaa3a6)\n"},
		{"target out of range", []string{"-f", clean, "--target", "1.40"}, 1, "error: --target 1.40: Ladder knows Kubernetes 1.16 to 1.38\n"},
		{"one minor past the reviewed table (a 1.37 cluster's next hop)", []string{"-f", clean, "--target", "1.38"}, 0, ""},
		{"target not after the scenario", []string{"--scenario", "workshop", "--target", "1.30"}, 1, "error: --target 1.30: the cluster is already at 1.30; the target must be a later minor, e.g. 1.31\n"},
		{"bad output", []string{"-f", clean, "--target", "1.31", "-o", "yaml"}, 1, "error: -o \"yaml\": use text, wide, json or sarif\n"},
		{"bad fail-on", []string{"-f", clean, "--target", "1.31", "--fail-on", "PASSING"}, 1, "error: --fail-on \"PASSING\": use ERROR or WARNING\n"},
		{"missing file", []string{"-f", filepath.Join(dir, "nope.yaml"), "--target", "1.31"}, 1, "error: -f " + filepath.Join(dir, "nope.yaml") + ": no such file or directory\n"},
		{"a live cluster", []string{"--kubeconfig", filepath.Join(dir, "no-kubeconfig"), "--target", "1.31"}, 1, liveError(t, filepath.Join(dir, "no-kubeconfig"), "")},
		{"a scenario and a live cluster", []string{"--scenario", "workshop", "--context", "prod"}, 1, "error: --scenario and --kubeconfig/--context/--cluster: check one cluster at a time\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runLadder(append([]string{"check"}, tc.args...)...)
			if code != tc.code || stderr != tc.stderr {
				t.Errorf("exit %d, stderr %q; want exit %d, stderr %q", code, stderr, tc.code, tc.stderr)
			}
		})
	}
}

func TestCheckText(t *testing.T) {
	dir := t.TempDir()
	writeCheckFile(t, dir, "apps/pdb.yaml", checkRemovedPDB)
	writeCheckFile(t, dir, "apps/web.yaml", checkSingleReplica)
	code, stdout, _ := runLadder("check", "-f", dir, "--target", "1.25", "--show-passing")
	if code != 2 {
		t.Fatalf("exit %d:\n%s", code, stdout)
	}
	pdb := filepath.Join(dir, "apps/pdb.yaml")
	for _, want := range []string{
		"STATUS   CHECK ",
		"ERROR    removed-api ",
		" PodDisruptionBudget shop/web ",
		" " + pdb + ":1 ",
		"WARNING  single-replica ",
		"PASSING  pdb-blocks-drain ",
		"\nRecommendations:\n  removed-api PodDisruptionBudget shop/web: Migrate to policy/v1 PodDisruptionBudget",
		"\nTarget 1.25: 1 ERROR, 1 WARNING in 2 objects; ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

// TestCheckBadDocument: a broken document is reported with file:line and
// the good documents are still checked.
func TestCheckBadDocument(t *testing.T) {
	path := writeCheckFile(t, t.TempDir(), "mixed.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: broken\n---\n"+checkRemovedPDB)
	code, stdout, _ := runLadder("check", "-f", path, "--target", "1.26", "-o", "json")
	if code != 2 {
		t.Fatalf("exit %d", code)
	}
	var rep struct {
		Findings []struct {
			Check   string
			Message string
			Object  struct{ Source string }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range rep.Findings {
		got = append(got, f.Check+"@"+strings.TrimPrefix(f.Object.Source, filepath.Dir(path)+"/"))
	}
	if s := strings.Join(got, " "); s != "invalid-manifest@mixed.yaml:3 removed-api@mixed.yaml:5" {
		t.Errorf("findings %s", s)
	}
}

func TestCheckJSONAndStdin(t *testing.T) {
	root, _ := newRootCommand(&bytes.Buffer{}, &bytes.Buffer{})
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetIn(strings.NewReader(checkRemovedPDB))
	root.SetArgs([]string{"check", "-f", "-", "--target", "1.26", "-o", "json"})
	if err := root.Execute(); err == nil {
		t.Fatal("no exit 2")
	}
	var doc map[string]any
	dec := json.NewDecoder(&out)
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if len(doc) != 3 || doc["target"] != "1.26" {
		t.Fatalf("top level: %v", doc)
	}
	f := doc["findings"].([]any)[0].(map[string]any)
	obj := f["object"].(map[string]any)
	if f["check"] != "removed-api" || f["severity"] != "ERROR" || obj["source"] != "<stdin>:1" || obj["kind"] != "PodDisruptionBudget" {
		t.Errorf("finding %v", f)
	}
	if s := doc["summary"].(map[string]any); s["ERROR"] != json.Number("1") || s["WARNING"] != json.Number("0") {
		t.Errorf("summary %v", s)
	}
}

func TestCheckSARIF(t *testing.T) {
	path := writeCheckFile(t, t.TempDir(), "pdb.yaml", checkRemovedPDB)
	code, stdout, _ := runLadder("check", "-f", path, "--target", "1.25", "-o", "sarif")
	if code != 2 {
		t.Fatalf("exit %d", code)
	}
	var log struct {
		Version string
		Runs    []struct {
			Results []struct {
				RuleID    string
				Level     string
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &log); err != nil {
		t.Fatal(err)
	}
	r := log.Runs[0].Results[0]
	if log.Version != "2.1.0" || r.RuleID != "removed-api" || r.Level != "error" ||
		r.Locations[0].PhysicalLocation.ArtifactLocation.URI != "file://"+filepath.ToSlash(path) || r.Locations[0].PhysicalLocation.Region.StartLine != 1 {
		t.Errorf("sarif %+v", log)
	}
}

// TestCheckScenario: the current version comes from the scenario, the
// target defaults to the next minor, and several hops are labelled.
func TestCheckScenario(t *testing.T) {
	code, stdout, stderr := runLadder("check", "--scenario", "workshop", "--now", workshopStart)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	if !strings.Contains(stdout, "\nUpgrade 1.30 → 1.31: 0 ERROR, ") || !strings.Contains(stdout, "karpenter-ami-pinned  EC2NodeClass default") {
		t.Errorf("output:\n%s", stdout)
	}
	code, stdout, _ = runLadder("check", "--scenario", "workshop", "--target", "1.33", "-o", "wide", "--now", workshopStart)
	if code != 0 || !strings.HasPrefix(stdout, "HOP   STATUS   CHECK") || !strings.Contains(stdout, "RECOMMENDATION") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}

// TestCheckScenarioCluster: a scenario gives the cluster checks their
// facts — the twin's starting cluster and its predicted drains. Support
// windows are judged at --now (default: the wall clock, not the scenario's
// virtual start); the tests pin it to the workshop's start.
func TestCheckScenarioCluster(t *testing.T) {
	code, stdout, stderr := runLadder("check", "--scenario", "workshop", "--now", workshopStart)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	for _, want := range []string{
		"WARNING  addon-compatibility   Addon kube-proxy ",
		"WARNING  custom-ami-nodegroup  NodeGroup custom-Y ",
		"WARNING  drain-blocked         Node ip-10-0-3-18.us-west-2.compute.internal  scenario workshop ",
		"leaves Deployment orders/orders-mysql (orders/orders-mysql-",
		"WARNING  support-window        Cluster eksworkshop-eksctl ",
		"has been in extended support since 2025-07-23 (250 days ago)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	// pdb-deadlock: orders' PodDisruptionBudget holds its node's drain for
	// EKS's 15 minutes.
	code, stdout, _ = runLadder("check", "--scenario", "pdb-deadlock", "-o", "json")
	if code != 2 {
		t.Fatalf("exit %d, want 2:\n%s", code, stdout)
	}
	var rep struct {
		Findings []struct{ Check, Severity, Message string }
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	errs := map[string]bool{}
	for _, f := range rep.Findings {
		if f.Severity == "ERROR" {
			errs[f.Check] = true
		}
	}
	if !errs["drain-blocked"] || !errs["drain-timeout-risk"] || !errs["pdb-blocks-drain"] {
		t.Errorf("ERROR checks %v, want drain-blocked, drain-timeout-risk and pdb-blocks-drain", errs)
	}
	// Today the workshop's 1.30 is past extended support.
	code, stdout, _ = runLadder("check", "--scenario", "workshop", "--now", "2026-12-03T10:00:00Z")
	if code != 2 || !strings.Contains(stdout, "Kubernetes 1.30, the control plane's version, is past extended support: it ended on 2026-07-23") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}

// workshopStart is the workshop scenario's spec.start.
const workshopStart = "2026-03-30T09:00:00Z"

func TestCheckHelp(t *testing.T) {
	code, stdout, _ := runLadder("check", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"ladder check -f ./clusters/prod --target 1.33", "helm template shop ./charts/shop | ladder check -f - --target 1.32",
		"-o sarif > ladder.sarif", "removed-api,", "Exit status: 0 no finding at or above --fail-on (default ERROR), 2 findings"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}
