package insights

import (
	"testing"

	"github.com/ladder-eks/ladder/internal/insights/deprecations"
)

const nodePoolV1beta1 = `apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {name: default}
`

const certificateV1alpha2 = `apiVersion: cert-manager.io/v1alpha2
kind: Certificate
metadata: {name: web, namespace: shop}
spec:
  secretName: web-tls
`

const tgbV1alpha1 = `apiVersion: elbv2.k8s.aws/v1alpha1
kind: TargetGroupBinding
metadata: {name: web, namespace: shop}
`

// withVersions runs check id over manifests with an --additional-versions
// file over the shipped table ("" for none).
func withVersions(t *testing.T, id, manifests, versions string) []Finding {
	t.Helper()
	in := input(t, "", "1.31", manifests)
	if versions != "" {
		f, err := deprecations.ParseVersionsFile("versions.yaml", []byte(versions))
		if err != nil {
			t.Fatal(err)
		}
		in.APIs = deprecations.Shipped().WithVersionsFile(f, "versions.yaml")
	}
	return runCheck(t, id, in)
}

// TestCustomResourceAPI checks the severity rule: ERROR (removed-api) only
// when the cluster's component version is known and no longer serves the
// version; WARNING (deprecated-api) when it is unknown or only deprecates it.
func TestCustomResourceAPI(t *testing.T) {
	karpenterAt := func(v string) string { return "target-versions:\n  karpenter: " + v + "\n" }
	tests := []struct {
		name, manifests, versions string
		removed, deprecated       []want
	}{
		{name: "Karpenter version unknown", manifests: nodePoolV1beta1,
			deprecated: []want{{Warning, "NodePool default", "apiVersion", []string{"Karpenter v1.1.0 no longer serves karpenter.sh/v1beta1 NodePool: it is served only by Karpenter < v1.1.0 (deprecated in v1.0.0)",
				"Migrate to karpenter.sh/v1 NodePool: change apiVersion to karpenter.sh/v1, following Karpenter's upgrade guide, before Karpenter is upgraded to v1.1.0", "target-versions"}}}},
		{name: "Karpenter v1.2.0 no longer serves it", manifests: nodePoolV1beta1, versions: karpenterAt("v1.2.0"),
			removed: []want{{Error, "NodePool default", "apiVersion", []string{"karpenter.sh/v1beta1 NodePool is no longer served from Karpenter v1.1.0 (deprecated in v1.0.0); the cluster runs Karpenter v1.2.0"}}}},
		{name: "Karpenter v1.0.5 deprecates it", manifests: nodePoolV1beta1, versions: karpenterAt("v1.0.5"),
			deprecated: []want{{Warning, "NodePool default", "apiVersion", []string{"deprecated since Karpenter v1.0.0 and no longer served from Karpenter v1.1.0; the cluster runs Karpenter v1.0.5"}}}},
		{name: "Karpenter v0.37.0 serves it", manifests: nodePoolV1beta1, versions: karpenterAt("v0.37.0")},
		{name: "a v1alpha5 Provisioner renames the kind", manifests: "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {name: default}\n", versions: karpenterAt("v1.0.0"),
			removed: []want{{Error, "Provisioner default", "apiVersion", []string{"no longer served from Karpenter v0.33.0", "change apiVersion to karpenter.sh/v1 and kind to NodePool"}}}},
		{name: "cert-manager, version unknown", manifests: certificateV1alpha2,
			deprecated: []want{{Warning, "Certificate shop/web", "apiVersion", []string{"cert-manager v1.6.0 no longer serves cert-manager.io/v1alpha2 Certificate"}}}},
		{name: "AWS Load Balancer Controller v1alpha1 is only deprecated", manifests: tgbV1alpha1,
			deprecated: []want{{Warning, "TargetGroupBinding shop/web", "apiVersion", []string{"deprecated since AWS Load Balancer Controller v2.2.0; no removal is scheduled", "elbv2.k8s.aws/v1beta1"}}}},
		{name: "a file's row overrides the shipped one", manifests: nodePoolV1beta1, versions: karpenterAt("v1.1.5") + `deprecated-versions:
  - version: karpenter.sh/v1beta1
    kind: NodePool
    deprecated-in: v1.0.0
    removed-in: v1.2.0
    replacement-api: karpenter.sh/v1
    component: karpenter
`, deprecated: []want{{Warning, "NodePool default", "apiVersion", []string{"no longer served from Karpenter v1.2.0; the cluster runs Karpenter v1.1.5"}}}},
		{name: "a component of the user's own", manifests: "apiVersion: widgets.example.com/v1alpha1\nkind: Widget\nmetadata: {name: w, namespace: shop}\n", versions: `target-versions:
  widgets: v3.0.0
deprecated-versions:
  - version: widgets.example.com/v1alpha1
    kind: Widget
    deprecated-in: v2.0.0
    removed-in: v3.0.0
    replacement-api: widgets.example.com/v1
    component: widgets
`, removed: []want{{Error, "Widget shop/w", "apiVersion", []string{"widgets.example.com/v1alpha1 Widget is no longer served from widgets v3.0.0 (deprecated in v2.0.0); the cluster runs widgets v3.0.0"}}}},
		{name: "current versions pass", manifests: "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\n---\n" + certManagerCR},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expectFindings(t, withVersions(t, "removed-api", tt.manifests, tt.versions), tt.removed)
			expectFindings(t, withVersions(t, "deprecated-api", tt.manifests, tt.versions), tt.deprecated)
		})
	}
}

// TestAdditionalKubernetesRow checks a k8s row of a versions file overrides
// the shipped row (policy/v1beta1 PodDisruptionBudget, removed in 1.25).
func TestAdditionalKubernetesRow(t *testing.T) {
	got := withVersions(t, "removed-api", pdbV1beta1, `deprecated-versions:
  - version: policy/v1beta1
    kind: PodDisruptionBudget
    deprecated-in: v1.20.0
    removed-in: v1.30.0
    replacement-api: policy/v1
    component: k8s
`)
	expectFindings(t, got, []want{{Error, "PodDisruptionBudget shop/web", "apiVersion", []string{"no longer served from Kubernetes 1.30 (deprecated in 1.20)", "Migrate to policy/v1 PodDisruptionBudget"}}})
}
