package insights

import (
	"fmt"
	"testing"
)

func nodeClass(name, terms string) string {
	return fmt.Sprintf(`apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: %s
spec:
  role: KarpenterNodeRole-eks-workshop
  subnetSelectorTerms:
    - tags: {karpenter.sh/discovery: eks-workshop}
  securityGroupSelectorTerms:
    - tags: {karpenter.sh/discovery: eks-workshop}
  amiSelectorTerms:
%s`, name, terms)
}

func TestKarpenterAMIPinned(t *testing.T) {
	runCases(t, "karpenter-ami-pinned", []checkCase{
		{name: "pinned alias older than the target minor", target: "1.31", manifests: nodeClass("default", "    - alias: al2023@v20240807\n"),
			want: []want{{Error, "EC2NodeClass default", "spec.amiSelectorTerms[0].alias",
				[]string{"pins alias al2023@v20240807: after the upgrade to 1.31 Karpenter looks for the v20240807 build for 1.31, which cannot exist (1.31 came to EKS on 2024-09-26)", "al2023@latest, or pin a release of v20240926 or later"}}}},
		{name: "pinned alias with a build for the target", target: "1.30", manifests: nodeClass("default", "    - alias: al2023@v20240807\n"),
			want: []want{{Warning, "EC2NodeClass default", "spec.amiSelectorTerms[0].alias", []string{"drifts its nodes to the v20240807 build for 1.30, not to the newest AMI"}}}},
		{name: "pinned bottlerocket", target: "1.31", manifests: nodeClass("br", "    - alias: bottlerocket@v1.20.0\n"),
			want: []want{{Warning, "EC2NodeClass br", "spec.amiSelectorTerms[0].alias", []string{"pins alias bottlerocket@v1.20.0"}}}},
		{name: "al2 at 1.33", current: "1.32", target: "1.33", manifests: nodeClass("legacy", "    - alias: al2@latest\n"),
			want: []want{{Error, "EC2NodeClass legacy", "spec.amiSelectorTerms[0].alias", []string{"no AL2 AMIs for Kubernetes 1.33 (they end at 1.32)"}}}},
		{name: "AMI id", manifests: nodeClass("golden", "    - id: ami-0123456789abcdef0\n"),
			want: []want{{Warning, "EC2NodeClass golden", "spec.amiSelectorTerms[0].id", []string{"selects AMI ami-0123456789abcdef0 by id", "alias al2023@latest"}}}},
		{name: "name with a Kubernetes minor", target: "1.31", manifests: nodeClass("named", "    - name: amazon-eks-node-al2023-x86_64-standard-1.30-*\n      owner: amazon\n"),
			want: []want{{Warning, "EC2NodeClass named", "spec.amiSelectorTerms[0].name", []string{"which names Kubernetes 1.30", "kubelets stay at 1.30"}}}},
		{name: "SSM parameter beyond the skew", target: "1.34", manifests: nodeClass("ssm", "    - ssmParameter: /aws/service/eks/optimized-ami/1.30/amazon-linux-2023/x86_64/standard/recommended/image_id\n"),
			want: []want{{Error, "EC2NodeClass ssm", "spec.amiSelectorTerms[0].ssmParameter", []string{"names Kubernetes 1.30", "beyond the kubelet skew policy at 1.34 (at most 3 minors)"}}}},
		{name: "alias latest follows", manifests: nodeClass("default", "    - alias: al2023@latest\n")},
		{name: "tags and names without a minor are custom pipelines", manifests: nodeClass("custom", "    - tags: {team: platform, golden: \"true\"}\n    - name: acme-golden-*\n")},
		{name: "name already at the target", target: "1.31", manifests: nodeClass("named", "    - name: amazon-eks-node-al2023-x86_64-standard-1.31-v20241011\n")},
	})
}

