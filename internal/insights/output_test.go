package insights

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const outputManifests = `apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: web
  namespace: shop
spec:
  maxUnavailable: 0
  selector:
    matchLabels: {app: web}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: gp2
provisioner: kubernetes.io/aws-ebs
`

func outputReport(t *testing.T) *Report {
	t.Helper()
	in := input(t, "", "1.25", outputManifests)
	return Run(in, []Check{checkNamed(t, "removed-api"), checkNamed(t, "volume-binding-mode"), checkNamed(t, "pdb-multiple")})
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := outputReport(t).WriteText(&b, OutputOptions{}); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	if !strings.HasPrefix(got, "STATUS   CHECK                OBJECT                        SOURCE        MESSAGE\n") {
		t.Errorf("header:\n%s", got)
	}
	for _, s := range []string{
		"ERROR    removed-api          PodDisruptionBudget shop/web  test.yaml:1   policy/v1beta1 PodDisruptionBudget is no longer served from Kubernetes 1.25",
		"WARNING  volume-binding-mode  StorageClass gp2              test.yaml:11  StorageClass gp2 (kubernetes.io/aws-ebs) binds volumes Immediate (the default)",
		"\nRecommendations:\n  removed-api PodDisruptionBudget shop/web: Migrate to policy/v1 PodDisruptionBudget",
		"\nTarget 1.25: 1 ERROR, 1 WARNING in 2 objects; 1 check passed.\n",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("text lacks %q:\n%s", s, got)
		}
	}
	if strings.Contains(got, "PASSING") {
		t.Error("PASSING shown without ShowPassing")
	}
	b.Reset()
	if err := outputReport(t).WriteText(&b, OutputOptions{ShowPassing: true, Wide: true}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"RECOMMENDATION", "PASSING  pdb-multiple", "Pods selected by more than one PodDisruptionBudget: none found in 2 objects"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("wide text lacks %q:\n%s", s, b.String())
		}
	}
	if strings.Contains(b.String(), "Recommendations:") {
		t.Error("wide output repeats recommendations below")
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := outputReport(t).WriteJSON(&b, OutputOptions{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Target   string `json:"target"`
		Findings []map[string]any
		Summary  map[string]int `json:"summary"`
	}
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.Target != "1.25" || len(doc.Findings) != 2 || doc.Summary["ERROR"] != 1 || doc.Summary["WARNING"] != 1 || len(doc.Summary) != 2 {
		t.Fatalf("got %+v", doc)
	}
	f := doc.Findings[0]
	obj := f["object"].(map[string]any)
	if f["check"] != "removed-api" || f["severity"] != "ERROR" || f["field"] != "apiVersion" || f["recommendation"] == "" ||
		obj["apiVersion"] != "policy/v1beta1" || obj["kind"] != "PodDisruptionBudget" || obj["namespace"] != "shop" || obj["name"] != "web" || obj["source"] != "test.yaml:1" {
		t.Errorf("finding %v", f)
	}
	// No findings: an empty list, not null.
	b.Reset()
	if err := (&Report{Target: mustMinor("1.31")}).WriteJSON(&b, OutputOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"findings": []`) {
		t.Errorf("empty: %s", b.String())
	}
}

// sarifLines returns the file and start line of each SARIF result.
func sarifLines(t *testing.T, rep *Report) []string {
	t.Helper()
	var b bytes.Buffer
	if err := rep.WriteSARIF(&b, OutputOptions{}, "v0.test"); err != nil {
		t.Fatal(err)
	}
	log := decodeSARIF(t, b.Bytes())
	var out []string
	for _, r := range log.Runs[0].Results {
		loc := r.Locations[0].PhysicalLocation
		out = append(out, fmt.Sprintf("%s %s:%d", r.RuleID, filepath.Base(loc.ArtifactLocation.URI), loc.Region.StartLine))
	}
	return out
}

// TestSARIFReadsDocumentsAgain: the text of a document read from a file is
// not held; a finding's field line is found by reading the file again, and
// points at the object when the file changed since.
func TestSARIFReadsDocumentsAgain(t *testing.T) {
	dir := writeTree(t, map[string]string{"m.yaml": outputManifests})
	m, err := ReadPaths([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range m.Objects {
		if o.Doc != nil {
			t.Fatalf("%s holds its document", o)
		}
	}
	c1 := checkNamed(t, "removed-api")
	c2 := checkNamed(t, "volume-binding-mode")
	rep := Run(&Input{Target: mustMinor("1.25"), Now: testNow, Objects: m.Objects}, []Check{c1, c2})
	// As from a document held (TestWriteSARIF): apiVersion at 1, provisioner at 15.
	if got, want := fmt.Sprint(sarifLines(t, rep)), "[removed-api m.yaml:1 volume-binding-mode m.yaml:15]"; got != want {
		t.Errorf("read again: %s, want %s", got, want)
	}
	changed := strings.Replace(outputManifests, "provisioner:", "# moved\nprovisioner:", 1)
	if err := os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(sarifLines(t, rep)), "[removed-api m.yaml:1 volume-binding-mode m.yaml:11]"; got != want {
		t.Errorf("file changed: %s, want %s (the object's line)", got, want)
	}
}

type sarifTestLog struct {
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name  string `json:"name"`
				Rules []struct {
					ID string `json:"id"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex int    `json:"ruleIndex"`
			Level     string `json:"level"`
			Message   struct{ Text string }
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct{ URI string }    `json:"artifactLocation"`
					Region           struct{ StartLine int } `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
		} `json:"results"`
	} `json:"runs"`
}

func decodeSARIF(t *testing.T, data []byte) sarifTestLog {
	t.Helper()
	var log sarifTestLog
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	return log
}

func TestWriteSARIF(t *testing.T) {
	var b bytes.Buffer
	if err := outputReport(t).WriteSARIF(&b, OutputOptions{}, "v0.test"); err != nil {
		t.Fatal(err)
	}
	log := decodeSARIF(t, b.Bytes())
	run := log.Runs[0]
	if log.Version != "2.1.0" || run.Tool.Driver.Name != "ladder" || len(run.Tool.Driver.Rules) != len(Checks()) || len(run.Results) != 2 {
		t.Fatalf("log %+v", log)
	}
	r := run.Results[0]
	loc := r.Locations[0].PhysicalLocation
	// removed-api points at the apiVersion line, volume-binding-mode at provisioner.
	if r.RuleID != "removed-api" || run.Tool.Driver.Rules[r.RuleIndex].ID != "removed-api" || r.Level != "error" ||
		loc.ArtifactLocation.URI != "test.yaml" || loc.Region.StartLine != 1 || !strings.Contains(r.Message.Text, "Recommendation: Migrate") {
		t.Errorf("result 0 %+v", r)
	}
	if r := run.Results[1]; r.Level != "warning" || r.Locations[0].PhysicalLocation.Region.StartLine != 15 {
		t.Errorf("result 1 %+v", r)
	}
}

// A current version from elsewhere than the scenario or the API server —
// EKS's DescribeCluster — is named above the table and in the JSON; without
// one, neither output mentions it.
func TestCurrentSource(t *testing.T) {
	in := input(t, "1.30", "1.31", outputManifests)
	in.CurrentSource = "EKS DescribeCluster of cluster shop"
	rep := Run(in, []Check{checkNamed(t, "removed-api")})
	var text, js bytes.Buffer
	if err := rep.WriteText(&text, OutputOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&js, OutputOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := "Control plane 1.30 (EKS DescribeCluster of cluster shop).\n\n"; !strings.HasPrefix(text.String(), want) {
		t.Errorf("text starts %q, want %q", strings.SplitN(text.String(), "\n", 2)[0], want)
	}
	if !strings.Contains(js.String(), `"current": "1.30",`) || !strings.Contains(js.String(), `"currentSource": "EKS DescribeCluster of cluster shop",`) {
		t.Errorf("JSON lacks current and currentSource:\n%s", js.String())
	}

	in.CurrentSource = ""
	rep = Run(in, []Check{checkNamed(t, "removed-api")})
	text.Reset()
	js.Reset()
	rep.WriteText(&text, OutputOptions{})
	rep.WriteJSON(&js, OutputOptions{})
	if strings.Contains(text.String(), "Control plane") || strings.Contains(js.String(), "current") {
		t.Errorf("without a source the outputs name one:\n%s\n%s", text.String(), js.String())
	}
}
