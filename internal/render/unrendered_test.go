package render

import (
	"testing"

	"sigs.k8s.io/yaml"
)

func TestUnrenderedTemplate(t *testing.T) {
	key := []byte("apiVersion: v1\nkind: ConfigMap\n{{ .Values.key }}: value\n")
	// The case that matters: valid YAML that no JSON decoder takes.
	if _, err := yaml.YAMLToJSON(key); err == nil {
		t.Fatal("the fixture should not convert to JSON")
	}
	for doc, want := range map[string]bool{
		string(key): true,
		"apiVersion: v1\nkind: ConfigMap\ndata:\n  a: \"{{ not closed\"\n": false,
		"# {{ .Values.commented }}\napiVersion: v1\nkind: ConfigMap\n":     false,
		"metadata:\n  name: {{ .Release.Name }}\n":                         true,
	} {
		if got := UnrenderedTemplate([]byte(doc)); got != want {
			t.Errorf("UnrenderedTemplate(%q) = %v, want %v", doc, got, want)
		}
	}
	if p := UnrenderedTemplateProblem("chart/templates/cm.yaml", 3).String(); p != "chart/templates/cm.yaml:3: unrendered Helm/Go template: the document holds {{ }} actions and is not a manifest on its own; check the chart directory (the one with Chart.yaml) so ladder renders it, or run `helm template` and check its output" {
		t.Errorf("problem = %s", p)
	}
}
