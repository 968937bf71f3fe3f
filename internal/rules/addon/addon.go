// Package addon holds the rules of EKS add-ons as pure functions: their
// versions, the images an add-on version runs, and what UpdateAddon
// refuses (semantics.md §E, §D.4). The control-plane twin applies them and
// ladder check's add-on checks ask them.
package addon

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// EKS add-ons (semantics.md §E, eks-data.md §1c): an add-on's version is
// vMAJOR.MINOR.PATCH-eksbuild.N; updating it is UpdateAddon, after which EKS
// applies the add-on's manifests — new image tags in its DaemonSet and
// Deployment pod templates — and those roll out by their own strategies.
// "EKS Add-ons are not automatically upgraded during a control plane
// upgrade ... may only be upgraded one minor version at a time."

// Version is a parsed EKS add-on version.
type Version struct {
	Major, Minor, Patch, Build int
	raw                        string
}

var addonVersionRE = regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)-eksbuild\.(\d+)$`)

// ParseVersion reads "v1.31.14-eksbuild.20".
func ParseVersion(s string) (Version, error) {
	m := addonVersionRE.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("%q is not an EKS add-on version such as v1.31.14-eksbuild.20", s)
	}
	n := make([]int, 4)
	for i := range n {
		n[i], _ = strconv.Atoi(m[i+1])
	}
	return Version{Major: n[0], Minor: n[1], Patch: n[2], Build: n[3], raw: s}, nil
}

func (v Version) String() string { return v.raw }

// Compare orders two versions: -1, 0 or 1.
func (v Version) Compare(o Version) int {
	for _, d := range [][2]int{{v.Major, o.Major}, {v.Minor, o.Minor}, {v.Patch, o.Patch}, {v.Build, o.Build}} {
		switch {
		case d[0] < d[1]:
			return -1
		case d[0] > d[1]:
			return 1
		}
	}
	return 0
}

// addonImages are the image repositories (the path after the registry)
// each add-on's manifests set, and how a version becomes their tag.
var addonImages = map[string]struct {
	repos []string
	tag   func(Version) string
}{
	"vpc-cni": {[]string{"amazon-k8s-cni", "amazon-k8s-cni-init", "amazon/aws-network-policy-agent"}, func(v Version) string { return v.raw }},
	"coredns": {[]string{"eks/coredns"}, func(v Version) string { return v.raw }},
	// kube-proxy ships only the minimal image from 1.25 on (eks-data.md
	// §1c): v1.31.14-eksbuild.20 runs eks/kube-proxy:v1.31.14-minimal-eksbuild.20.
	"kube-proxy": {[]string{"eks/kube-proxy"}, func(v Version) string {
		if v.Major == 1 && v.Minor < 25 {
			return v.raw
		}
		return fmt.Sprintf("v%d.%d.%d-minimal-eksbuild.%d", v.Major, v.Minor, v.Patch, v.Build)
	}},
	// The EBS CSI driver's image carries the upstream release only.
	"aws-ebs-csi-driver": {[]string{"eks/aws-ebs-csi-driver"}, func(v Version) string {
		return fmt.Sprintf("v%d.%d.%d", v.Major, v.Minor, v.Patch)
	}},
}

// Image returns an add-on container's image for a version, and
// whether the image is the add-on's own (sidecars such as the CSI
// provisioner keep theirs: the twin does not know their versions).
func Image(addon, image string, v Version) (string, bool) {
	spec, ok := addonImages[addon]
	if !ok {
		return image, false
	}
	name, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name = name[:i]
	}
	for _, repo := range spec.repos {
		if name == repo || strings.HasSuffix(name, "/"+repo) {
			return name + ":" + spec.tag(v), true
		}
	}
	return image, false
}

// CheckUpdate is UpdateAddon's validation: a known
// add-on, one add-on minor at a time ("may only be upgraded one minor
// version at a time", semantics.md §E), and for kube-proxy the skew policy
// against the API server and every kubelet (§D.4). kubelets maps node names
// to kubelet versions. Refusing a downgrade is the twin's own guard: the
// reference says nothing of add-on downgrades, and a playbook only moves
// add-ons up.
func CheckUpdate(addon, from, to string, cluster kubeversion.Minor, kubelets map[string]string) error {
	if _, ok := addonImages[addon]; !ok {
		return fmt.Errorf("add-on %s is not one the twin models (vpc-cni, coredns, kube-proxy, aws-ebs-csi-driver)", addon)
	}
	f, err := ParseVersion(from)
	if err != nil {
		return fmt.Errorf("add-on %s: %v", addon, err)
	}
	t, err := ParseVersion(to)
	if err != nil {
		return fmt.Errorf("add-on %s: %v", addon, err)
	}
	if t.Compare(f) < 0 {
		return fmt.Errorf("add-on %s: %s is older than the installed %s; EKS add-ons are not downgraded by an update", addon, to, from)
	}
	if t.Major != f.Major || t.Minor > f.Minor+1 {
		return fmt.Errorf("add-on %s: %s → %s skips a minor version; EKS add-ons may only be updated one minor version at a time (pin an intermediate version under spec.addons[].versions)", addon, from, to)
	}
	if addon == "kube-proxy" {
		proxy := kubeversion.Minor{Major: t.Major, Minor: t.Minor}
		for _, node := range slices.Sorted(maps.Keys(kubelets)) {
			k, err := kubeversion.Parse(kubelets[node])
			if err != nil {
				continue
			}
			if why := kubeversion.KubeProxySkew(cluster, k, proxy); why != "" {
				return fmt.Errorf("add-on kube-proxy %s on node %s: %s (version skew policy)", to, node, why)
			}
		}
		if why := kubeversion.KubeProxySkew(cluster, cluster, proxy); why != "" {
			return fmt.Errorf("add-on kube-proxy %s: %s (version skew policy)", to, why)
		}
	}
	return nil
}
