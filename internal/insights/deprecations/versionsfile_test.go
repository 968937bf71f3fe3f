package deprecations

import (
	"strings"
	"testing"
)

// plutoSnippet is the head of pluto's own versions.yaml
// (FairwindsOps/pluto, versions.yaml) with its target-versions.
const plutoSnippet = `target-versions:
  k8s: v1.22.0
  cert-manager: v1.5.3
  istio: v1.11.0
deprecated-versions:
- version: extensions/v1beta1
  kind: Deployment
  deprecated-in: v1.9.0
  removed-in: v1.16.0
  replacement-api: apps/v1
  replacement-available-in: v1.9.0
  component: k8s
- version: networking.istio.io/v1alpha3
  kind: ""
  deprecated-in: v1.5.0
  removed-in: ""
  replacement-api: networking.istio.io/v1beta1
  component: istio
- version: certmanager.k8s.io/v1alpha1
  kind: Challenge
  deprecated-in: v0.11.0
  removed-in: v0.11.0
  replacement-api: cert-manager.io/v1alpha2
  component: cert-manager
`

func TestParseVersionsFilePluto(t *testing.T) {
	f, err := ParseVersionsFile("versions.yaml", []byte(plutoSnippet))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Rows) != 3 || f.Targets["cert-manager"] != "v1.5.3" || f.Rows[2].Line != 19 || f.Rows[1].Kind != "" {
		t.Fatalf("%+v", f)
	}
	tab := Shipped().WithVersionsFile(f, "versions.yaml")
	// A k8s row overrides the shipped one.
	if e, ok := tab.Lookup("extensions/v1beta1", "Deployment"); !ok || e.Deprecated.String() != "1.9" || e.Source != "versions.yaml:6" || e.Replacement() != "apps/v1 Deployment" {
		t.Errorf("k8s row: %+v", e)
	}
	// A row without kind covers every kind of its apiVersion.
	if e, ok := tab.LookupComponent("networking.istio.io/v1alpha3", "VirtualService"); !ok || e.Component != "istio" || e.Removed != "" || e.Replacement() != "networking.istio.io/v1beta1 VirtualService" {
		t.Errorf("istio row: %+v", e)
	}
	if v, raw, ok := tab.ComponentVersion("cert-manager"); !ok || raw != "v1.5.3" || v.String() != "1.5.3" {
		t.Errorf("cert-manager version %v %q %v", v, raw, ok)
	}
	if _, _, ok := tab.ComponentVersion("k8s"); ok {
		t.Error("the k8s target is --target's")
	}
}

func TestParseVersionsFileErrors(t *testing.T) {
	row := "deprecated-versions:\n- version: example.com/v1alpha1\n  kind: Widget\n  deprecated-in: v1.0.0\n  component: widgets\n"
	tests := []struct{ name, data, want string }{
		{"unknown top-level field", "target-version:\n  karpenter: v1.0.0\n", "f.yaml:1: target-version: unknown field"},
		{"unknown row field", row + "  removed_in: v2.0.0\n", "f.yaml:6: deprecated-versions[0].removed_in: unknown field; a row has version, kind"},
		{"bad version", strings.Replace(row, "v1.0.0", "one", 1), `f.yaml:4: deprecated-versions[0].deprecated-in: "one" is not a version; write it as v1.1.0`},
		{"bad apiVersion", strings.Replace(row, "example.com/v1alpha1", "a/b/c", 1), `f.yaml:2: deprecated-versions[0].version: "a/b/c" is not an apiVersion`},
		{"no component", strings.Replace(row, "  component: widgets\n", "", 1), "f.yaml:2: deprecated-versions[0].component: missing; set k8s"},
		{"nothing deprecated", strings.Replace(row, "  deprecated-in: v1.0.0\n", "", 1), "f.yaml:2: deprecated-versions[0]: neither deprecated-in nor removed-in is set"},
		{"removed first", row + "  removed-in: v0.9.0\n", "f.yaml:2: deprecated-versions[0].removed-in: v0.9.0 is before deprecated-in v1.0.0"},
		{"twice", row + strings.TrimPrefix(row, "deprecated-versions:\n"), "f.yaml:6: deprecated-versions[1]: example.com/v1alpha1 Widget is also at line 2"},
		{"repeated key", row + "  kind: Gadget\n", "f.yaml:6: deprecated-versions[0].kind appears twice"},
		{"list for a string", row + "  replacement-api: [a]\n", "f.yaml:6: deprecated-versions[0].replacement-api: want a string, got a list"},
		{"bad target", "target-versions:\n  karpenter: latest\n", `f.yaml:2: target-versions.karpenter: "latest" is not a version`},
		{"k8s row with a component version", "deprecated-versions:\n- version: apps/v1\n  kind: Deployment\n  removed-in: v2.0.0\n  component: k8s\n", "f.yaml:2: deprecated-versions[0]: \"v2.0.0\" is not a Kubernetes 1.x version"},
		{"malformed", "deprecated-versions: [\n", "f.yaml: "},
		{"empty", "", "f.yaml: the file is empty"},
		{"not a map", "- a\n", "f.yaml:1: want a map"},
	}
	for _, tt := range tests {
		_, err := ParseVersionsFile("f.yaml", []byte(tt.data))
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %q, want one line starting %q", tt.name, err, tt.want)
		}
	}
}