func nodePool(name, disruption, templateExtra string) string {
	return fmt.Sprintf(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: %s
spec:
  template:
%s    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
%s`, name, templateExtra, disruption)
}

func TestKarpenterBudgetBlocks(t *testing.T) {
	runCases(t, "karpenter-budget-blocks", []checkCase{
		{name: "nodes 0 for every reason", manifests: nodePool("default", `  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    budgets:
      - nodes: "0"
`, ""), want: []want{{Error, "NodePool default", "spec.disruption.budgets[0]", []string{`never allows a Drifted disruption (budgets[0] nodes "0" for all reasons)`}}}},
		{name: "nodes 0 for Drifted", manifests: nodePool("default", `  disruption:
    budgets:
      - nodes: "0"
        reasons: [Drifted]
      - nodes: "20%"
`, ""), want: []want{{Error, "NodePool default", "spec.disruption.budgets[0]", []string{`budgets[0] nodes "0" for Drifted`}}}},
		{name: "window that never opens (Feb 30)", manifests: nodePool("default", `  disruption:
    budgets:
      - nodes: "0"
      - nodes: "1"
        schedule: "0 2 30 2 *"
        duration: 4h
`, ""), want: []want{{Error, "NodePool default", "spec.disruption.budgets[0]", []string{"never allows a Drifted disruption"}}}},
		{name: "unparseable schedule fails closed", manifests: nodePool("default", `  disruption:
    budgets:
      - nodes: "1"
        schedule: "0 25 * * *"
        duration: 1h
`, ""), want: []want{{Error, "NodePool default", "spec.disruption.budgets[0].schedule", []string{"allows 0 disruptions for every reason"}}}},
		{name: "zero by day, a nightly window", manifests: nodePool("default", `  disruption:
    budgets:
      - nodes: "0"
        schedule: "0 6 * * *"
        duration: 16h
      - nodes: "10%"
`, "")},
		{name: "zero only for Underutilized", manifests: nodePool("default", `  disruption:
    budgets:
      - nodes: "0"
        reasons: [Underutilized, Empty]
`, "")},
		{name: "default budget", manifests: nodePool("default", "", "")},
	})
}

func TestDoNotDisrupt(t *testing.T) {
	tgp := `  disruption:
    budgets: [{nodes: "10%"}]
`
	withTGP := func(name string) string {
		return fmt.Sprintf(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: %s
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: []
      terminationGracePeriod: 24h
`, name)
	}
	protected := deployment("ml", "trainer", 2, "      annotations: {karpenter.sh/do-not-disrupt: \"true\"}\n")
	runCases(t, "do-not-disrupt", []checkCase{
		{name: "NodePool without terminationGracePeriod", manifests: join(protected, nodePool("default", tgp, "")),
			want: []want{{Error, "Deployment ml/trainer", "spec.template.metadata.annotations", []string{"may run on NodePool default, which has no terminationGracePeriod", "Set spec.template.spec.terminationGracePeriod on NodePool default"}}}},
		{name: "one of two NodePools lacks it", manifests: join(protected, nodePool("default", tgp, ""), withTGP("gpu")),
			want: []want{{Warning, "Deployment ml/trainer", "spec.template.metadata.annotations", []string{"on NodePool default, which has no terminationGracePeriod"}}}},
		{name: "pinned by nodeSelector to the pool with a grace period", manifests: join(
			deployment("ml", "trainer", 2, "      annotations: {karpenter.sh/do-not-disrupt: \"true\"}\n")+"      nodeSelector: {karpenter.sh/nodepool: gpu}\n",
			nodePool("default", tgp, ""), withTGP("gpu"))},
		{name: "no NodePool in the input", manifests: protected,
			want: []want{{Warning, "Deployment ml/trainer", "spec.template.metadata.annotations", []string{"no NodePool in the input to tell"}}}},
		{name: "NodePool annotates its nodes", manifests: nodePool("frozen", tgp, "    metadata:\n      annotations: {karpenter.sh/do-not-disrupt: \"true\"}\n"),
			want: []want{{Error, "NodePool frozen", "spec.template.metadata.annotations", []string{"on every node it launches"}}}},
		{name: "a duration ends the protection", manifests: join(deployment("ml", "trainer", 2, "      annotations: {karpenter.sh/do-not-disrupt: \"4h\"}\n"), nodePool("default", tgp, ""))},
		{name: "all pools have a grace period", manifests: join(protected, withTGP("default"))},
	})
}
