package twinaws

import "testing"

func TestParseAMIParameter(t *testing.T) {
	for _, c := range []struct {
		name               string
		alias, minor, arch string
		ok                 bool
	}{
		{"/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/standard/recommended/image_id", "al2023@latest", "1.31", "arm64", true},
		{"/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.31-v20260220/image_id", "al2023@v20260220", "1.31", "x86_64", true},
		{"/aws/service/eks/optimized-ami/1.30/amazon-linux-2/recommended/image_id", "al2@latest", "1.30", "x86_64", true},
		{"/aws/service/eks/optimized-ami/1.30/amazon-linux-2-arm64/amazon-eks-arm64-node-1.30-v20250610/image_id", "al2@v20250610", "1.30", "arm64", true},
		{"/aws/service/bottlerocket/aws-k8s-1.31/x86_64/latest/image_id", "bottlerocket@latest", "1.31", "x86_64", true},
		{"/aws/service/bottlerocket/aws-k8s-1.31/arm64/1.20.0/image_id", "bottlerocket@v1.20.0", "1.31", "arm64", true},
		{"/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/nvidia/recommended/image_id", "", "", "", false},
		{"/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended", "", "", "", false},
		{"/my/own/parameter", "", "", "", false},
	} {
		alias, minor, arch, ok := parseAMIParameter(c.name)
		if alias != c.alias || minor != c.minor || arch != c.arch || ok != c.ok {
			t.Errorf("%s: %q %q %q %v, want %q %q %q %v", c.name, alias, minor, arch, ok, c.alias, c.minor, c.arch, c.ok)
		}
	}
}