func TestShippedComponents(t *testing.T) {
	tests := []struct{ apiVersion, kind, component, deprecated, removed, replacement string }{
		{"karpenter.sh/v1alpha5", "Provisioner", "karpenter", "v0.32.0", "v0.33.0", "karpenter.sh/v1 NodePool"},
		{"karpenter.k8s.aws/v1alpha1", "AWSNodeTemplate", "karpenter", "v0.32.0", "v0.33.0", "karpenter.k8s.aws/v1 EC2NodeClass"},
		{"karpenter.sh/v1beta1", "NodePool", "karpenter", "v1.0.0", "v1.1.0", "karpenter.sh/v1 NodePool"},
		{"karpenter.sh/v1beta1", "NodeClaim", "karpenter", "v1.0.0", "v1.1.0", "karpenter.sh/v1 NodeClaim"},
		{"karpenter.k8s.aws/v1beta1", "EC2NodeClass", "karpenter", "v1.0.0", "v1.1.0", "karpenter.k8s.aws/v1 EC2NodeClass"},
		{"cert-manager.io/v1alpha2", "Certificate", "cert-manager", "v1.4.0", "v1.6.0", "cert-manager.io/v1 Certificate"},
		{"acme.cert-manager.io/v1beta1", "Order", "cert-manager", "v1.4.0", "v1.6.0", "acme.cert-manager.io/v1 Order"},
		{"elbv2.k8s.aws/v1alpha1", "TargetGroupBinding", "aws-load-balancer-controller", "v2.2.0", "", "elbv2.k8s.aws/v1beta1 TargetGroupBinding"},
		// pluto's versions.yaml: cert-manager's group before v0.11, and
		// Istio's v1alpha1 security APIs.
		{"certmanager.k8s.io/v1alpha1", "Certificate", "cert-manager", "v0.11.0", "v0.11.0", "cert-manager.io/v1 Certificate"},
		{"certmanager.k8s.io/v1alpha1", "ClusterIssuer", "cert-manager", "v0.11.0", "v0.11.0", "cert-manager.io/v1 ClusterIssuer"},
		{"certmanager.k8s.io/v1alpha1", "Challenge", "cert-manager", "v0.11.0", "v0.11.0", "acme.cert-manager.io/v1 Challenge"},
		{"authentication.istio.io/v1alpha1", "Policy", "istio", "v1.4.0", "v1.6.0", "security.istio.io/v1beta1 PeerAuthentication"},
		{"rbac.istio.io/v1alpha1", "ServiceRoleBinding", "istio", "v1.4.0", "v1.6.0", "security.istio.io/v1beta1 AuthorizationPolicy"},
	}
	for _, tt := range tests {
		e, ok := Shipped().LookupComponent(tt.apiVersion, tt.kind)
		if !ok || e.Component != tt.component || e.Deprecated != tt.deprecated || e.Removed != tt.removed || e.Replacement() != tt.replacement {
			t.Errorf("%s %s: %v %+v", tt.apiVersion, tt.kind, ok, e)
		}
	}
	for _, k := range [][2]string{{"karpenter.sh/v1", "NodePool"}, {"cert-manager.io/v1", "Certificate"}, {"elbv2.k8s.aws/v1beta1", "TargetGroupBinding"}} {
		if _, ok := Shipped().LookupComponent(k[0], k[1]); ok {
			t.Errorf("%s %s is in the table", k[0], k[1])
		}
	}
}
