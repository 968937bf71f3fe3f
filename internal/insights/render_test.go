package insights

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReadRendersChartsAndKustomizations: the tree of
// TestReadPathsSkipsFilesThatAreNotManifests, read as it deploys. The
// chart renders (its ConfigMap, at the template's line); its Deployment
// template, switched off by values, is an object of its literal apiVersion
// and kind for the API checks; the kustomization builds its ConfigMap
// once; the chart's and the kustomization's own files are neither objects
// nor skipped files.
func TestReadRendersChartsAndKustomizations(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"chart/Chart.yaml":                "apiVersion: v2\nname: shop\nversion: 1.2.3\n",
		"chart/values.yaml":               "enabled: false\n",
		"chart/templates/deployment.yaml": "{{- if .Values.enabled }}\napiVersion: extensions/v1beta1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n{{- end }}\n",
		"chart/templates/cm.yaml":         "# the shop's settings\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
		"base/kustomization.yaml":         "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamePrefix: prod-\nresources: [cm.yaml]\n",
		"base/cm.yaml":                    configMapA,
		"docker-compose.yml":              "services:\n  web:\n    image: nginx\n",
	})
	m, err := Read([]string{dir}, nil, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var objs []string
	for _, o := range m.Objects {
		rel, _ := filepath.Rel(dir, o.Source.File)
		objs = append(objs, o.APIVersion+" "+o.Kind+"/"+o.Name+"@"+rel+":"+strconv.Itoa(o.Source.Line))
	}
	want := "v1 ConfigMap/prod-a@base/cm.yaml:1 " +
		"v1 ConfigMap/release-name@chart/templates/cm.yaml:2 " +
		"extensions/v1beta1 Deployment/@chart/templates/deployment.yaml:2"
	if got := strings.Join(objs, " "); got != want {
		t.Errorf("objects\n %s\nwant\n %s", got, want)
	}
	if len(m.Problems) != 0 {
		t.Errorf("problems %v", m.Problems)
	}
	if want := (SkippedFiles{NotManifests: 1}); m.Skipped != want {
		t.Errorf("skipped %+v, want %+v (docker-compose.yml only)", m.Skipped, want)
	}
}

// A chart renders with the target's API versions as
// .Capabilities.APIVersions, not Helm's default set: prometheus-pingmesh-
// exporter (vendored in internal/render/testdata) picks policy/v1 when the
// cluster serves policy/v1/PodDisruptionBudget. Off under its default
// values, its template is scanned, and the literal says which branch it is
// in.
func TestReadRendersChartsWithTheTargetsAPIVersions(t *testing.T) {
	dir := filepath.Join("..", "render", "testdata", "helm", "upstream", "prometheus-pingmesh-exporter")
	opts := ReadOptions{}
	opts.Helm.KubeVersion = "1.32"
	opts.Helm.Set = []string{"podDisruptionBudget.maxUnavailable=1"}
	m, err := Read([]string{dir}, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Objects) != 1 || m.Objects[0].APIVersion != "policy/v1" {
		t.Fatalf("objects %v, want one policy/v1 PodDisruptionBudget", m.Objects)
	}
	opts.Helm.Set = nil
	if m, err = Read([]string{dir}, nil, opts); err != nil {
		t.Fatal(err)
	}
	if len(m.Objects) != 1 || m.Objects[0].APIVersion != "policy/v1" {
		t.Fatalf("objects %v, want the policy/v1 literal only", m.Objects)
	}
	want := "the {{ if }} branch the target takes of a .Capabilities check at line 2 in " +
		filepath.Join(dir, "templates", "poddisruptionbudget.yaml") + ":3"
	if got := m.Objects[0].Source.String(); got != want {
		t.Errorf("source\n %s\nwant\n %s", got, want)
	}
}

// TestReadChecksTheTreeAfterAChartOutOfBudget: a chart whose template builds
// a `tpl` that calls itself (no values file holds it) overflows the
// stack of the process that renders it — a fatal error of the Go runtime.
// That process is the render's own: the chart is one finding naming the
// budget, and the kustomization beside it is still built and checked.
func TestReadChecksTheTreeAfterAChartOutOfBudget(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"chart/Chart.yaml":        "apiVersion: v2\nname: loop\nversion: 1.2.3\n",
		"chart/templates/cm.yaml": "{{ $s := \"{{ tpl $.Values.t $ }}\" }}{{ $_ := set .Values \"t\" $s }}{{ tpl $s . }}\napiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata:\n  name: x\n",
		"base/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamePrefix: prod-\nresources: [cm.yaml]\n",
		"base/cm.yaml":            configMapA,
	})
	m, err := Read([]string{dir}, nil, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var objs []string
	for _, o := range m.Objects {
		rel, _ := filepath.Rel(dir, o.Source.File)
		objs = append(objs, o.APIVersion+" "+o.Kind+"/"+o.Name+"@"+rel)
	}
	// The chart's template is still scanned for literal API versions.
	if got, want := strings.Join(objs, " "), "v1 ConfigMap/prod-a@base/cm.yaml policy/v1beta1 PodSecurityPolicy/@chart/templates/cm.yaml"; got != want {
		t.Errorf("objects\n %s\nwant\n %s", got, want)
	}
	if len(m.Problems) != 1 || m.Problems[0].Source.File != filepath.Join(dir, "chart", "Chart.yaml") ||
		!strings.Contains(m.Problems[0].Message, "stack budget") {
		t.Fatalf("problems %v, want one at chart/Chart.yaml naming the stack budget", m.Problems)
	}
}
