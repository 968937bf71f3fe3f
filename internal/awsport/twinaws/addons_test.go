package twinaws

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
)

// DescribeAddonVersions offers an installed add-on's own versions (a
// scenario's pins) as their minor's default — where the embedded table has
// no row (aws-ebs-csi-driver) and over the row it has (kube-proxy) — and
// the table's rows for the rest.
func TestDescribeAddonVersionsOffersThePins(t *testing.T) {
	e := NewEKS(EKSOptions{Cluster: "c", Region: "us-west-2", Addons: []Addon{
		{Name: "aws-ebs-csi-driver", Version: "v1.35.0-eksbuild.1", Versions: map[string]string{"1.31": "v1.36.0-eksbuild.1"}},
		{Name: "kube-proxy", Version: "v1.30.14-eksbuild.28", Versions: map[string]string{"1.31": "v1.31.14-eksbuild.9"}},
		{Name: "coredns", Version: "v1.11.4-eksbuild.40"},
	}})
	for _, c := range []struct{ addon, minor, want string }{
		{"aws-ebs-csi-driver", "1.31", "v1.36.0-eksbuild.1"},
		{"aws-ebs-csi-driver", "1.32", ""},
		{"kube-proxy", "1.31", "v1.31.14-eksbuild.9"},
		{"kube-proxy", "1.32", "v1.32.13-eksbuild.16"},
		{"coredns", "1.31", "v1.11.4-eksbuild.40"},
	} {
		out, err := e.DescribeAddonVersions(t.Context(), &eks.DescribeAddonVersionsInput{AddonName: aws.String(c.addon), KubernetesVersion: aws.String(c.minor)})
		if err != nil {
			t.Fatal(err)
		}
		var defaults []string
		for _, a := range out.Addons {
			for _, v := range a.AddonVersions {
				for _, cv := range v.Compatibilities {
					if cv.DefaultVersion && aws.ToString(cv.ClusterVersion) == c.minor {
						defaults = append(defaults, aws.ToString(v.AddonVersion))
					}
				}
			}
		}
		switch {
		case c.want == "" && len(defaults) != 0:
			t.Errorf("%s at %s: defaults %v, want none", c.addon, c.minor, defaults)
		case c.want != "" && (len(defaults) != 1 || defaults[0] != c.want):
			t.Errorf("%s at %s: defaults %v, want [%s]", c.addon, c.minor, defaults, c.want)
		}
	}
}
