package addon

import (
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// TestAddonImage: each add-on's own images take the version's tag —
// kube-proxy's "minimal" image from 1.25 (eks-data.md §1c), the EBS CSI
// driver's upstream release — and sidecars keep theirs.
func TestImage(t *testing.T) {
	const ecr = "602401143452.dkr.ecr.us-west-2.amazonaws.com/"
	for _, c := range []struct {
		addon, image, version, want string
		own                         bool
	}{
		{"kube-proxy", ecr + "eks/kube-proxy:v1.30.14-minimal-eksbuild.28", "v1.31.14-eksbuild.20", ecr + "eks/kube-proxy:v1.31.14-minimal-eksbuild.20", true},
		{"kube-proxy", ecr + "eks/kube-proxy:v1.23.17-eksbuild.20", "v1.24.17-eksbuild.19", ecr + "eks/kube-proxy:v1.24.17-eksbuild.19", true},
		{"coredns", ecr + "eks/coredns:v1.11.4-eksbuild.40", "v1.12.4-eksbuild.18", ecr + "eks/coredns:v1.12.4-eksbuild.18", true},
		{"vpc-cni", ecr + "amazon-k8s-cni-init:v1.20.1-eksbuild.3", "v1.20.4-eksbuild.1", ecr + "amazon-k8s-cni-init:v1.20.4-eksbuild.1", true},
		{"aws-ebs-csi-driver", ecr + "eks/aws-ebs-csi-driver:v1.35.0", "v1.37.0-eksbuild.1", ecr + "eks/aws-ebs-csi-driver:v1.37.0", true},
		{"aws-ebs-csi-driver", "registry.k8s.io/sig-storage/csi-provisioner:v5.1.0", "v1.37.0-eksbuild.1", "registry.k8s.io/sig-storage/csi-provisioner:v5.1.0", false},
		{"coredns", "localhost:5000/eks/coredns", "v1.12.4-eksbuild.18", "localhost:5000/eks/coredns:v1.12.4-eksbuild.18", true},
	} {
		v, err := ParseVersion(c.version)
		if err != nil {
			t.Fatal(err)
		}
		got, own := Image(c.addon, c.image, v)
		if got != c.want || own != c.own {
			t.Errorf("Image(%s, %s, %s) = %s, %v; want %s, %v", c.addon, c.image, c.version, got, own, c.want, c.own)
		}
	}
}

// TestCheckAddonUpdate: one add-on minor at a time and no downgrade
// (semantics.md §E); kube-proxy within the skew policy of the API server
// and every kubelet (§D.4). The versions are the embedded table's.
func TestCheckUpdate(t *testing.T) {
	latest := func(addon, minor string) string {
		v, ok := catalog.LatestAddon(addon, minor)
		if !ok {
			t.Fatalf("no %s for %s in the catalog", addon, minor)
		}
		return v.Version
	}
	at130 := map[string]string{"a": "v1.30.14-eks-f69f56f", "b": "v1.30.14-eks-f69f56f"}
	for _, c := range []struct {
		name, addon, from, to string
		cluster               string
		kubelets              map[string]string
		err                   string
	}{
		{"kube-proxy with its cluster", "kube-proxy", latest("kube-proxy", "1.30"), latest("kube-proxy", "1.31"), "1.31", at130, ""},
		{"kube-proxy before the control plane", "kube-proxy", latest("kube-proxy", "1.30"), latest("kube-proxy", "1.31"), "1.30", at130, "newer than the API server 1.30"},
		{"kube-proxy four minors from a kubelet", "kube-proxy", latest("kube-proxy", "1.30"), latest("kube-proxy", "1.31"), "1.31",
			map[string]string{"old": "v1.27.16-eks-1"}, "on node old: kube-proxy 1.31 is 4 minors away from kubelet 1.27"},
		{"coredns one minor", "coredns", latest("coredns", "1.32"), latest("coredns", "1.33"), "1.33", at130, ""},
		{"coredns two minors", "coredns", latest("coredns", "1.32"), latest("coredns", "1.34"), "1.34", at130, "skips a minor version"},
		{"downgrade", "coredns", "v1.11.4-eksbuild.40", "v1.11.4-eksbuild.33", "1.31", at130, "not downgraded"},
		{"malformed", "vpc-cni", "v1.20.1-eksbuild.3", "1.20.2", "1.31", at130, "not an EKS add-on version"},
		{"unknown add-on", "metrics-server", "v0.7.2-eksbuild.1", "v0.7.2-eksbuild.2", "1.31", at130, "not one the twin models"},
	} {
		err := CheckUpdate(c.addon, c.from, c.to, kubeversion.MustParse(c.cluster), c.kubelets)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
		}
	}
}
