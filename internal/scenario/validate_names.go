package scenario

import (
	"fmt"
	"regexp"
)

// EKS's names. A cluster's name "can contain only alphanumeric characters
// (case-sensitive), hyphens, and underscores. It must start with an
// alphanumeric character and can't be longer than 100 characters"
// (aws-sdk-go-v2 service/eks CreateClusterInput.Name; the API model's
// ClusterName shape: min 1, max 100, pattern ^[0-9A-Za-z][A-Za-z0-9\-_]*).
// A managed node group's name "can't be longer than 63 characters. It must
// start with a letter or digit, but can also include hyphens and
// underscores for the remaining characters" (the Terraform AWS provider's
// aws_eks_node_group nodegroup_name, as the EKS console states it).
const (
	maxClusterName   = 100
	maxNodegroupName = 63
)

var eksNamePattern = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9\-_]*$`)

// eksName is what is wrong with an EKS cluster or node group name, or "".
func eksName(name string, maxLen int) string {
	switch {
	case len(name) > maxLen:
		return fmt.Sprintf("%d characters is longer than %d", len(name), maxLen)
	case !eksNamePattern.MatchString(name):
		return fmt.Sprintf("%q is not a valid name", name)
	}
	return ""
}

func eksNameRule(maxLen int) string {
	return fmt.Sprintf("1 to %d letters, digits, '-' and '_', starting with a letter or digit", maxLen)
}
