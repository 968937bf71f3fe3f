package cli

import (
	"strings"
	"testing"
)

// TestCheckRendersChartsWithValuesAndTarget: a chart under -f is rendered
// as helm template renders it — --values and --set apply, the target is
// the Kubernetes version its templates see — and findings point at the
// template's file and line. Without rendering, the same chart is template
// source, skipped.
func TestCheckRendersChartsWithValuesAndTarget(t *testing.T) {
	dir := t.TempDir()
	writeCheckFile(t, dir, "shop/Chart.yaml", "apiVersion: v2\nname: shop\nversion: 1.0.0\n")
	writeCheckFile(t, dir, "shop/values.yaml", "replicas: 1\nlegacy: false\n")
	writeCheckFile(t, dir, "more.yaml", "legacy: true\n")
	// The budget's apiVersion follows the cluster's version, as real
	// charts do (bitnami's common.capabilities.policy.apiVersion); a flag
	// turns a legacy API on.
	writeCheckFile(t, dir, "shop/templates/pdb.yaml", `{{- if semverCompare ">=1.21-0" .Capabilities.KubeVersion.Version }}
apiVersion: policy/v1
{{- else }}
apiVersion: policy/v1beta1
{{- end }}
kind: PodDisruptionBudget
metadata:
  name: {{ .Release.Name }}-web
spec:
  minAvailable: 1
  selector:
    matchLabels:
      app: web
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx
`)
	writeCheckFile(t, dir, "shop/templates/ingress.yaml", `{{- if .Values.legacy }}
apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: {{ .Release.Name }}
{{- end }}
`)

	// Default values: one replica with minAvailable 1 blocks every drain;
	// the PDB is policy/v1 at 1.32; the disabled legacy Ingress is found in
	// the template's source all the same.
	_, stdout, stderr := runLadder("check", "-f", dir, "--target", "1.32")
	for _, want := range [][]string{
		{"ERROR", "pdb-blocks-drain", "PodDisruptionBudget release-name-web", "shop/templates/pdb.yaml:1"},
		{"ERROR", "removed-api", "Ingress", "shop/templates/ingress.yaml:2", "extensions/v1beta1"},
	} {
		if !hasLineWith(stdout, want...) {
			t.Errorf("default values: no line with %q in\n%s%s", want, stdout, stderr)
		}
	}
	if strings.Contains(stdout, "policy/v1beta1") {
		t.Errorf("the target 1.32 did not reach .Capabilities.KubeVersion:\n%s", stdout)
	}

	// --set replicas=3 and --values with legacy: true: the budget allows a
	// disruption, and the rendered Ingress is a removed API at 1.32.
	_, stdout, stderr = runLadder("check", "-f", dir, "--target", "1.32", "--values", dir+"/more.yaml", "--set", "replicas=3", "--fail-on", "WARNING")
	if strings.Contains(stdout, "pdb-blocks-drain") {
		t.Errorf("--set replicas=3 did not reach the chart:\n%s", stdout)
	}
	if !strings.Contains(stdout, "Ingress release-name") {
		t.Errorf("--values legacy: true did not render the Ingress:\n%s%s", stdout, stderr)
	}

	// --no-render: the templates are source, skipped and counted.
	_, stdout, _ = runLadder("check", "-f", dir, "--target", "1.32", "--no-render")
	if strings.Contains(stdout, "pdb-blocks-drain") || !strings.Contains(stdout, "unrendered Helm/Go template") {
		t.Errorf("--no-render:\n%s", stdout)
	}
}

// TestCheckBuildsKustomizations: an overlay is built with its base; its
// patch is not judged as a Deployment of its own, and the patched replicas
// are what the checks see.
func TestCheckBuildsKustomizations(t *testing.T) {
	dir := t.TempDir()
	writeCheckFile(t, dir, "base/kustomization.yaml", "resources:\n- deploy.yaml\n")
	writeCheckFile(t, dir, "base/deploy.yaml", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx
`)
	writeCheckFile(t, dir, "prod/kustomization.yaml", "namePrefix: prod-\nresources:\n- ../base\npatches:\n- path: replicas.yaml\n")
	writeCheckFile(t, dir, "prod/replicas.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 4\n")

	_, stdout, stderr := runLadder("check", "-f", dir+"/prod", "--target", "1.32", "-o", "wide")
	if !strings.Contains(stdout, "Deployment prod-web runs 4 replicas") {
		t.Errorf("the overlay's patched Deployment was not checked:\n%s%s", stdout, stderr)
	}
	if strings.Contains(stdout, "prod/replicas.yaml") {
		t.Errorf("the patch was judged as an object:\n%s", stdout)
	}
	if !strings.Contains(stdout, "base/deploy.yaml:1") {
		t.Errorf("findings do not point at the base's file:\n%s", stdout)
	}

	// A missing base is one finding, and the overlay's own files are not
	// judged as objects.
	writeCheckFile(t, dir, "broken/kustomization.yaml", "resources:\n- ../nowhere\npatches:\n- path: replicas.yaml\n")
	writeCheckFile(t, dir, "broken/replicas.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 4\n")
	_, stdout, _ = runLadder("check", "-f", dir+"/broken", "--target", "1.32")
	if strings.Count(stdout, "kustomize build failed") != 1 || strings.Contains(stdout, "pdb-missing") {
		t.Errorf("missing base:\n%s", stdout)
	}
}

// hasLineWith reports whether one line of out holds every part.
func hasLineWith(out string, parts ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}
