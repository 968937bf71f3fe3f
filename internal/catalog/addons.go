package catalog

import (
	_ "embed"
	"regexp"
	"slices"
	"sync"
)

// addons.csv is a copy of the project's reference snapshot of the AWS docs
// tables "latest version of the Amazon EKS add-on type for each Kubernetes
// version" (see its source column). It gives latest versions, not defaults;
// at runtime DescribeAddonVersions is authoritative.
//
//go:embed addons.csv
var addonsCSV []byte

// AddonVersion is the latest known version of an EKS add-on for one
// Kubernetes minor.
type AddonVersion struct {
	// Addon is the EKS add-on name, e.g. "kube-proxy".
	Addon string
	// KubernetesMinor is the minor, e.g. "1.30", or "*" for a note that applies to every minor.
	KubernetesMinor string
	// Version is the latest known add-on version, e.g. "v1.30.14-eksbuild.28";
	// empty when no snapshot had one (Source then says why).
	Version string
	// Source says where the version was read.
	Source string
}

var (
	addonsOnce sync.Once
	addonList  []AddonVersion
)

func loadAddons() {
	addonsOnce.Do(func() {
		list, err := parseAddons(addonsCSV)
		if err != nil {
			panic("catalog: embedded " + err.Error())
		}
		addonList = list
	})
}

// AddonVersions returns every add-on row in file order (add-on, then newest
// minor first), including rows without a known version. The slice is a
// fresh copy.
func AddonVersions() []AddonVersion {
	loadAddons()
	return slices.Clone(addonList)
}

// LatestAddon returns the latest known version of an add-on for a minor
// ("1.30"; "v1.30" and "1.30.14" are accepted too). ok is false when the
// catalog knows no version; the returned row, if any (a row for that minor or
// the add-on's "*" row), then still carries the Source note explaining why.
func LatestAddon(addon, minor string) (v AddonVersion, ok bool) {
	loadAddons()
	m, valid := NormalizeMinor(minor)
	var wildcard *AddonVersion
	for i, a := range addonList {
		if a.Addon != addon {
			continue
		}
		if valid && a.KubernetesMinor == m {
			return a, a.Version != ""
		}
		if a.KubernetesMinor == "*" {
			wildcard = &addonList[i]
		}
	}
	if wildcard != nil {
		return *wildcard, wildcard.Version != ""
	}
	return AddonVersion{}, false
}

var (
	addonsHeader        = []string{"addon", "kubernetes_version", "latest_eks_addon_version", "source"}
	addonVersionPattern = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+-eksbuild\.[0-9]+$`)
)

// parseAddons parses addons.csv: unique (add-on, minor) pairs, minors like
// 1.30 or "*", and a source on every row.
func parseAddons(data []byte) ([]AddonVersion, error) {
	recs, err := readCSV("addons.csv", data, addonsHeader)
	if err != nil {
		return nil, err
	}
	seen := map[[2]string]bool{}
	var out []AddonVersion
	for _, r := range recs {
		var a AddonVersion
		if a.Addon, err = r.str("addon"); err != nil {
			return nil, err
		}
		if a.KubernetesMinor, err = r.str("kubernetes_version"); err != nil {
			return nil, err
		}
		if a.Source, err = r.str("source"); err != nil {
			return nil, err
		}
		a.Version = r.fields["latest_eks_addon_version"]
		key := [2]string{a.Addon, a.KubernetesMinor}
		switch {
		case a.KubernetesMinor != "*" && !isMinor(a.KubernetesMinor):
			return nil, r.errorf("%s: kubernetes_version %q is not like 1.30 or *", a.Addon, a.KubernetesMinor)
		case seen[key]:
			return nil, r.errorf("duplicate row for %s %s", a.Addon, a.KubernetesMinor)
		case a.Version != "" && !addonVersionPattern.MatchString(a.Version):
			return nil, r.errorf("%s %s: version %q is not like v1.30.14-eksbuild.28", a.Addon, a.KubernetesMinor, a.Version)
		}
		seen[key] = true
		out = append(out, a)
	}
	return out, nil
}
