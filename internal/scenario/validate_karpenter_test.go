package scenario

import "testing"

// NodePool requirements are checked by the NodePool CRD's rules
// (nodeclass.CheckRequirements), the operators Karpenter v1 has included.
func TestValidateNodePoolRequirements(t *testing.T) {
	req := func(r string) []string { return []string{"requirements: []", "requirements: [" + r + "]"} }
	runValidateCases(t, []validateCase{
		{name: "Gte", replace: req(`{key: karpenter.k8s.aws/instance-cpu, operator: Gte, values: ["2"]}`)},
		{name: "Lt", replace: req(`{key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: ["16"]}`)},
		{name: "In with minValues", replace: req(`{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5, m6i], minValues: 2}`)},
		{name: "Gt of two values", replace: req(`{key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: ["1", "2"]}`),
			want: `NodePool default: spec.template.spec.requirements[0].values: requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value (give one integer, e.g. values: ["4"])`},
		{name: "an operator Karpenter lacks", replace: req(`{key: karpenter.k8s.aws/instance-cpu, operator: Between, values: ["1"]}`),
			want: `NodePool default: spec.template.spec.requirements[0].operator: "Between" is not one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte`},
	})
}

// An EC2NodeClass alias pinned to a release is resolved at the cluster's
// version (SSM .../optimized-ami/<version>/...-<version>-<release>): after
// an upgradeControlPlane to a version the release does not exist for,
// Karpenter can resolve no AMI for the class and launch no node. Validate
// refuses the upgrade at its line unless an earlier action moves the class.
func TestValidatePinnedAliasAtTheUpgradedVersion(t *testing.T) {
	pin := func(release string) []string {
		return []string{"  amiFamily: AL2023\n  amiSelectorTerms:\n    - id: ami-0f676a166352f02ab", "  amiSelectorTerms:\n    - alias: al2023@" + release}
	}
	runValidateCases(t, []validateCase{
		{name: "a release both versions have", replace: pin("v20250610")},
		{name: "a release of the starting version only", replace: pin("v20240807"),
			want: `spec.actions[2].upgradeControlPlane.version: EC2NodeClass default: spec.amiSelectorTerms[0].alias: al2023@v20240807`},
		{name: "moved to @latest before the upgrade", replace: append(pin("v20240807"), "    - wait: {settled: true}\n",
			"    - wait: {settled: true}\n    - patch: {kind: EC2NodeClass, name: default, patch: {spec: {amiSelectorTerms: [{alias: al2023@latest}]}}}\n")},
	})
}
