package catalog

import (
	"slices"
	"strings"
	"testing"
)

func TestEmbeddedAddons(t *testing.T) {
	list, err := parseAddons(addonsCSV)
	if err != nil {
		t.Fatalf("addons.csv: %v", err)
	}
	var names []string
	for _, a := range list {
		if !slices.Contains(names, a.Addon) {
			names = append(names, a.Addon)
		}
		if a.KubernetesMinor != "*" {
			if _, ok := LookupRelease(a.KubernetesMinor); !ok {
				t.Errorf("%s %s: minor not in the calendar", a.Addon, a.KubernetesMinor)
			}
		}
		// kube-proxy follows the Kubernetes minor.
		if a.Addon == "kube-proxy" && !strings.HasPrefix(a.Version, "v"+a.KubernetesMinor+".") {
			t.Errorf("kube-proxy %s: version %s is for another minor", a.KubernetesMinor, a.Version)
		}
	}
	if want := []string{"kube-proxy", "coredns", "vpc-cni", "aws-ebs-csi-driver"}; !slices.Equal(names, want) {
		t.Errorf("add-ons = %v, want %v", names, want)
	}
	if len(list) != 43 {
		t.Errorf("%d add-on rows, want 43", len(list))
	}
	if got := AddonVersions(); !slices.Equal(got, list) {
		t.Errorf("AddonVersions() differs from a fresh parse")
	}
}

func TestLatestAddon(t *testing.T) {
	tests := []struct {
		name, addon, minor string
		wantVersion        string
		wantOK             bool
		wantSource         string // substring, checked when set
	}{
		{"kube-proxy 1.31", "kube-proxy", "1.31", "v1.31.14-eksbuild.20", true, "ja_jp"},
		{"kube-proxy 1.30 via a kubelet version", "kube-proxy", "v1.30.14", "v1.30.14-eksbuild.28", true, ""},
		{"kube-proxy 1.36", "kube-proxy", "1.36", "v1.36.0-eksbuild.14", true, ""},
		{"coredns 1.31", "coredns", "1.31", "v1.11.4-eksbuild.40", true, ""},
		{"coredns 1.23", "coredns", "1.23", "v1.8.7-eksbuild.20", true, ""},
		{"vpc-cni 1.31", "vpc-cni", "1.31", "v1.20.1-eksbuild.3", true, ""},
		{"vpc-cni 1.34 has no known version", "vpc-cni", "1.34", "", false, "DescribeAddonVersions"},
		{"ebs csi has no table", "aws-ebs-csi-driver", "1.31", "", false, "DescribeAddonVersions"},
		{"unknown minor", "kube-proxy", "1.40", "", false, ""},
		{"unknown add-on", "metrics-server", "1.31", "", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := LatestAddon(tt.addon, tt.minor)
			if got.Version != tt.wantVersion || ok != tt.wantOK || !strings.Contains(got.Source, tt.wantSource) {
				t.Errorf("LatestAddon(%q, %q) = %+v, %v; want version %q, ok %v, source containing %q",
					tt.addon, tt.minor, got, ok, tt.wantVersion, tt.wantOK, tt.wantSource)
			}
		})
	}
}

func TestParseAddonsRejectsMalformedRows(t *testing.T) {
	const header = "addon,kubernetes_version,latest_eks_addon_version,source\n"
	tests := []struct {
		name, data, wantErr string
	}{
		{"bad minor", header + "kube-proxy,1.3o,v1.30.14-eksbuild.28,x\n", "not like 1.30"},
		{"bad version", header + "kube-proxy,1.30,1.30.14,x\n", "not like v1.30.14-eksbuild.28"},
		{"missing source", header + "kube-proxy,1.30,v1.30.14-eksbuild.28,\n", "source is empty"},
		{"duplicate", header + "kube-proxy,1.30,v1.30.14-eksbuild.28,x\nkube-proxy,1.30,v1.30.14-eksbuild.27,x\n", "duplicate"},
		{"wrong header", "addon,version\nkube-proxy,1.30\n", "header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseAddons([]byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseAddons() error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}
