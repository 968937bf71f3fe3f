package deprecations

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/insights/deprecations/lifecycle"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// TestGeneratedUpToDate re-runs the generator in memory: apis_generated.csv
// must be exactly what k8s.io/api's lifecycle methods give today.
func TestGeneratedUpToDate(t *testing.T) {
	version := requiredVersion(t, "k8s.io/api")
	want, err := lifecycle.Render(version)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(generatedCSV, want) {
		t.Fatalf("apis_generated.csv is out of date with k8s.io/api %s: run `go generate ./internal/insights/deprecations` and review the diff", version)
	}
}

func TestKnownEntries(t *testing.T) {
	tests := []struct {
		apiVersion, kind    string
		deprecated, removed string // "" for none
		replacement         string
		source              string
	}{
		{"policy/v1beta1", "PodDisruptionBudget", "1.21", "1.25", "policy/v1 PodDisruptionBudget", "k8s.io/api, migration guide"},
		{"flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", "1.29", "1.32", "flowcontrol.apiserver.k8s.io/v1 FlowSchema", "k8s.io/api"},
		{"flowcontrol.apiserver.k8s.io/v1beta2", "PriorityLevelConfiguration", "1.26", "1.29", "flowcontrol.apiserver.k8s.io/v1beta3 PriorityLevelConfiguration", "k8s.io/api, migration guide"},
		{"flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema", "1.23", "1.26", "flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema", "k8s.io/api"},
		{"extensions/v1beta1", "Deployment", "1.8", "1.16", "apps/v1 Deployment", "k8s.io/api, migration guide"},
		{"apps/v1beta2", "StatefulSet", "1.9", "1.16", "apps/v1 StatefulSet", "k8s.io/api, migration guide"},
		{"extensions/v1beta1", "Ingress", "1.14", "1.22", "networking.k8s.io/v1 Ingress", "k8s.io/api, migration guide"},
		{"networking.k8s.io/v1beta1", "IngressClass", "1.19", "1.22", "networking.k8s.io/v1 IngressClass", "k8s.io/api, migration guide"},
		{"rbac.authorization.k8s.io/v1beta1", "ClusterRoleBinding", "1.17", "1.22", "rbac.authorization.k8s.io/v1 ClusterRoleBinding", "k8s.io/api"},
		{"apiextensions.k8s.io/v1beta1", "CustomResourceDefinition", "1.16", "1.22", "apiextensions.k8s.io/v1 CustomResourceDefinition", "migration guide"},
		{"batch/v1beta1", "CronJob", "1.21", "1.25", "batch/v1 CronJob", "k8s.io/api, migration guide"},
		{"policy/v1beta1", "PodSecurityPolicy", "1.21", "1.25", "", "migration guide"},
		{"autoscaling/v2beta1", "HorizontalPodAutoscaler", "1.22", "1.25", "autoscaling/v2 HorizontalPodAutoscaler", "migration guide"},
		{"autoscaling/v2beta2", "HorizontalPodAutoscaler", "1.23", "1.26", "autoscaling/v2 HorizontalPodAutoscaler", "migration guide"},
		{"storage.k8s.io/v1beta1", "CSIStorageCapacity", "1.24", "1.27", "storage.k8s.io/v1 CSIStorageCapacity", "k8s.io/api"},
		{"node.k8s.io/v1beta1", "RuntimeClass", "1.22", "1.25", "node.k8s.io/v1 RuntimeClass", "k8s.io/api, migration guide"},
		{"v1", "Endpoints", "1.33", "", "discovery.k8s.io/v1 EndpointSlice", "k8s.io/api"},
	}
	for _, tt := range tests {
		t.Run(tt.apiVersion+" "+tt.kind, func(t *testing.T) {
			e, ok := Lookup(tt.apiVersion, tt.kind)
			if !ok {
				t.Fatal("not in the table")
			}
			if got := minorString(e.Deprecated); got != tt.deprecated {
				t.Errorf("deprecated %q, want %q", got, tt.deprecated)
			}
			if got := minorString(e.Removed); got != tt.removed {
				t.Errorf("removed %q, want %q", got, tt.removed)
			}
			if e.Replacement() != tt.replacement {
				t.Errorf("replacement %q, want %q", e.Replacement(), tt.replacement)
			}
			if e.Source != tt.source {
				t.Errorf("source %q, want %q", e.Source, tt.source)
			}
		})
	}
}

