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

// TestCheckRefusesNamesTheAPIServerRefuses: a name, namespace or label the
// API server refuses for the kind is an ERROR of invalid-manifest naming
// the field and the rule, on the field's line; what it accepts (a
// ClusterRole's colons, a dotted Deployment name) is not.
func TestCheckRefusesNamesTheAPIServerRefuses(t *testing.T) {
	cases := []struct {
		name, doc string
		object    string // "" for no finding
		field     string
		says      string
		line      string
	}{
		{"a Service name with a dot", "apiVersion: v1\nkind: Service\nmetadata:\n  name: web.v2\n  namespace: shop\n",
			"Service shop/web.v2", "metadata.name", "a DNS-1035 label must consist of", "test.yaml:4"},
		{"a Deployment name with a dot", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web.v2\n  namespace: shop\n", "", "", "", ""},
		{"an upper-case namespace", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  namespace: Shop\n",
			"ConfigMap Shop/web", "metadata.namespace", "a lowercase RFC 1123 label must consist of", "test.yaml:5"},
		{"a label value of 64 characters", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  labels:\n    team: " + strings.Repeat("t", 64) + "\n",
			"ConfigMap web", "metadata.labels", "must be no more than 63 bytes", "test.yaml:5"},
		{"a ClusterRole with colons", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: system:controller:web\n", "", "", "", ""},
		{"a custom resource in upper case", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: Big\n",
			"Widget Big", "metadata.name", "a lowercase RFC 1123 subdomain", "test.yaml:4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := runCheck(t, "invalid-manifest", input(t, "", "1.31", tc.doc))
			if tc.object == "" {
				expectFindings(t, got, nil)
				return
			}
			expectFindings(t, got, []want{{Error, tc.object, tc.field, []string{tc.says, "the API server refuses the object"}}})
			if file, line := got[0].Location(); fmt.Sprintf("%s:%d", file, line) != tc.line {
				t.Errorf("location %s:%d, want %s", file, line, tc.line)
			}
		})
	}
}

// TestCheckRefusesANodePoolTheCRDRefuses: weight, consolidateAfter,
// negative limits and requirements whose intersection is empty are ERRORs
// of invalid-manifest on their fields' lines.
func TestCheckRefusesANodePoolTheCRDRefuses(t *testing.T) {
	const np = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  weight: 0\n  limits: {cpu: -4}\n  template:\n    spec:\n" +
		"      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements:\n" +
		"        - {key: kubernetes.io/arch, operator: In, values: [amd64]}\n        - {key: kubernetes.io/arch, operator: In, values: [arm64]}\n" +
		"  disruption:\n    consolidateAfter: 1.5h\n"
	got := runCheck(t, "invalid-manifest", input(t, "", "1.31", np))
	expectFindings(t, got, []want{
		{Error, "NodePool default", "spec.disruption.consolidateAfter", []string{`"1.5h" is not a duration the NodePool CRD takes`}},
		{Error, "NodePool default", "spec.limits.cpu", []string{"-4 is negative"}},
		{Error, "NodePool default", "spec.template.spec.requirements[1]", []string{"their intersection is empty"}},
		{Error, "NodePool default", "spec.weight", []string{"0 is out of range: the NodePool CRD allows 1 to 100"}},
	})
}
