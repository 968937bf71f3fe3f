package render

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

func TestKustomizeOverlayAppliesPatchesAndConsumesThem(t *testing.T) {
	dir := filepath.Join("testdata", "kustomize", "hello", "overlays", "staging")
	res, err := Kustomize(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 0 {
		t.Fatalf("problems: %v", res.Problems)
	}
	// Legacy order (kubectl apply -k): ConfigMaps, Services, Deployments.
	var got []string
	for _, d := range res.Docs {
		var h objectHead
		if err := yaml.Unmarshal(d.Body, &h); err != nil {
			t.Fatal(err)
		}
		got = append(got, h.Kind+"/"+h.Metadata.Name+" "+d.File+":"+strconv.Itoa(d.Line))
	}
	base := filepath.Join("testdata", "kustomize", "hello", "base")
	want := []string{
		"ConfigMap/staging-extra-" + hashOf(t, res, "staging-extra-") + " " + filepath.Join(dir, "kustomization.yaml") + ":14",
		"ConfigMap/staging-the-map " + filepath.Join(base, "configMap.yaml") + ":1",
		"Service/staging-the-service " + filepath.Join(base, "service.yaml") + ":1",
		"Deployment/staging-the-deployment " + filepath.Join(base, "deployment.yaml") + ":1",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("docs:\n got %q\nwant %q", got, want)
	}

	// The patch was applied: 4 replicas, and the base's selector kept.
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(res.Docs[3].Body, &d); err != nil {
		t.Fatal(err)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 4 {
		t.Errorf("replicas = %v, want 4 (patched)", d.Spec.Replicas)
	}
	if d.Spec.Selector == nil || d.Spec.Selector.MatchLabels["deployment"] != "hello" {
		t.Errorf("selector = %v, want the base's", d.Spec.Selector)
	}
	// No kustomize bookkeeping reaches the checks.
	for _, doc := range res.Docs {
		if bytes.Contains(doc.Body, []byte("config.kubernetes.io")) {
			t.Errorf("internal annotation left in:\n%s", doc.Body)
		}
	}
	// Patches, generator inputs, kustomization files are consumed; so are
	// the rendered resources.
	for _, f := range []string{
		filepath.Join(dir, "kustomization.yaml"),
		filepath.Join(dir, "replicas.yaml"),
		filepath.Join(dir, "map.yaml"),
		filepath.Join(dir, "greeting.properties"),
		filepath.Join(base, "kustomization.yaml"),
		filepath.Join(base, "deployment.yaml"),
	} {
		if !slices.Contains(res.Consumed, f) {
			t.Errorf("Consumed lacks %s: %q", f, res.Consumed)
		}
	}
}

// hashOf returns the generated name suffix kustomize gave the object whose
// name starts with prefix.
func hashOf(t *testing.T, res Result, prefix string) string {
	t.Helper()
	for _, d := range res.Docs {
		var h objectHead
		_ = yaml.Unmarshal(d.Body, &h)
		if strings.HasPrefix(h.Metadata.Name, prefix) {
			return strings.TrimPrefix(h.Metadata.Name, prefix)
		}
	}
	t.Fatalf("no object named %s*", prefix)
	return ""
}

func TestKustomizeFailedBuildIsOneProblem(t *testing.T) {
	for _, tc := range []struct {
		name, dir, file, message string
	}{
		{"missing base", "testdata/kustomize/missing-base", "testdata/kustomize/missing-base/kustomization.yaml", "base-that-is-not-there"},
		{"remote base is not fetched", "testdata/kustomize/remote", "testdata/kustomize/remote/kustomization.yaml", "is remote"},
		{"bases in a cycle", "testdata/kustomize/cycle/a", "testdata/kustomize/cycle/a/kustomization.yaml", "cycle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Kustomize(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Docs) != 0 {
				t.Errorf("docs from a failed build: %d", len(res.Docs))
			}
			if len(res.Problems) != 1 {
				t.Fatalf("problems = %v, want one", res.Problems)
			}
			p := res.Problems[0]
			if p.File != tc.file || !strings.Contains(p.Message, tc.message) || p.Fix == "" || strings.Contains(p.String(), "\n") {
				t.Errorf("problem = %q, want one line at %s about %q with a fix", p, tc.file, tc.message)
			}
			if !slices.Contains(res.Consumed, tc.file) {
				t.Errorf("the kustomization file is not consumed: %q", res.Consumed)
			}
		})
	}
}

func TestKustomizeRemoteProblemPointsAtTheLine(t *testing.T) {
	res, _ := Kustomize("testdata/kustomize/remote")
	if len(res.Problems) != 1 || res.Problems[0].Line != 3 {
		t.Fatalf("problems = %v, want one at line 3", res.Problems)
	}
}

func TestIsRemoteReference(t *testing.T) {
	for ref, want := range map[string]bool{
		"../base":         false,
		"deployment.yaml": false,
		"overlays/prod":   false,
		"https://raw.githubusercontent.com/x/y/main/a.yaml":                   true,
		"github.com/kubernetes-sigs/kustomize/examples/multibases?ref=v1.0.6": true,
		"git::https://example.com/org/repo//base":                             true,
		"git@github.com:org/repo.git//base":                                   true,
		"ssh://git@example.com/org/repo":                                      true,
		"file:///srv/repo//base":                                              true,
	} {
		if got := isRemoteReference(ref); got != want {
			t.Errorf("isRemoteReference(%q) = %v, want %v", ref, got, want)
		}
	}
}

func TestKustomizeIsDeterministic(t *testing.T) {
	dir := "testdata/kustomize/hello/overlays/staging"
	a, err := Kustomize(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Kustomize(dir)
	if !equalResults(a, b) {
		t.Fatal("two builds of the same kustomization differ")
	}
}

func equalResults(a, b Result) bool {
	if len(a.Docs) != len(b.Docs) || !slices.Equal(a.Consumed, b.Consumed) ||
		!slices.Equal(a.Problems, b.Problems) || !slices.Equal(a.Literals, b.Literals) {
		return false
	}
	for i := range a.Docs {
		if a.Docs[i].File != b.Docs[i].File || a.Docs[i].Line != b.Docs[i].Line || !bytes.Equal(a.Docs[i].Body, b.Docs[i].Body) {
			return false
		}
	}
	return true
}

func TestKustomizeRefusesOversizedResource(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "kustomization.yaml"), "resources:\n- big.yaml\n")
	f, err := os.Create(filepath.Join(dir, "big.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil { // sparse: nothing written
		t.Fatal(err)
	}
	f.Close()
	res, err := Kustomize(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Message, "limit") {
		t.Fatalf("problems = %v, want the size limit", res.Problems)
	}
}

func TestKustomizationFileIsNotAnObject(t *testing.T) {
	if k, ok := Kind("testdata/kustomize/hello/overlays/staging"); !ok || k != Kustomization {
		t.Fatalf("Kind = %v %v", k, ok)
	}
	if k, ok := Kind("testdata/helm/legacy"); !ok || k != Chart {
		t.Fatalf("Kind = %v %v", k, ok)
	}
	if _, ok := Kind("testdata"); ok {
		t.Fatal("testdata is neither")
	}
}
