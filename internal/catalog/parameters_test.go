package catalog

import "testing"

// TestRecommendedParameter: the parameter of each family's recommended AMI
// is the one the AWS docs and karpenter-provider-aws name, and the twin's
// SSM resolves it to the catalog's @latest.
func TestRecommendedParameter(t *testing.T) {
	for _, c := range []struct{ family, arch, want string }{
		{FamilyAL2023, ArchX8664, "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id"},
		{FamilyAL2023, ArchARM64, "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/standard/recommended/image_id"},
		{FamilyAL2, ArchX8664, "/aws/service/eks/optimized-ami/1.31/amazon-linux-2/recommended/image_id"},
		{FamilyAL2, ArchARM64, "/aws/service/eks/optimized-ami/1.31/amazon-linux-2-arm64/recommended/image_id"},
		{FamilyBottlerocket, ArchX8664, "/aws/service/bottlerocket/aws-k8s-1.31/x86_64/latest/image_id"},
	} {
		if got := RecommendedParameter(c.family, c.arch, "1.31"); got != c.want {
			t.Errorf("%s %s: %s, want %s", c.family, c.arch, got, c.want)
		}
	}
	for name, want := range map[string]string{
		"amazon-eks-node-al2023-x86_64-standard-1.31-v20250101": FamilyAL2023,
		"amazon-eks-node-1.30-v20240807":                        FamilyAL2,
		"bottlerocket-aws-k8s-1.31-x86_64-v1.20.0-fcf71a47":     FamilyBottlerocket,
		"my-golden-image": "",
	} {
		if got := FamilyOfName(name); got != want {
			t.Errorf("FamilyOfName(%s) = %q, want %q", name, got, want)
		}
	}
}
