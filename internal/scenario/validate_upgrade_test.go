package scenario

import (
	"strings"
	"testing"
)

// TestValidatePlaybook: the playbook's fields are checked against the group
// types, the API's rules for instance refresh preferences (semantics.md §C,
// §F.10) and the scenario's manifests; each problem names its field.
func TestValidatePlaybook(t *testing.T) {
	// blueGreen adds a managed group (with one more setting) upgraded
	// blue/green onto green instance types.
	blueGreen := func(setting, greenTypes string) []string {
		return []string{"capacityType: on-demand}\n", "capacityType: on-demand}\n    - name: mng\n      type: managed\n      managed:\n        instanceTypes: [m5.large]\n        desired: 2\n        " + setting +
			"\n      upgrade: {strategy: blue-green, green: {name: mng-green, instanceTypes: " + greenTypes + "}}\n"}
	}
	cases := []struct {
		name    string
		replace []string
		want    string // substring of the single error; "" = valid
	}{
		{name: "drift with ami latest, a probe and a target", replace: []string{
			"  manifests:\n", "  probe:\n    name: web\n    requires: [{kind: Deployment, namespace: app, name: web}]\n  upgrade: {to: \"1.32\", order: [default], precondition: relaxed}\n  manifests:\n",
			"capacityType: on-demand}\n", "capacityType: on-demand}\n      upgrade: {strategy: drift, ami: latest}\n"}},
		{name: "a strategy of another type", replace: []string{
			"capacityType: on-demand}\n", "capacityType: on-demand}\n      upgrade: {strategy: instance-refresh}\n"},
			want: `spec.nodeGroups[0].upgrade.strategy: "instance-refresh" is not a strategy for a karpenter group (use drift, none)`},
		{name: "force outside in-place", replace: []string{
			"capacityType: on-demand}\n", "capacityType: on-demand}\n      upgrade: {force: true}\n"},
			want: "spec.nodeGroups[0].upgrade.force: applies to the in-place strategy"},
		{name: "unknown ami mode", replace: []string{
			"capacityType: on-demand}\n", "capacityType: on-demand}\n      upgrade: {ami: newest}\n"},
			want: `spec.nodeGroups[0].upgrade.ami: "newest" is not latest or id`},
		{name: "target not newer", replace: []string{
			"  manifests:\n", "  upgrade: {to: \"1.30\"}\n  manifests:\n"},
			want: "spec.upgrade.to: 1.30 is not newer than spec.cluster.version 1.30"},
		{name: "order names an unknown group", replace: []string{
			"  manifests:\n", "  upgrade: {order: [blue]}\n  manifests:\n"},
			want: `spec.upgrade.order[0]: "blue" is not a node group`},
		{name: "bad precondition", replace: []string{
			"  manifests:\n", "  upgrade: {precondition: lenient}\n  manifests:\n"},
			want: `spec.upgrade.precondition: "lenient" is not strict or relaxed`},
		{name: "probe on a missing workload", replace: []string{
			"  manifests:\n", "  probe: {name: ui, requires: [{kind: Deployment, namespace: ui, name: ui}]}\n  manifests:\n"},
			want: "spec.probe.requires[0].name: Deployment ui/ui is not in the scenario's manifests"},
		{name: "add-on without its workloads", replace: []string{
			"  manifests:\n", "  addons: [{name: coredns, version: v1.11.4-eksbuild.2}]\n  manifests:\n"},
			want: "spec.addons[0].name: add-on coredns runs as Deployment kube-system/coredns, which is not in the scenario's manifests"},
		{name: "unknown add-on", replace: []string{
			"  manifests:\n", "  addons: [{name: cilium, version: v1.16.0}]\n  manifests:\n"},
			want: `spec.addons[0].name: "cilium" is not an add-on the twin models`},
		{name: "rollout restart of a missing workload", replace: []string{
			`upgradeControlPlane: {version: "1.31"}`, `rolloutRestart: {kind: Deployment, namespace: app, name: api}`},
			want: "spec.actions[2].rolloutRestart.name: Deployment app/api is not in the scenario's manifests"},
		{name: "green instance types of the blue amiType's arch", replace: blueGreen("amiType: AL2023_x86_64_STANDARD", "[m6i.large]")},
		{name: "green instance types of another arch, default amiType", replace: blueGreen("capacityType: ON_DEMAND", "[m7g.large]")},
		{name: "green instance types of another arch than the blue amiType", replace: blueGreen("amiType: AL2023_x86_64_STANDARD", "[m7g.large]"),
			want: "spec.nodeGroups[1].upgrade.green.instanceTypes: amiType AL2023_x86_64_STANDARD does not run on instance type m7g.large (arm64) (EKS CreateNodegroup refuses the green group; use instance types of mng's architecture)"},
		{name: "green instance types of another arch than the blue's AMI", replace: blueGreen("launchTemplate: {name: lt, imageId: ami-0f676a166352f02ab}", "[m7g.large]"),
			want: "spec.nodeGroups[1].upgrade.green.instanceTypes: AMI ami-0f676a166352f02ab is x86_64 but instance type m7g.large is arm64"},
		{name: "green instance types of two arches", replace: blueGreen("capacityType: ON_DEMAND", "[m6i.large, m7g.large]"),
			want: "spec.nodeGroups[1].upgrade.green.instanceTypes[1]: m7g.large is arm64 but m6i.large is amd64"},
		{name: "upgrade action to an older version", replace: []string{
			`upgradeControlPlane: {version: "1.31"}`, `upgrade: {to: "1.29"}`},
			want: "spec.actions[2].upgrade.to: 1.29 is not newer than the control plane's 1.30"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := parseTest(t, tc.replace...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = sc.Validate()
			errs := joined(err)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) {
				t.Fatalf("errors %v, want one containing %q", errs, tc.want)
			}
		})
	}
}

