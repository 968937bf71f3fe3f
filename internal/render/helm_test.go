package render

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// summary is "Kind/name file:line" for each doc.
func summary(t *testing.T, docs []Doc) []string {
	t.Helper()
	var out []string
	for _, d := range docs {
		var h objectHead
		if err := yaml.Unmarshal(d.Body, &h); err != nil {
			t.Fatalf("%s:%d: %v\n%s", d.File, d.Line, err, d.Body)
		}
		out = append(out, h.Kind+"/"+h.Metadata.Name+" "+d.File+":"+strconv.Itoa(d.Line))
	}
	return out
}

func TestHelmRendersLikeHelmTemplate(t *testing.T) {
	dir := filepath.Join("testdata", "helm", "legacy")
	res, err := Helm(dir, HelmOptions{KubeVersion: "1.32"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 0 {
		t.Fatalf("problems: %v", res.Problems)
	}
	tpl := func(p string) string { return filepath.Join(dir, p) }
	want := []string{
		// Helm's install order (releaseutil.InstallOrder), subchart included;
		// then the pre-install hook; the test hook is left out.
		"ConfigMap/release-name-cache " + tpl("charts/cache/templates/configmap.yaml") + ":2",
		"Service/release-name-legacy " + tpl("templates/service.yaml") + ":1",
		"Deployment/release-name-legacy " + tpl("templates/deployment.yaml") + ":1",
		"Job/release-name-legacy-migrate " + tpl("templates/migrate-job.yaml") + ":1",
	}
	if got := summary(t, res.Docs); !slices.Equal(got, want) {
		t.Fatalf("docs:\n got %q\nwant %q", got, want)
	}
	// The ingress is off under the default values: its literal API
	// version is still reported, in the branch of the semverCompare the
	// target takes; the other branch (extensions/v1beta1, for Kubernetes
	// before 1.14) is not.
	wantLit := []Literal{
		{File: tpl("templates/ingress.yaml"), Line: 4, APIVersion: "networking.k8s.io/v1beta1", Kind: "Ingress",
			Branch: "the {{ if }} branch the target takes of a .Capabilities check at line 3"},
	}
	if !slices.Equal(res.Literals, wantLit) {
		t.Errorf("literals:\n got %v\nwant %v", res.Literals, wantLit)
	}
	for _, f := range []string{"Chart.yaml", "values.yaml", "templates/_helpers.tpl", "templates/tests/test-connection.yaml", "charts/cache/Chart.yaml"} {
		if !slices.Contains(res.Consumed, tpl(f)) {
			t.Errorf("Consumed lacks %s: %q", f, res.Consumed)
		}
	}
}

func TestHelmValuesFilesAndSet(t *testing.T) {
	dir := filepath.Join("testdata", "helm", "legacy")
	res, err := Helm(dir, HelmOptions{
		ValuesFiles: []string{filepath.Join("testdata", "helm", "override-values.yaml")},
		Set:         []string{"image.tag=1.27", "cache.size=256", "ingress.enabled=true"},
		ReleaseName: "shop",
		Namespace:   "web",
		KubeVersion: "1.13",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 0 {
		t.Fatalf("problems: %v", res.Problems)
	}
	var dep appsv1.Deployment
	var cm corev1.ConfigMap
	var ingressAPI string
	for _, d := range res.Docs {
		var h struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		_ = yaml.Unmarshal(d.Body, &h)
		switch h.Kind {
		case "Deployment":
			if err := yaml.Unmarshal(d.Body, &dep); err != nil {
				t.Fatal(err)
			}
		case "ConfigMap":
			if err := yaml.Unmarshal(d.Body, &cm); err != nil {
				t.Fatal(err)
			}
		case "Ingress":
			ingressAPI = h.APIVersion
		}
	}
	if dep.Name != "shop-legacy" || dep.Spec.Replicas == nil || *dep.Spec.Replicas != 2 {
		t.Errorf("deployment %s replicas %v, want shop-legacy with 2 (values file)", dep.Name, dep.Spec.Replicas)
	}
	if img := dep.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.27" {
		t.Errorf("image = %s, want nginx:1.27 (--set)", img)
	}
	// The parent's values under the subchart's name override the
	// subchart's own (32): --set beats the values file's 128.
	if cm.Data["size"] != "256" {
		t.Errorf("subchart size = %q, want 256 from --set cache.size", cm.Data["size"])
	}
	// KubeVersion drives .Capabilities: 1.13 takes the old branch.
	if ingressAPI != "extensions/v1beta1" {
		t.Errorf("ingress apiVersion = %q, want extensions/v1beta1 for Kubernetes 1.13", ingressAPI)
	}
	// The ingress rendered, so it is no longer reported from its sources.
	if len(res.Literals) != 0 {
		t.Errorf("literals of a rendered template: %v", res.Literals)
	}
}

func TestHelmTemplateThatFailsIsAProblemAndItsLiteralsAreFound(t *testing.T) {
	dir := filepath.Join("testdata", "helm", "broken")
	res, err := Helm(dir, HelmOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Docs) != 0 {
		t.Errorf("docs from a failed render: %d", len(res.Docs))
	}
	if len(res.Problems) != 1 {
		t.Fatalf("problems = %v, want one", res.Problems)
	}
	p := res.Problems[0]
	if p.File != filepath.Join(dir, "templates", "deployment.yaml") || p.Line != 11 || !strings.Contains(p.Message, "nil pointer") {
		t.Errorf("problem = %s, want templates/deployment.yaml:11 nil pointer", p)
	}
	want := []Literal{{File: filepath.Join(dir, "templates", "deployment.yaml"), Line: 1, APIVersion: "extensions/v1beta1", Kind: "Deployment"}}
	if !slices.Equal(res.Literals, want) {
		t.Errorf("literals = %v, want %v", res.Literals, want)
	}
}

func TestHelmMissingDependencyIsAProblem(t *testing.T) {
	dir := filepath.Join("testdata", "helm", "missing-dep")
	res, err := Helm(dir, HelmOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 1 || len(res.Docs) != 0 {
		t.Fatalf("problems %v docs %d, want one problem", res.Problems, len(res.Docs))
	}
	p := res.Problems[0]
	if p.File != filepath.Join(dir, "Chart.yaml") || p.Line != 5 || !strings.Contains(p.Message, "redis") || !strings.Contains(p.Fix, "helm dependency build") {
		t.Errorf("problem = %s", p)
	}
}

func TestHelmIsDeterministic(t *testing.T) {
	dir := filepath.Join("testdata", "helm", "legacy")
	a, err := Helm(dir, HelmOptions{KubeVersion: "1.32"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Helm(dir, HelmOptions{KubeVersion: "1.32"})
	if !equalResults(a, b) {
		t.Fatal("two renders of the same chart differ")
	}
}

func TestHelmRefusesHostileInput(t *testing.T) {
	t.Run("values file over the cap", func(t *testing.T) {
		big := filepath.Join(t.TempDir(), "values.yaml")
		f, err := os.Create(big)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(64 << 20); err != nil { // sparse: no 64 MB written
			t.Fatal(err)
		}
		f.Close()
		_, err = Helm(filepath.Join("testdata", "helm", "legacy"), HelmOptions{ValuesFiles: []string{big}})
		if err == nil || !strings.Contains(err.Error(), "limit") {
			t.Fatalf("err = %v, want the size limit", err)
		}
	})
	t.Run("symlink loop in the chart", func(t *testing.T) {
		dir := copyChart(t, filepath.Join("testdata", "helm", "legacy"))
		if err := os.Symlink("..", filepath.Join(dir, "templates", "loop")); err != nil {
			t.Skip(err)
		}
		res, err := Helm(dir, HelmOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Message, "loop") {
			t.Fatalf("problems = %v, want the loop", res.Problems)
		}
	})
	t.Run("include recursion is bounded by Helm", func(t *testing.T) {
		dir := copyChart(t, filepath.Join("testdata", "helm", "broken"))
		write(t, filepath.Join(dir, "templates", "deployment.yaml"), `{{- define "loop" }}{{ include "loop" . }}{{ end -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "loop" . }}
`)
		res, err := Helm(dir, HelmOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Message, "nested reference") {
			t.Fatalf("problems = %v, want Helm's recursion limit", res.Problems)
		}
	})
}

func copyChart(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A template that renders one object while its values switch another off
// still has the other's literal API version reported: turning the value on
// in production would apply a PodSecurityPolicy the target does not serve.
// The object it did render is judged from the render, not its source.
func TestHelmReportsLiteralsOfObjectsAValueSwitchedOff(t *testing.T) {
	dir := filepath.Join("testdata", "helm", "gated")
	res, err := Helm(dir, HelmOptions{KubeVersion: "1.32"})
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(t, res.Docs); !slices.Equal(got, []string{"ServiceAccount/release-name-agent " + filepath.Join(dir, "templates", "rbac.yaml") + ":1"}) {
		t.Fatalf("docs = %q", got)
	}
	want := []Literal{{File: filepath.Join(dir, "templates", "rbac.yaml"), Line: 7, APIVersion: "policy/v1beta1", Kind: "PodSecurityPolicy",
		Branch: "the {{ if }} branch of a .Values check at line 5"}}
	if !slices.Equal(res.Literals, want) {
		t.Errorf("literals = %v, want %v", res.Literals, want)
	}
}
