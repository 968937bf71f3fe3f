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
	const bare = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: solo, namespace: app}\nspec:\n  containers: [{name: c, image: busybox}]\n"
	const sts = "---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: app}\nspec: {serviceName: db, selector: {matchLabels: {app: db}}, " +
		"template: {metadata: {labels: {app: db}}, spec: {containers: [{name: db, image: postgres}]}}}\n"
	const amd64Only = "requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]"
	cases := []validateCase{
		{name: "a Deployment whose pods name a system class", replace: append([]string{template, "    spec:\n      priorityClassName: system-cluster-critical\n      containers:\n        - {name: web"},
			patch("patch: {kind: Deployment, namespace: app, name: web, patch: {spec: {replicas: 2}}}")...)},
		{name: "a Deployment given a class no manifest creates", replace: patch("patch: {kind: Deployment, namespace: app, name: web, patch: {spec: {template: {spec: {priorityClassName: web-critical}}}}}"),
			want: "spec.actions[2].patch.patch: leaves Deployment app/web invalid: spec.template.spec.priorityClassName: no PriorityClass with name web-critical was found"},
		{name: "an EC2NodeClass patched to an AMI of the pool's other arch", replace: append([]string{"requirements: []", amd64Only},
			patch("patch: {kind: EC2NodeClass, name: default, patch: {spec: {amiSelectorTerms: [{id: ami-24fd2cff8dae19a97}]}}}")...),
			want: "spec.actions[2].patch.patch: leaves NodePool default unable to launch a node: EC2NodeClass default: spec.amiSelectorTerms: selects arm64 AMIs only, but NodePool default allows amd64 instance types only"},
		{name: "an EC2NodeClass patched to an arm64 AMI, pool of either arch", replace: patch("patch: {kind: EC2NodeClass, name: default, patch: {spec: {amiSelectorTerms: [{id: ami-24fd2cff8dae19a97}]}}}")},
		{name: "a NodePool patched to the arch its class has no AMI for", replace: patch("patch: {kind: NodePool, name: default, patch: {spec: {template: {spec: {requirements: [{key: kubernetes.io/arch, operator: In, values: [arm64]}]}}}}}"),
			want: "spec.actions[2].patch.patch: leaves NodePool default unable to launch a node: EC2NodeClass default: spec.amiSelectorTerms: selects amd64 AMIs only, but NodePool default allows arm64 instance types only"},
		{name: "a restart of a paused Deployment", replace: append([]string{"  replicas: 1\n", "  replicas: 1\n  paused: true\n"}, patch("rolloutRestart: {kind: Deployment, namespace: app, name: web}")...),
			want: `spec.actions[2].rolloutRestart: deployments.apps "web" can't restart paused deployment`},
		{name: "a restart of a Deployment a patch resumed", replace: append([]string{"  replicas: 1\n", "  replicas: 1\n  paused: true\n"},
			patch("patch: {kind: Deployment, namespace: app, name: web, patch: {spec: {paused: false}}}\n    - rolloutRestart: {kind: Deployment, namespace: app, name: web}")...)},
		{name: "a bare Pod applied again", replace: append([]string{"---\napiVersion: v1\nkind: Service", bare + "---\napiVersion: v1\nkind: Service"},
			patch("apply: {inline: \""+strings.ReplaceAll(bare, "\n", "\\n")+"\"}")...),
			want: `spec.actions[2].apply: Pod app/solo: pods are immutable; delete it first`},
		{name: "a bare Pod patched", replace: append([]string{"---\napiVersion: v1\nkind: Service", bare + "---\napiVersion: v1\nkind: Service"},
			patch("patch: {kind: Pod, namespace: app, name: solo, patch: {metadata: {labels: {a: b}}}}")...),
			want: `spec.actions[2].patch: Pod app/solo: pods are immutable; delete it first`},
		{name: "a StatefulSet patched where an update may not change it", replace: append([]string{"---\napiVersion: v1\nkind: Service", sts + "---\napiVersion: v1\nkind: Service"},
			patch("patch: {kind: StatefulSet, namespace: app, name: db, patch: {spec: {serviceName: db2}}}")...),
			want: `spec.actions[2].patch: StatefulSet app/db: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden (delete the StatefulSet and create it again to change these fields)`},
		{name: "a StatefulSet applied again with another podManagementPolicy", replace: append([]string{"---\napiVersion: v1\nkind: Service", sts + "---\napiVersion: v1\nkind: Service"},
			patch("apply: {inline: \""+strings.ReplaceAll(strings.Replace(sts, "serviceName: db", "serviceName: db, podManagementPolicy: Parallel", 1), "\n", "\\n")+"\"}")...),
			want: `spec.actions[2].apply: StatefulSet app/db: spec: Forbidden: updates to statefulset spec`},
		{name: "a StatefulSet's replicas, template and minReadySeconds patched", replace: append([]string{"---\napiVersion: v1\nkind: Service", sts + "---\napiVersion: v1\nkind: Service"},
			patch("patch: {kind: StatefulSet, namespace: app, name: db, patch: {spec: {replicas: 2, minReadySeconds: 5, template: {metadata: {annotations: {a: b}}}}}}")...)},
	}
	runValidateCases(t, cases)
}

// validateCase is a fixture edit (validateFixture's replacements) and the
// one line Validate must print, "" for a valid scenario.
type validateCase struct {
	name    string
	replace []string
	want    string
}

func runValidateCases(t *testing.T, cases []validateCase) {
	t.Helper()
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