func TestNotInTable(t *testing.T) {
	for _, k := range [][2]string{{"apps/v1", "Deployment"}, {"policy/v1", "PodDisruptionBudget"}, {"karpenter.sh/v1", "NodePool"}, {"v1", "ConfigMap"}} {
		if e, ok := Lookup(k[0], k[1]); ok {
			t.Errorf("%s %s is in the table: %+v", k[0], k[1], e)
		}
	}
}

// TestEveryGuideRelease checks the table has the removals of each release
// the migration guide lists.
func TestEveryGuideRelease(t *testing.T) {
	removedIn := map[string]int{}
	for _, e := range All() {
		if !e.Removed.IsZero() {
			removedIn[e.Removed.String()]++
		}
		if !e.Removed.IsZero() && e.Removed.Less(e.Deprecated) {
			t.Errorf("%s %s removed %s before deprecated %s", e.APIVersion, e.Kind, e.Removed, e.Deprecated)
		}
	}
	for _, v := range []string{"1.16", "1.22", "1.25", "1.26", "1.27", "1.29", "1.32"} {
		if removedIn[v] == 0 {
			t.Errorf("no removal in %s", v)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	gen := []byte("api_version,kind,introduced,deprecated,removed,replacement\n")
	tests := map[string]string{
		"bad header":      "a,b,c,d,e,f\n",
		"no deprecation":  "api_version,kind,deprecated,removed,replacement,note\nfoo/v1beta1,Foo,,,,\n",
		"bad version":     "api_version,kind,deprecated,removed,replacement,note\nfoo/v1beta1,Foo,one,,,\n",
		"removed first":   "api_version,kind,deprecated,removed,replacement,note\nfoo/v1beta1,Foo,1.20,1.19,,\n",
		"bad replacement": "api_version,kind,deprecated,removed,replacement,note\nfoo/v1beta1,Foo,1.20,1.22,foo,\n",
	}
	for name, guide := range tests {
		if _, err := build(gen, []byte(guide)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// requiredVersion reads a module's version from the repository's go.mod
// (test binaries carry no build information about their dependencies).
func requiredVersion(t *testing.T, module string) string {
	t.Helper()
	data, err := os.ReadFile("../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == module {
			return f[1]
		}
	}
	t.Fatalf("go.mod does not require %s", module)
	return ""
}

func minorString(v kubeversion.Minor) string {
	if v.IsZero() {
		return ""
	}
	return v.String()
}

// TestReplacementServedAtEveryTarget walks every row at every target the
// tool accepts: the recommended apiVersion is served at the target, is not
// the row's own, and a row with a replacement always gets one while any
// version of its kind (or its replacement's) is served.
func TestReplacementServedAtEveryTarget(t *testing.T) {
	loadOnce.Do(load)
	versionsOnce.Do(func() { versions = versionsOf() })
	// Subresource and review kinds whose recorded replacement is not an
	// object kind a manifest holds.
	noObject := map[string]bool{"apps/v1beta1 DeploymentRollback": true, "extensions/v1beta1 DeploymentRollback": true,
		"apps/v1beta1 Scale": true, "apps/v1beta2 Scale": true, "extensions/v1beta1 Scale": true}
	for _, e := range All() {
		for m := MinCovered.Minor; m <= MaxCovered.Minor+3; m++ {
			target := kubeversion.Minor{Major: 1, Minor: m}
			if !e.DeprecatedBy(target) {
				continue
			}
			av, kind, introduced, ok := ReplacementAt(e, target)
			if !ok {
				if e.Replacement() != "" && !noObject[e.APIVersion+" "+e.Kind] && !e.RemovedBy(target) {
					t.Errorf("%s %s at %s: deprecated for %s, which is not served", e.APIVersion, e.Kind, target, e.Replacement())
				}
				continue
			}
			if av == e.APIVersion && kind == e.Kind {
				t.Errorf("%s %s at %s: recommends itself", e.APIVersion, e.Kind, target)
			}
			if target.Less(introduced) {
				t.Errorf("%s %s at %s: recommends %s %s, served only from %s", e.APIVersion, e.Kind, target, av, kind, introduced)
			}
			if r, listed := Lookup(av, kind); listed && r.RemovedBy(target) {
				t.Errorf("%s %s at %s: recommends %s %s, removed in %s", e.APIVersion, e.Kind, target, av, kind, r.Removed)
			}
		}
	}
}

func TestReplacementAt(t *testing.T) {
	tests := []struct {
		apiVersion, kind, target string
		want                     string // "" for none
	}{
		{"flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema", "1.27", "flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema"},
		{"flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema", "1.29", "flowcontrol.apiserver.k8s.io/v1 FlowSchema"},
		{"flowcontrol.apiserver.k8s.io/v1beta1", "PriorityLevelConfiguration", "1.32", "flowcontrol.apiserver.k8s.io/v1 PriorityLevelConfiguration"},
		{"flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", "1.32", "flowcontrol.apiserver.k8s.io/v1 FlowSchema"},
		{"extensions/v1beta1", "Ingress", "1.18", "networking.k8s.io/v1beta1 Ingress"},
		{"extensions/v1beta1", "Ingress", "1.22", "networking.k8s.io/v1 Ingress"},
		{"extensions/v1beta1", "PodSecurityPolicy", "1.20", "policy/v1beta1 PodSecurityPolicy"},
		{"extensions/v1beta1", "PodSecurityPolicy", "1.25", ""},
		{"policy/v1beta1", "PodSecurityPolicy", "1.25", ""},
		{"batch/v2alpha1", "CronJob", "1.20", "batch/v1beta1 CronJob"},
		{"batch/v2alpha1", "CronJob", "1.21", "batch/v1 CronJob"},
		{"extensions/v1beta1", "ThirdPartyResource", "1.16", "apiextensions.k8s.io/v1 CustomResourceDefinition"},
		{"v1", "Endpoints", "1.33", "discovery.k8s.io/v1 EndpointSlice"},
		{"admissionregistration.k8s.io/v1alpha1", "ValidatingAdmissionPolicy", "1.32", "admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy"},
		{"autoscaling/v2beta1", "HorizontalPodAutoscaler", "1.22", "autoscaling/v2beta2 HorizontalPodAutoscaler"},
		{"autoscaling/v2beta1", "HorizontalPodAutoscaler", "1.25", "autoscaling/v2 HorizontalPodAutoscaler"},
	}
	for _, tt := range tests {
		e, ok := Lookup(tt.apiVersion, tt.kind)
		if !ok {
			t.Fatalf("%s %s not in the table", tt.apiVersion, tt.kind)
		}
		av, kind, _, ok := ReplacementAt(e, kubeversion.MustParse(tt.target))
		got := ""
		if ok {
			got = av + " " + kind
		}
		if got != tt.want {
			t.Errorf("%s %s at %s: %q, want %q", tt.apiVersion, tt.kind, tt.target, got, tt.want)
		}
	}
}

// TestRemovedSince18 checks the removals before 1.16 and of alpha APIs that
// k8s.io/api no longer describes.
func TestRemovedSince18(t *testing.T) {
	for _, k := range []struct{ apiVersion, kind, removed string }{
		{"batch/v2alpha1", "CronJob", "1.21"},
		{"settings.k8s.io/v1alpha1", "PodPreset", "1.20"},
		{"auditregistration.k8s.io/v1alpha1", "AuditSink", "1.19"},
		{"admissionregistration.k8s.io/v1alpha1", "InitializerConfiguration", "1.14"},
		{"extensions/v1beta1", "Job", "1.8"},
		{"extensions/v1beta1", "ThirdPartyResource", "1.8"},
		{"node.k8s.io/v1alpha1", "RuntimeClass", "1.22"},
		{"resource.k8s.io/v1alpha2", "ResourceClaim", "1.31"},
	} {
		e, ok := Lookup(k.apiVersion, k.kind)
		if !ok || e.Removed.String() != k.removed {
			t.Errorf("%s %s: in table %v, removed %s, want %s", k.apiVersion, k.kind, ok, e.Removed, k.removed)
		}
	}
}
