package insights

import (
	"fmt"
	"strings"
	"testing"
)

// TestCheckRefusesAWorkloadTheAPIServerRefuses: a Deployment, StatefulSet or
// DaemonSet whose selector does not select its template's labels is refused
// by kube-apiserver ("`selector` does not match template `labels`"); check
// says so as an ERROR on the field's line, through the twin's rule.
func TestCheckRefusesAWorkloadTheAPIServerRefuses(t *testing.T) {
	const workload = "apiVersion: apps/v1\nkind: %s\nmetadata: {name: web, namespace: shop}\nspec:\n  selector:\n    matchLabels: {app: web}\n" +
		"  template:\n    metadata:\n      labels: {app: %s}\n    spec:\n      containers: [{name: web, image: nginx}]\n"
	cases := []struct {
		name, kind, label string
		line              string // the finding's source, "" for none
		field             string
	}{
		{"deployment matching", "Deployment", "web", "", ""},
		{"deployment not matching", "Deployment", "www", "test.yaml:9", "spec.template.metadata.labels"},
		{"statefulset not matching", "StatefulSet", "www", "test.yaml:9", "spec.template.metadata.labels"},
		{"daemonset not matching", "DaemonSet", "www", "test.yaml:9", "spec.template.metadata.labels"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(strings.Replace(workload, "%s", tc.kind, 1), "%s", tc.label, 1)
			got := runCheck(t, "invalid-manifest", input(t, "", "1.31", doc))
			if tc.line == "" {
				expectFindings(t, got, nil)
				return
			}
			expectFindings(t, got, []want{{Error, tc.kind + " shop/web", tc.field, []string{"`selector` does not match template `labels`", "make spec.selector select the template's labels"}}})
			if file, line := got[0].Location(); fmt.Sprintf("%s:%d", file, line) != tc.line {
				t.Errorf("location %s:%d, want %s", file, line, tc.line)
			}
		})
	}
	// A document without a selector (a kustomize patch read as it is) is
	// not judged as a whole object.
	patch := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 3\n"
	expectFindings(t, runCheck(t, "invalid-manifest", input(t, "", "1.31", patch)), nil)
}
