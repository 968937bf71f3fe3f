package render

import (
	"path/filepath"
	"slices"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"sigs.k8s.io/yaml"

	"github.com/ladder-eks/ladder/internal/insights/deprecations"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// upstream is a chart vendored from a public repository
// (testdata/helm/upstream/README.md).
func upstream(name string) string { return filepath.Join("testdata", "helm", "upstream", name) }

// targetOptions are the options `ladder check --target v` renders with.
func targetOptions(v string, set ...string) HelmOptions {
	return HelmOptions{KubeVersion: v, APIVersions: deprecations.ServedAt(kubeversion.MustParse(v)), Set: set}
}

// apiVersionsOf lists "apiVersion Kind" of the rendered docs.
func apiVersionsOf(t *testing.T, docs []Doc) []string {
	t.Helper()
	var out []string
	for _, d := range docs {
		var h struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(d.Body, &h); err != nil {
			t.Fatal(err)
		}
		out = append(out, h.APIVersion+" "+h.Kind)
	}
	return out
}

func literalsOf(ls []Literal) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.APIVersion+" "+l.Kind)
	}
	return out
}

// prometheus-pingmesh-exporter picks policy/v1 when
// .Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget" — the kind
// entry a cluster's discovery gives and Helm's default set lacks, so
// `helm template` renders policy/v1beta1, which 1.25 removed.
func TestHelmRendersWithTheTargetsAPIVersions(t *testing.T) {
	dir := upstream("prometheus-pingmesh-exporter")
	res, err := Helm(dir, targetOptions("1.32", "podDisruptionBudget.maxUnavailable=1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 0 {
		t.Fatalf("problems: %v", res.Problems)
	}
	if got := apiVersionsOf(t, res.Docs); !slices.Equal(got, []string{"policy/v1 PodDisruptionBudget"}) {
		t.Fatalf("rendered %q, want policy/v1 PodDisruptionBudget (the target serves policy/v1/PodDisruptionBudget)", got)
	}

	// Off under the default values: the template is scanned, and only the
	// branch the target takes is reported, saying so.
	res, err = Helm(dir, targetOptions("1.32"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Docs) != 0 || len(res.Problems) != 0 {
		t.Fatalf("docs %d problems %v, want none", len(res.Docs), res.Problems)
	}
	want := []Literal{{File: filepath.Join(dir, "templates", "poddisruptionbudget.yaml"), Line: 3, APIVersion: "policy/v1", Kind: "PodDisruptionBudget",
		Branch: "the {{ if }} branch the target takes of a .Capabilities check at line 2"}}
	if !slices.Equal(res.Literals, want) {
		t.Errorf("literals:\n got %v\nwant %v", res.Literals, want)
	}

	// A target before policy/v1: the other branch, said so.
	res, err = Helm(dir, targetOptions("1.20"))
	if err != nil {
		t.Fatal(err)
	}
	if got := literalsOf(res.Literals); !slices.Equal(got, []string{"policy/v1beta1 PodDisruptionBudget"}) || res.Literals[0].Branch != "the {{ else }} branch the target takes of a .Capabilities check at line 2" {
		t.Errorf("literals at 1.20: %v, want policy/v1beta1 in the {{ else }} branch, which 1.20 takes", res.Literals)
	}
}

// prometheus-couchdb-exporter gates a PodSecurityPolicy on
// `and .Values.rbac.pspEnabled (.Capabilities.APIVersions.Has
// "policy/v1beta1/PodSecurityPolicy")` (pspEnabled is true by default) and
// an Ingress on extensions/v1beta1/Ingress: neither is reported on a target
// that does not serve them, whatever the values; on 1.24 the
// PodSecurityPolicy renders, as it would on the cluster.
func TestHelmCapabilitiesGatesFollowTheTarget(t *testing.T) {
	dir := upstream("prometheus-couchdb-exporter")
	res, err := Helm(dir, targetOptions("1.32"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 0 || len(res.Docs) != 0 {
		t.Fatalf("problems %v docs %q, want none", res.Problems, apiVersionsOf(t, res.Docs))
	}
	if len(res.Literals) != 0 {
		t.Errorf("literals at 1.32: %v, want none: the target serves neither API, so neither branch can render", res.Literals)
	}

	res, err = Helm(dir, targetOptions("1.24"))
	if err != nil {
		t.Fatal(err)
	}
	if got := apiVersionsOf(t, res.Docs); !slices.Equal(got, []string{"policy/v1beta1 PodSecurityPolicy"}) {
		t.Errorf("rendered at 1.24: %q, want the PodSecurityPolicy 1.24 still serves", got)
	}
	if len(res.Literals) != 0 {
		t.Errorf("literals at 1.24: %v, want none (extensions/v1beta1 Ingress is gone since 1.22)", res.Literals)
	}
}

// bitnami/nginx's PodDisruptionBudget takes its apiVersion from bitnami
// common 2.30.2's common.capabilities.policy.apiVersion, a semverCompare
// on .Capabilities.KubeVersion.Version: the target decides it.
func TestHelmKubeVersionIsTheTarget(t *testing.T) {
	dir := upstream("bitnami-nginx")
	for v, want := range map[string]string{"1.32": "policy/v1 PodDisruptionBudget", "1.20": "policy/v1beta1 PodDisruptionBudget"} {
		res, err := Helm(dir, targetOptions(v))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Problems) != 0 {
			t.Fatalf("%s: problems %v", v, res.Problems)
		}
		if got := apiVersionsOf(t, res.Docs); !slices.Equal(got, []string{want}) {
			t.Errorf("%s: rendered %q, want %s", v, got, want)
		}
	}
}

func TestCapabilityDecider(t *testing.T) {
	kv := targetOptions("1.32")
	caps := targetCapabilities(mustKubeVersion(t, "1.32"), kv.APIVersions)
	decide := capabilityDecider(caps)
	for cond, want := range map[string][2]bool{
		`semverCompare ">=1.21-0" .Capabilities.KubeVersion.GitVersion`:                      {true, true},
		`semverCompare "<1.14-0" .Capabilities.KubeVersion.Version`:                          {false, true},
		`.Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget"`:                      {true, true},
		`$.Capabilities.APIVersions.Has "policy/v1beta1"`:                                    {false, true},
		`and .Values.psp (.Capabilities.APIVersions.Has "policy/v1beta1/PodSecurityPolicy")`: {false, true},
		`or .Values.force (.Capabilities.APIVersions.Has "autoscaling/v2")`:                  {true, true},
		`not (.Capabilities.APIVersions.Has "batch/v1beta1/CronJob")`:                        {true, true},
		`and .Values.psp (.Capabilities.APIVersions.Has "policy/v1")`:                        {false, false},
		`.Values.ingress.enabled`:                              {false, false},
		`semverCompare ">=1.21-0" (include "x.kubeVersion" .)`: {false, false},
		`semverCompare ">=1.21-0" $kubeTargetVersion`:          {false, false},
		`eq .Chart.Name .Capabilities.KubeVersion.Major`:       {false, false},
	} {
		taken, ok := decide(cond)
		if [2]bool{taken, ok} != want {
			t.Errorf("%s: taken %v ok %v, want %v", cond, taken, ok, want)
		}
	}
}

func mustKubeVersion(t *testing.T, v string) *common.KubeVersion {
	t.Helper()
	kv, err := common.ParseKubeVersion(v)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}
