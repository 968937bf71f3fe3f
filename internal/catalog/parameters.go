package catalog

import (
	"fmt"
	"strings"
)

// RecommendedParameter is the name of SSM's public parameter holding the
// recommended EKS-optimized AMI of a family and architecture for a
// Kubernetes minor (aws-apis.md §5; karpenter-provider-aws
// pkg/providers/amifamily): what `aws ssm get-parameter` reads and
// Karpenter's @latest alias resolves to.
func RecommendedParameter(family, arch, minor string) string {
	switch family {
	case FamilyAL2:
		if arch == ArchARM64 {
			return fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2-arm64/recommended/image_id", minor)
		}
		return fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2/recommended/image_id", minor)
	case FamilyBottlerocket:
		return fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s/%s/latest/image_id", minor, arch)
	}
	return fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/standard/recommended/image_id", minor, arch)
}

// nameFamilies are the families EKS-optimized AMI names spell, checked in
// order ("amazon-eks-node-al2023-…" before AL2's "amazon-eks-node-…").
var nameFamilies = []struct{ in, family string }{
	{"al2023", FamilyAL2023},
	{"bottlerocket", FamilyBottlerocket},
	{"amazon-eks", FamilyAL2},
}

// FamilyOfName reads the family from an EKS-optimized AMI's name; "" for
// a name of none.
func FamilyOfName(name string) string {
	for _, f := range nameFamilies {
		if strings.Contains(name, f.in) {
			return f.family
		}
	}
	return ""
}
