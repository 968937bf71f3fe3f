package insights

import (
	"path/filepath"
	"strings"
	"testing"
)

// A repository of one base and three overlays (one with a kustomize
// Component), two kustomizations naming the same remote base, and a chart
// whose dependencies were never fetched: the base's Deployment is one
// object however many overlays build it; the component is not built on
// its own; the remote base is one WARNING, the missing dependencies one
// WARNING saying how to fetch them — no ERROR.
func TestReadReportsEachSourceOnce(t *testing.T) {
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: nginx\n"
	overlay := func(prefix string, extra string) string {
		return "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamePrefix: " + prefix + "-\nresources:\n- ../../base\n" + extra
	}
	remote := "resources:\n- https://github.com/example/app//deploy/base?ref=v1.2.3\n"
	dir := writeTree(t, map[string]string{
		"base/kustomization.yaml":                "resources:\n- deploy.yaml\n",
		"base/deploy.yaml":                       deploy,
		"overlays/dev/kustomization.yaml":        overlay("dev", ""),
		"overlays/prod/kustomization.yaml":       overlay("prod", "components:\n- ../../components/replicas\n"),
		"overlays/staging/kustomization.yaml":    overlay("staging", ""),
		"components/replicas/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- path: replicas.yaml\n",
		"components/replicas/replicas.yaml":      "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 4\n",
		"remote-a/kustomization.yaml":            remote,
		"remote-b/kustomization.yaml":            remote,
		"chart/Chart.yaml":                       "apiVersion: v2\nname: shop\nversion: 1.0.0\ndependencies:\n- name: redis\n  version: 1.x.x\n  repository: https://charts.example.com\n",
		"chart/templates/cm.yaml":                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shop\n",
	})
	m, err := Read([]string{dir}, nil, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	base := 0
	for _, o := range m.Objects {
		rel, _ := filepath.Rel(dir, o.Source.File)
		switch {
		case rel == filepath.Join("base", "deploy.yaml"):
			base++
		case strings.HasPrefix(rel, "components"):
			t.Errorf("object %s at %s: a component's patch judged on its own", o, rel)
		}
	}
	if base != 1 {
		t.Errorf("base/deploy.yaml's Deployment is %d objects, want 1 (the base and three overlays build it)", base)
	}
	var got []string
	for _, p := range m.Problems {
		rel, _ := filepath.Rel(dir, p.Source.File)
		got = append(got, string(p.Severity)+" "+rel+" "+p.Message+"; "+p.Fix)
		if p.Severity == Error {
			t.Errorf("ERROR %s: %s", rel, p.Message)
		}
	}
	if len(got) != 2 ||
		!strings.HasPrefix(got[0], `WARNING chart/Chart.yaml helm template not run: found in Chart.yaml, but missing in charts/ directory: redis (ladder fetches no chart repository); run `+"`helm dependency build "+filepath.Join(dir, "chart")+"`") ||
		!strings.HasPrefix(got[1], `WARNING remote-a/kustomization.yaml kustomize build not run: resources entry "https://github.com/example/app//deploy/base?ref=v1.2.3" is remote`) {
		t.Errorf("problems:\n %s\nwant the chart's missing dependency and the remote base, once each, as WARNINGs", strings.Join(got, "\n "))
	}
}

// Two charts missing the same dependency are two lines: each says how to
// fetch its own (helm dependency build DIR).
func TestReadReportsEachChartsMissingDependencies(t *testing.T) {
	chart := "apiVersion: v2\nname: %s\nversion: 1.0.0\ndependencies:\n- name: common\n  version: 2.x.x\n  repository: oci://registry-1.docker.io/bitnamicharts\n"
	dir := writeTree(t, map[string]string{
		"a/Chart.yaml":        strings.Replace(chart, "%s", "a", 1),
		"a/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
		"b/Chart.yaml":        strings.Replace(chart, "%s", "b", 1),
		"b/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
	})
	m, err := Read([]string{dir}, nil, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Problems) != 2 || !strings.Contains(m.Problems[0].Fix, filepath.Join(dir, "a")) || !strings.Contains(m.Problems[1].Fix, filepath.Join(dir, "b")) {
		t.Errorf("problems %v, want one per chart", m.Problems)
	}
}
