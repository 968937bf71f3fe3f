package catalog

import (
	"cmp"
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

//go:generate go run gen_amis.go

//go:embed amis.csv
var amisCSV []byte

// AMI families in the catalog, named as in Karpenter aliases.
const (
	FamilyAL2          = "al2"
	FamilyAL2023       = "al2023"
	FamilyBottlerocket = "bottlerocket"
)

// AMI architectures, named as AWS and Karpenter's SSM paths name them.
const (
	ArchX8664 = "x86_64"
	ArchARM64 = "arm64"
)

// LastAL2Minor is the last Kubernetes minor with EKS-optimized AL2 AMIs.
const LastAL2Minor = "1.32"

// AMI is one EKS-optimized AMI release for a family, Kubernetes minor and
// architecture.
type AMI struct {
	// ID is the EC2 image id. Only the seed's ids are real; the others are
	// stable synthetic placeholders (real ids come from SSM at runtime).
	ID string
	// Name is the EC2 image name, e.g. "amazon-eks-node-al2023-x86_64-standard-1.30-v20240807".
	Name string
	// Family is FamilyAL2, FamilyAL2023 or FamilyBottlerocket.
	Family string
	// Arch is ArchX8664 or ArchARM64; see [AMI.KubeArch].
	Arch string
	// KubernetesMinor is the Kubernetes minor the AMI is built for, e.g. "1.30".
	KubernetesMinor string
	// Release is the AMI release version, "v20240807" (AL2, AL2023) or "v1.20.0" (Bottlerocket).
	Release string
	// KubeletVersion is what the node reports, e.g. "v1.30.14-eks-f69f56f".
	KubeletVersion string
	// ReleaseDate is the release date, at 00:00 UTC.
	ReleaseDate time.Time
	// Synthetic reports whether ID is a placeholder rather than a real image id.
	Synthetic bool
}

// KubeArch returns the Kubernetes architecture (kubernetes.io/arch) the AMI
// runs on: "amd64" or "arm64".
func (a AMI) KubeArch() string {
	if a.Arch == ArchX8664 {
		return "amd64"
	}
	return a.Arch
}

// AMIArch maps a Kubernetes or AWS architecture name ("amd64", "x86_64",
// "arm64", "aarch64") to the AMI architecture, ArchX8664 or ArchARM64.
func AMIArch(arch string) (string, bool) {
	switch arch {
	case "amd64", ArchX8664:
		return ArchX8664, true
	case ArchARM64, "aarch64":
		return ArchARM64, true
	}
	return "", false
}

var (
	amisOnce  sync.Once
	amiList   []AMI
	amiByID   map[string]int
	amiGroups map[amiKey][]AMI // oldest first
)

type amiKey struct{ family, minor, arch string }

func loadAMIs() {
	amisOnce.Do(func() {
		amis, err := parseAMIs(amisCSV)
		if err != nil {
			panic("catalog: embedded " + err.Error())
		}
		amiList = amis
		amiByID = make(map[string]int, len(amis))
		amiGroups = map[amiKey][]AMI{}
		for i, a := range amis {
			amiByID[a.ID] = i
			k := amiKey{a.Family, a.KubernetesMinor, a.Arch}
			amiGroups[k] = append(amiGroups[k], a)
		}
	})
}

// AMIs returns every catalogued AMI, ordered by family, Kubernetes minor,
// architecture (x86_64 first) and release date. The slice is a fresh copy.
func AMIs() []AMI {
	loadAMIs()
	return slices.Clone(amiList)
}

// LookupAMI returns the AMI with the given image id.
func LookupAMI(id string) (AMI, bool) {
	loadAMIs()
	i, ok := amiByID[id]
	if !ok {
		return AMI{}, false
	}
	return amiList[i], true
}

// MatchName returns the AMIs whose name matches an EC2 name filter, as
// amiSelectorTerms[].name uses: '*' matches any run of characters and '?'
// one character; matching is case-sensitive and covers the whole name. The
// result is newest first (then by name), the order in which Karpenter
// prefers images.
func MatchName(pattern string) []AMI {
	loadAMIs()
	var out []AMI
	for _, a := range amiList {
		if wildcardMatch(pattern, a.Name) {
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(a, b AMI) int {
		if c := b.ReleaseDate.Compare(a.ReleaseDate); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// wildcardMatch reports whether s matches pattern, where '*' matches any
// sequence (including none) and '?' exactly one byte.
func wildcardMatch(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// Alias is a parsed Karpenter amiSelectorTerms alias, "family@version".
type Alias struct {
	// Family is one of al2, al2023, bottlerocket, windows2019, windows2022, windows2025.
	Family string
	// Version is "latest" or a pinned release such as "v20240807" or "v1.20.0".
	Version string
}

// AliasVersionLatest is the alias version that follows the newest release.
const AliasVersionLatest = "latest"

// aliasPattern and aliasMaxLength are the CEL rules of
// karpenter-provider-aws pkg/apis/v1/ec2nodeclass.go.
var aliasPattern = regexp.MustCompile(`^[a-zA-Z0-9]+@.+$`)

const aliasMaxLength = 30

var (
	aliasFamilies   = []string{FamilyAL2, FamilyAL2023, FamilyBottlerocket, "windows2019", "windows2022", "windows2025"}
	windowsFamilies = []string{"windows2019", "windows2022", "windows2025"}
)

// String returns "family@version".
func (a Alias) String() string { return a.Family + "@" + a.Version }

// ParseAlias validates an alias the way the EC2NodeClass CRD does: at most 30
// characters, the format family@version, a known family, and "latest" as the
// only version for the Windows families.
func ParseAlias(alias string) (Alias, error) {
	if len(alias) > aliasMaxLength {
		return Alias{}, fmt.Errorf("alias %q is %d characters; at most %d are allowed", alias, len(alias), aliasMaxLength)
	}
	family, version, _ := strings.Cut(alias, "@")
	if !aliasPattern.MatchString(alias) || strings.Contains(version, "@") {
		return Alias{}, fmt.Errorf("alias %q is improperly formatted, must match the format 'family@version' (e.g. al2023@latest)", alias)
	}
	if !slices.Contains(aliasFamilies, family) {
		return Alias{}, fmt.Errorf("alias %q: family %q is not supported, must be one of %s", alias, family, strings.Join(aliasFamilies, ", "))
	}
	if slices.Contains(windowsFamilies, family) && version != AliasVersionLatest {
		return Alias{}, fmt.Errorf("alias %q: windows families may only specify version 'latest'", alias)
	}
	return Alias{Family: family, Version: version}, nil
}

// ResolveAlias resolves a Karpenter amiSelectorTerms alias ("al2023@latest",
// "al2023@v20240807", "bottlerocket@v1.20.0", "bottlerocket@latest") for a
// control-plane Kubernetes version and a node architecture, as Karpenter does
// through the SSM public parameters. kubernetesVersion may be "1.30", "v1.30"
// or "1.30.14"; arch may be "amd64", "x86_64", "arm64" or "aarch64".
//
// "latest" is the newest release for that minor and architecture released at
// or before asOf (the zero time means no date limit). A pinned version is that
// exact release of that minor; for Bottlerocket the leading "v" is optional,
// as Karpenter strips it. Errors name the alias and what is available. The
// catalog has no Windows AMIs, so Windows aliases always fail.
func ResolveAlias(alias, kubernetesVersion, arch string, asOf time.Time) (AMI, error) {
	a, err := ParseAlias(alias)
	if err != nil {
		return AMI{}, err
	}
	minor, ok := NormalizeMinor(kubernetesVersion)
	if !ok {
		return AMI{}, fmt.Errorf("%s: %q is not a Kubernetes version like 1.30", alias, kubernetesVersion)
	}
	amiArch, ok := AMIArch(arch)
	if !ok {
		return AMI{}, fmt.Errorf("%s: unknown architecture %q (want amd64 or arm64)", alias, arch)
	}
	if slices.Contains(windowsFamilies, a.Family) {
		return AMI{}, fmt.Errorf("%s: the embedded catalog has no Windows AMIs (Windows nodes are not modelled); use al2023 or bottlerocket", alias)
	}
	loadAMIs()
	group := amiGroups[amiKey{a.Family, minor, amiArch}]
	if len(group) == 0 {
		if a.Family == FamilyAL2 && compareMinors(minor, LastAL2Minor) > 0 {
			return AMI{}, fmt.Errorf("%s: no al2 AMI for Kubernetes %s; AL2 AMIs end at %s — use al2023", alias, minor, LastAL2Minor)
		}
		return AMI{}, fmt.Errorf("%s: no %s %s AMI for Kubernetes %s; the catalog has %s AMIs for %s",
			alias, a.Family, amiArch, minor, a.Family, strings.Join(catalogMinors(a.Family, amiArch), ", "))
	}
	if a.Version == AliasVersionLatest {
		for _, ami := range slices.Backward(group) {
			if asOf.IsZero() || !ami.ReleaseDate.After(asOf) {
				return ami, nil
			}
		}
		return AMI{}, fmt.Errorf("%s: no %s %s AMI for Kubernetes %s was released on or before %s; the first was %s on %s",
			alias, a.Family, amiArch, minor, asOf.UTC().Format(time.DateOnly), group[0].Release, group[0].ReleaseDate.Format(time.DateOnly))
	}
	want := a.Version
	if a.Family == FamilyBottlerocket {
		want = "v" + strings.TrimLeft(want, "v")
	}
	for _, ami := range group {
		if ami.Release == want {
			return ami, nil
		}
	}
	releases := make([]string, len(group))
	for i, ami := range group {
		releases[i] = ami.Release
	}
	return AMI{}, fmt.Errorf("%s: no %s %s AMI release %s for Kubernetes %s; available: %s, latest",
		alias, a.Family, amiArch, a.Version, minor, strings.Join(releases, ", "))
}

// catalogMinors lists the minors with AMIs for a family and architecture.
func catalogMinors(family, arch string) []string {
	var minors []string
	for k := range amiGroups {
		if k.family == family && k.arch == arch {
			minors = append(minors, k.minor)
		}
	}
	slices.SortFunc(minors, compareMinors)
	return minors
}

var (
	amiIDPattern          = regexp.MustCompile(`^ami-[0-9a-f]{17}$`)
	kubeletVersionPattern = regexp.MustCompile(`^v(1\.[0-9]+)\.([0-9]+)-eks-[0-9a-f]{7}$`)
	alReleasePattern      = regexp.MustCompile(`^v20[0-9]{6}$`)
	brReleasePattern      = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)
	amisHeader            = []string{"id", "name", "family", "arch", "kubernetes_minor", "release", "release_date", "kubelet_version", "provenance"}
)

// amiName returns the EC2 image name a row must have. Bottlerocket names end
// in a build commit, so for them only the prefix is returned.
func amiName(a AMI) (name string, prefixOnly bool) {
	switch a.Family {
	case FamilyAL2:
		if a.Arch == ArchARM64 {
			return fmt.Sprintf("amazon-eks-arm64-node-%s-%s", a.KubernetesMinor, a.Release), false
		}
		return fmt.Sprintf("amazon-eks-node-%s-%s", a.KubernetesMinor, a.Release), false
	case FamilyAL2023:
		return fmt.Sprintf("amazon-eks-node-al2023-%s-standard-%s-%s", a.Arch, a.KubernetesMinor, a.Release), false
	default:
		return fmt.Sprintf("bottlerocket-aws-k8s-%s-%s-%s-", a.KubernetesMinor, a.Arch, a.Release), true
	}
}

// parseAMIs parses amis.csv and checks every row's own consistency (id and
// kubelet formats, the name scheme, the release format and date).
func parseAMIs(data []byte) ([]AMI, error) {
	recs, err := readCSV("amis.csv", data, amisHeader)
	if err != nil {
		return nil, err
	}
	seenID, seenName := map[string]bool{}, map[string]bool{}
	var out []AMI
	for _, r := range recs {
		var a AMI
		var provenance string
		for _, f := range []struct {
			dst  *string
			name string
		}{
			{&a.ID, "id"}, {&a.Name, "name"}, {&a.Family, "family"}, {&a.Arch, "arch"},
			{&a.KubernetesMinor, "kubernetes_minor"}, {&a.Release, "release"},
			{&a.KubeletVersion, "kubelet_version"}, {&provenance, "provenance"},
		} {
			if *f.dst, err = r.str(f.name); err != nil {
				return nil, err
			}
		}
		if a.ReleaseDate, err = r.date("release_date"); err != nil {
			return nil, err
		}
		a.Synthetic = provenance == "synthetic"
		kubelet := kubeletVersionPattern.FindStringSubmatch(a.KubeletVersion)
		switch {
		case !amiIDPattern.MatchString(a.ID):
			return nil, r.errorf("id %q does not match %s", a.ID, amiIDPattern)
		case seenID[a.ID]:
			return nil, r.errorf("duplicate AMI id %s", a.ID)
		case seenName[a.Name]:
			return nil, r.errorf("duplicate AMI name %s", a.Name)
		case a.Family != FamilyAL2 && a.Family != FamilyAL2023 && a.Family != FamilyBottlerocket:
			return nil, r.errorf("%s: unknown family %q", a.ID, a.Family)
		case a.Arch != ArchX8664 && a.Arch != ArchARM64:
			return nil, r.errorf("%s: arch %q must be x86_64 or arm64", a.ID, a.Arch)
		case !isMinor(a.KubernetesMinor):
			return nil, r.errorf("%s: kubernetes_minor %q is not like 1.30", a.ID, a.KubernetesMinor)
		case provenance != "seed" && provenance != "synthetic":
			return nil, r.errorf("%s: provenance %q must be seed or synthetic", a.ID, provenance)
		case kubelet == nil:
			return nil, r.errorf("%s: kubelet_version %q is not like v1.30.14-eks-f69f56f", a.ID, a.KubeletVersion)
		case kubelet[1] != a.KubernetesMinor:
			return nil, r.errorf("%s: kubelet_version %s is not a %s kubelet", a.ID, a.KubeletVersion, a.KubernetesMinor)
		case a.Family == FamilyBottlerocket && !brReleasePattern.MatchString(a.Release):
			return nil, r.errorf("%s: bottlerocket release %q is not like v1.20.0", a.ID, a.Release)
		case a.Family != FamilyBottlerocket && !alReleasePattern.MatchString(a.Release):
			return nil, r.errorf("%s: release %q is not like v20240807", a.ID, a.Release)
		case a.Family != FamilyBottlerocket && a.Release != "v"+a.ReleaseDate.Format("20060102"):
			return nil, r.errorf("%s: release %s does not match release_date %s", a.ID, a.Release, a.ReleaseDate.Format(time.DateOnly))
		}
		name, prefixOnly := amiName(a)
		if (prefixOnly && !strings.HasPrefix(a.Name, name)) || (!prefixOnly && a.Name != name) {
			return nil, r.errorf("%s: name %q does not follow the %s naming scheme %q", a.ID, a.Name, a.Family, name)
		}
		seenID[a.ID], seenName[a.Name] = true, true
		out = append(out, a)
	}
	familyRank := map[string]int{FamilyAL2: 0, FamilyAL2023: 1, FamilyBottlerocket: 2}
	slices.SortStableFunc(out, func(a, b AMI) int {
		return cmp.Or(
			cmp.Compare(familyRank[a.Family], familyRank[b.Family]),
			compareMinors(a.KubernetesMinor, b.KubernetesMinor),
			-strings.Compare(a.Arch, b.Arch), // x86_64 before arm64
			a.ReleaseDate.Compare(b.ReleaseDate),
			strings.Compare(a.Name, b.Name),
		)
	})
	return out, nil
}
