package scenario

import (
	"strings"
	"testing"
)

// A patch action is dry-run on the object as the script left it, and the
// result checked as a starting manifest is — against the scenario's own
// PriorityClasses, EC2NodeClasses and NodePools, not against nothing.
func TestValidatePatchedObjects(t *testing.T) {
	const template = "    spec:\n      containers:\n        - {name: web"
	patch := func(p string) []string {
		return []string{"    - wait: {settled: true}\n", "    - wait: {settled: true}\n    - " + p + "\n"}
	}
	cases := []struct {
		name    string
		replace []string
		want    string // "" for valid
	}{
		{name: "a Deployment whose pods name a system class", replace: append([]string{template, "    spec:\n      priorityClassName: system-cluster-critical\n      containers:\n        - {name: web"},
			patch("patch: {kind: Deployment, namespace: app, name: web, patch: {spec: {replicas: 2}}}")...)},
		{name: "a Deployment given a class no manifest creates", replace: patch("patch: {kind: Deployment, namespace: app, name: web, patch: {spec: {template: {spec: {priorityClassName: web-critical}}}}}"),
			want: "spec.actions[2].patch.patch: leaves Deployment app/web invalid: spec.template.spec.priorityClassName: no PriorityClass with name web-critical was found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := validateFixture(t, tc.replace...)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Validate: %v\nwant %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Fatalf("more than one line: %v", err)
			}
		})
	}
}