// TestValidateRefreshPreferences: StartInstanceRefresh's validation
// (semantics.md §C) — min 0-100, max 100-200 and only with min, max−min ≤
// 100, checkpoints unique and ascending, a delay only with checkpoints —
// plus the playbook's own rule: the last checkpoint is 100.
func TestValidateRefreshPreferences(t *testing.T) {
	ip := func(i int) *int { return &i }
	cases := []struct {
		prefs RefreshPreferences
		want  string
	}{
		{RefreshPreferences{MinHealthyPercentage: ip(90), MaxHealthyPercentage: ip(110)}, ""},
		{RefreshPreferences{MinHealthyPercentage: ip(50), MaxHealthyPercentage: ip(200)}, "cannot be greater than 100, got 150"},
		{RefreshPreferences{MaxHealthyPercentage: ip(120)}, "you must also specify MinHealthyPercentage"},
		{RefreshPreferences{MinHealthyPercentage: ip(101)}, "MinHealthyPercentage must be between 0 and 100, got 101"},
		{RefreshPreferences{MinHealthyPercentage: ip(90), MaxHealthyPercentage: ip(99)}, "MaxHealthyPercentage must be between 100 and 200, got 99"},
		{RefreshPreferences{CheckpointPercentages: []int{50, 50, 100}}, "must be unique and in ascending order"},
		{RefreshPreferences{CheckpointPercentages: []int{20, 50}}, "refresh.checkpointPercentages: the last checkpoint must be 100"},
		{RefreshPreferences{CheckpointDelay: &Duration{}}, "CheckpointDelay needs CheckpointPercentages"},
	}
	for _, tc := range cases {
		v := &validator{sc: &Scenario{Path: "s.yaml"}}
		prefs := tc.prefs
		v.refreshPreferences("refresh", &prefs)
		switch {
		case tc.want == "" && len(v.errs) > 0:
			t.Errorf("%+v refused: %v", tc.prefs, v.errs)
		case tc.want != "" && (len(v.errs) != 1 || !strings.Contains(v.errs[0].Error(), tc.want)):
			t.Errorf("%+v: errors %v, want %q", tc.prefs, v.errs, tc.want)
		}
	}
}
