package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func date(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// kubeletPatch returns 14 for "v1.30.14-eks-f69f56f".
func kubeletPatch(t *testing.T, v string) int {
	t.Helper()
	m := kubeletVersionPattern.FindStringSubmatch(v)
	if m == nil {
		t.Fatalf("kubelet version %q is malformed", v)
	}
	n, _ := strconv.Atoi(m[2])
	return n
}

// finalPatch is the newest Kubernetes patch EKS shipped per minor.
var finalPatch = map[string]int{
	"1.23": 17, "1.24": 17, "1.25": 16, "1.26": 15, "1.27": 16, "1.28": 15, "1.29": 15,
	"1.30": 14, "1.31": 14, "1.32": 13, "1.33": 10, "1.34": 6, "1.35": 3, "1.36": 0,
}

// TestEmbeddedAMIs parses every row of the embedded file (a malformed row
// fails here) and checks the catalogue-wide invariants.
func TestEmbeddedAMIs(t *testing.T) {
	amis, err := parseAMIs(amisCSV)
	if err != nil {
		t.Fatalf("amis.csv: %v", err)
	}
	dataDate := date(DataDate)
	groups := map[amiKey][]AMI{}
	ids, names := map[string]bool{}, map[string]bool{}
	for _, a := range amis {
		if !amiIDPattern.MatchString(a.ID) {
			t.Errorf("%s: id does not match ^ami-[0-9a-f]{17}$", a.ID)
		}
		if ids[a.ID] || names[a.Name] {
			t.Errorf("%s %s: duplicate id or name", a.ID, a.Name)
		}
		ids[a.ID], names[a.Name] = true, true
		if !strings.HasPrefix(a.KubeletVersion, "v"+a.KubernetesMinor+".") {
			t.Errorf("%s: kubelet %s is not a %s kubelet", a.ID, a.KubeletVersion, a.KubernetesMinor)
		}
		rel, ok := LookupRelease(a.KubernetesMinor)
		if !ok {
			t.Errorf("%s: minor %s is not in the calendar", a.ID, a.KubernetesMinor)
			continue
		}
		if a.ReleaseDate.Before(rel.EKSRelease) || a.ReleaseDate.After(dataDate) || !a.ReleaseDate.Before(rel.EndOfExtendedSupport) {
			t.Errorf("%s: released %s, outside [%s (EKS release), min(%s (end of extended support), %s)]",
				a.ID, a.ReleaseDate.Format(time.DateOnly), rel.EKSRelease.Format(time.DateOnly),
				rel.EndOfExtendedSupport.Format(time.DateOnly), DataDate)
		}
		if a.Family == FamilyAL2 && compareMinors(a.KubernetesMinor, LastAL2Minor) > 0 {
			t.Errorf("%s: al2 AMI for %s; AL2 AMIs end at %s", a.ID, a.KubernetesMinor, LastAL2Minor)
		}
		if a.Family == FamilyAL2 && a.ReleaseDate.After(date("2025-11-26")) {
			t.Errorf("%s: al2 AMI released %s, after AL2 end of support", a.ID, a.ReleaseDate.Format(time.DateOnly))
		}
		k := amiKey{a.Family, a.KubernetesMinor, a.Arch}
		groups[k] = append(groups[k], a)
	}

	// Every (family, minor, arch) is covered with at least 2 releases; from
	// 2025-06-01 on, every release is there for every minor it was built
	// for (gen_amis.go keepAllFrom), e.g. v20260220 for 1.29 to 1.35.
	coverage := []struct {
		family     string
		first, end int
	}{
		{FamilyAL2, 23, 32},
		{FamilyAL2023, 25, 36},
		{FamilyBottlerocket, 23, 36},
	}
	want := 0
	for _, c := range coverage {
		for m := c.first; m <= c.end; m++ {
			for _, arch := range []string{ArchX8664, ArchARM64} {
				want++
				k := amiKey{c.family, fmt.Sprintf("1.%d", m), arch}
				if n := len(groups[k]); n < 2 {
					t.Errorf("%v: %d releases, want at least 2", k, n)
				}
			}
		}
	}
	for m := 29; m <= 35; m++ {
		found := false
		for _, a := range groups[amiKey{FamilyAL2023, fmt.Sprintf("1.%d", m), ArchX8664}] {
			found = found || a.Release == "v20260220"
		}
		if !found {
			t.Errorf("al2023 x86_64 1.%d has no v20260220 build", m)
		}
	}
	if len(groups) != want {
		t.Errorf("%d (family, minor, arch) groups, want %d", len(groups), want)
	}

	for k, g := range groups {
		// Within a group releases are unique, kubelet patches never go
		// backwards, and the newest al2023/bottlerocket release carries the
		// minor's final patch (AL2 stopped before some final patches).
		releases := map[string]bool{}
		for i, a := range g {
			if releases[a.Release] {
				t.Errorf("%v: duplicate release %s", k, a.Release)
			}
			releases[a.Release] = true
			if i > 0 {
				prev := g[i-1]
				if !prev.ReleaseDate.Before(a.ReleaseDate) {
					t.Errorf("%v: %s not after %s", k, a.Release, prev.Release)
				}
				if kubeletPatch(t, a.KubeletVersion) < kubeletPatch(t, prev.KubeletVersion) {
					t.Errorf("%v: kubelet %s (%s) older than %s (%s)", k, a.KubeletVersion, a.Release, prev.KubeletVersion, prev.Release)
				}
			}
		}
		newest := g[len(g)-1]
		if got := kubeletPatch(t, newest.KubeletVersion); k.family != FamilyAL2 && got != finalPatch[k.minor] {
			t.Errorf("%v: newest release %s has kubelet %s, want patch %s.%d", k, newest.Release, newest.KubeletVersion, k.minor, finalPatch[k.minor])
		}
	}

	// One kubelet build per patch: the same "v1.30.14" always has the same suffix.
	builds := map[string]string{}
	for _, a := range amis {
		v, build, _ := strings.Cut(a.KubeletVersion, "-eks-")
		if prev, ok := builds[v]; ok && prev != build {
			t.Errorf("%s: kubelet %s has builds %s and %s", a.ID, v, prev, build)
		}
		builds[v] = build
	}

	if got := AMIs(); !slices.Equal(got, amis) {
		t.Errorf("AMIs() differs from a fresh parse")
	}
}

// Non-seed ids are sha256 placeholders of the name (see gen_amis.go), so
// they are stable and cannot be mistaken for hand-picked real ids.
func TestAMISyntheticIDsAreStable(t *testing.T) {
	seeds := 0
	for _, a := range AMIs() {
		if !a.Synthetic {
			seeds++
			continue
		}
		sum := sha256.Sum256([]byte("ladder-catalog-ami:" + a.Name))
		if want := "ami-" + hex.EncodeToString(sum[:])[:17]; a.ID != want {
			t.Errorf("%s: synthetic id %s, want %s", a.Name, a.ID, want)
		}
	}
	if seeds != 2 {
		t.Errorf("%d seed AMIs, want 2", seeds)
	}
}

func TestSeedAMIs(t *testing.T) {
	tests := []struct {
		id, family, arch, minor, kubelet, namePrefix string
	}{
		{"ami-0f676a166352f02ab", FamilyAL2023, ArchX8664, "1.30", "v1.30.14-eks-f69f56f", "amazon-eks-node-al2023-x86_64-standard-1.30-v"},
		{"ami-0c4dea04571b1b508", FamilyAL2023, ArchX8664, "1.31", "v1.31.14-eks-ecaa3a6", "amazon-eks-node-al2023-x86_64-standard-1.31-v"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			a, ok := LookupAMI(tt.id)
			if !ok {
				t.Fatalf("LookupAMI(%s) not found", tt.id)
			}
			if a.Family != tt.family || a.Arch != tt.arch || a.KubernetesMinor != tt.minor || a.KubeletVersion != tt.kubelet ||
				!strings.HasPrefix(a.Name, tt.namePrefix) || a.Synthetic || a.KubeArch() != "amd64" {
				t.Errorf("got %+v", a)
			}
			// The seed AMI is what the SSM "recommended" parameter returned:
			// the newest release of its minor.
			latest, err := ResolveAlias("al2023@latest", tt.minor, "amd64", time.Time{})
			if err != nil || latest.ID != tt.id {
				t.Errorf("al2023@latest on %s = %s, %v; want %s", tt.minor, latest.ID, err, tt.id)
			}
		})
	}
	if _, ok := LookupAMI("ami-00000000000000000"); ok {
		t.Errorf("LookupAMI found an unknown id")
	}
}

func TestResolveAlias(t *testing.T) {
	tests := []struct {
		name, alias, version, arch string
		asOf                       string // "" = no limit
		wantID                     string // checked when set
		wantName                   string
		wantKubelet                string // checked when set
	}{
		{"seed 1.31 latest", "al2023@latest", "1.31", "amd64", "", "ami-0c4dea04571b1b508",
			"amazon-eks-node-al2023-x86_64-standard-1.31-v20260320", "v1.31.14-eks-ecaa3a6"},
		{"seed 1.30 latest from a kubelet-style version", "al2023@latest", "v1.30.14", "x86_64", "", "ami-0f676a166352f02ab",
			"amazon-eks-node-al2023-x86_64-standard-1.30-v20260220", "v1.30.14-eks-f69f56f"},
		{"latest on the release day includes that release", "al2023@latest", "1.31", "amd64", "2026-03-20", "ami-0c4dea04571b1b508",
			"amazon-eks-node-al2023-x86_64-standard-1.31-v20260320", ""},
		{"latest the day before falls back to the previous release", "al2023@latest", "1.31", "amd64", "2026-03-19", "",
			"amazon-eks-node-al2023-x86_64-standard-1.31-v20260220", "v1.31.14-eks-ecaa3a6"},
		{"a release pinned at 1.30 resolves for 1.31 too", "al2023@v20260220", "1.31", "amd64", "", "",
			"amazon-eks-node-al2023-x86_64-standard-1.31-v20260220", ""},
		{"al2023 arm64 latest", "al2023@latest", "1.31", "arm64", "", "",
			"amazon-eks-node-al2023-arm64-standard-1.31-v20260320", "v1.31.14-eks-ecaa3a6"},
		{"al2023 pinned", "al2023@v20240807", "1.30", "amd64", "", "",
			"amazon-eks-node-al2023-x86_64-standard-1.30-v20240807", "v1.30.2-eks-b581851"},
		{"al2023 newest minor", "al2023@latest", "1.36", "amd64", "", "",
			"amazon-eks-node-al2023-x86_64-standard-1.36-v20261118", "v1.36.0-eks-2b5d7f5"},
		{"al2 latest on the last AL2 minor", "al2@latest", "1.32", "amd64", "", "",
			"amazon-eks-node-1.32-v20251112", "v1.32.10-eks-b33cd6e"},
		{"al2 arm64 pinned", "al2@v20240807", "1.30", "arm64", "", "",
			"amazon-eks-arm64-node-1.30-v20240807", ""},
		{"bottlerocket pinned", "bottlerocket@v1.20.0", "1.30", "amd64", "", "",
			"bottlerocket-aws-k8s-1.30-x86_64-v1.20.0-73bff267", "v1.30.0-eks-44a59a7"},
		{"bottlerocket pinned without v", "bottlerocket@1.20.0", "1.30", "amd64", "", "",
			"bottlerocket-aws-k8s-1.30-x86_64-v1.20.0-73bff267", ""},
		{"bottlerocket latest", "bottlerocket@latest", "1.36", "arm64", "", "",
			"bottlerocket-aws-k8s-1.36-arm64-v1.65.0-f44c03d4", "v1.36.0-eks-2b5d7f5"},
		{"bottlerocket latest as of a date", "bottlerocket@latest", "1.36", "amd64", "2026-09-01", "",
			"bottlerocket-aws-k8s-1.36-x86_64-v1.62.0-85897f0b", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asOf time.Time
			if tt.asOf != "" {
				asOf = date(tt.asOf)
			}
			got, err := ResolveAlias(tt.alias, tt.version, tt.arch, asOf)
			if err != nil {
				t.Fatalf("ResolveAlias(%q, %q, %q) error: %v", tt.alias, tt.version, tt.arch, err)
			}
			if got.Name != tt.wantName || (tt.wantID != "" && got.ID != tt.wantID) || (tt.wantKubelet != "" && got.KubeletVersion != tt.wantKubelet) {
				t.Errorf("ResolveAlias(%q, %q, %q) = %s %s %s; want %s %s %s", tt.alias, tt.version, tt.arch,
					got.ID, got.Name, got.KubeletVersion, tt.wantID, tt.wantName, tt.wantKubelet)
			}
		})
	}
}

func TestResolveAliasErrors(t *testing.T) {
	tests := []struct {
		name, alias, version, arch string
		asOf                       string
		wantErr                    []string // substrings
	}{
		{"no @", "al2023", "1.31", "amd64", "", []string{"improperly formatted", "family@version"}},
		{"empty version", "al2023@", "1.31", "amd64", "", []string{"improperly formatted"}},
		{"empty family", "@latest", "1.31", "amd64", "", []string{"improperly formatted"}},
		{"two @", "al2023@latest@x", "1.31", "amd64", "", []string{"improperly formatted"}},
		{"family with a dash", "al-2023@latest", "1.31", "amd64", "", []string{"improperly formatted"}},
		{"too long", "bottlerocket@v1.20.0-0123456789abc", "1.30", "amd64", "", []string{"at most 30"}},
		{"unknown family", "ubuntu@latest", "1.31", "amd64", "", []string{`family "ubuntu" is not supported`, "al2, al2023, bottlerocket, windows2019"}},
		{"families are lower case", "AL2023@latest", "1.31", "amd64", "", []string{"not supported"}},
		{"al2 beyond 1.32", "al2@latest", "1.33", "amd64", "", []string{"al2@latest: no al2 AMI for Kubernetes 1.33; AL2 AMIs end at 1.32 — use al2023"}},
		{"al2 pinned beyond 1.32", "al2@v20250715", "1.34", "arm64", "", []string{"no al2 AMI for Kubernetes 1.34", "use al2023"}},
		{"unknown pinned release", "al2023@v20990101", "1.30", "amd64", "", []string{
			"al2023@v20990101: no al2023 x86_64 AMI release v20990101 for Kubernetes 1.30",
			"available: v20240703, v20240807, v20250610, v20250715, v20250821, v20250920, v20251029, v20251112, v20251216, v20260115, v20260220, latest"}},
		{"al2 date on bottlerocket", "bottlerocket@v20240807", "1.30", "amd64", "", []string{"no bottlerocket x86_64 AMI release v20240807"}},
		{"windows latest", "windows2022@latest", "1.31", "amd64", "", []string{"no Windows AMIs"}},
		{"windows pinned", "windows2019@v1", "1.31", "amd64", "", []string{"windows families may only specify version 'latest'"}},
		{"al2023 before it existed", "al2023@latest", "1.24", "amd64", "", []string{"no al2023 x86_64 AMI for Kubernetes 1.24", "1.25, 1.26"}},
		{"minor not in the catalog", "bottlerocket@latest", "1.40", "amd64", "", []string{"no bottlerocket x86_64 AMI for Kubernetes 1.40", "1.23, 1.24"}},
		{"bad version", "al2023@latest", "latest", "amd64", "", []string{`"latest" is not a Kubernetes version`}},
		{"bad arch", "al2023@latest", "1.31", "s390x", "", []string{`unknown architecture "s390x"`}},
		{"nothing released yet", "al2023@latest", "1.36", "amd64", "2026-06-01", []string{
			"no al2023 x86_64 AMI for Kubernetes 1.36 was released on or before 2026-06-01", "v20260608"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asOf time.Time
			if tt.asOf != "" {
				asOf = date(tt.asOf)
			}
			got, err := ResolveAlias(tt.alias, tt.version, tt.arch, asOf)
			if err == nil {
				t.Fatalf("ResolveAlias(%q, %q, %q) = %s, want an error", tt.alias, tt.version, tt.arch, got.Name)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestParseAlias(t *testing.T) {
	tests := []struct {
		alias, family, version string
	}{
		{"al2023@latest", "al2023", "latest"},
		{"al2@v20240807", "al2", "v20240807"},
		{"bottlerocket@v1.20.0", "bottlerocket", "v1.20.0"},
		{"windows2025@latest", "windows2025", "latest"},
	}
	for _, tt := range tests {
		t.Run(tt.alias, func(t *testing.T) {
			a, err := ParseAlias(tt.alias)
			if err != nil || a.Family != tt.family || a.Version != tt.version || a.String() != tt.alias {
				t.Errorf("ParseAlias(%q) = %+v, %v", tt.alias, a, err)
			}
		})
	}
}

func TestMatchName(t *testing.T) {
	tests := []struct {
		name, pattern string
		want          []string // names, newest first
	}{
		{"exact seed name", "amazon-eks-node-al2023-x86_64-standard-1.31-v20260320", []string{
			"amazon-eks-node-al2023-x86_64-standard-1.31-v20260320"}},
		{"wildcard release, newest first", "amazon-eks-node-al2023-x86_64-standard-1.30-*", []string{
			"amazon-eks-node-al2023-x86_64-standard-1.30-v20260220",
			"amazon-eks-node-al2023-x86_64-standard-1.30-v20260115",
			"amazon-eks-node-al2023-x86_64-standard-1.30-v20251216",
			"amazon-eks-node-al2023-x86_64-standard-1.30-v20251112",
			"amazon-eks-node-al2023-x86_64-standard-1.30-v20251029",
			"amazon-eks-node-al2023-x86_64-standard-1.30-v20250920",
			"amazon-eks-node-al2023-x86_64-standard-1.30-v20250821",
			"amazon-eks-node-al2023-x86_64-standard-1.30-v20250715",
			"amazon-eks-node-al2023-x86_64-standard-1.30-v20250610",
			"amazon-eks-node-al2023-x86_64-standard-1.30-v20240807",
			"amazon-eks-node-al2023-x86_64-standard-1.30-v20240703"}},
		{"question marks", "amazon-eks-node-al2023-?????-standard-1.31-v2026032?", []string{
			"amazon-eks-node-al2023-arm64-standard-1.31-v20260320"}},
		{"bottlerocket by version across minors, ties by name", "bottlerocket-aws-k8s-*-arm64-v1.65.0-*", []string{
			"bottlerocket-aws-k8s-1.31-arm64-v1.65.0-f44c03d4",
			"bottlerocket-aws-k8s-1.32-arm64-v1.65.0-f44c03d4",
			"bottlerocket-aws-k8s-1.33-arm64-v1.65.0-f44c03d4",
			"bottlerocket-aws-k8s-1.34-arm64-v1.65.0-f44c03d4",
			"bottlerocket-aws-k8s-1.35-arm64-v1.65.0-f44c03d4",
			"bottlerocket-aws-k8s-1.36-arm64-v1.65.0-f44c03d4"}},
		{"case-sensitive", "AMAZON-EKS-NODE-*", nil},
		{"no match", "ubuntu-eks/*", nil},
		{"pattern must cover the whole name", "amazon-eks-node-1.32", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var names []string
			for _, a := range MatchName(tt.pattern) {
				names = append(names, a.Name)
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("MatchName(%q) =\n%v\nwant\n%v", tt.pattern, names, tt.want)
			}
		})
	}
	if got := MatchName("amazon-eks-node-al2023-x86_64-standard-1.31-v20260320"); len(got) != 1 || got[0].ID != "ami-0c4dea04571b1b508" {
		t.Errorf("seed name resolves to %+v, want ami-0c4dea04571b1b508", got)
	}
	if n := len(MatchName("*")); n != len(AMIs()) {
		t.Errorf("MatchName(*) = %d AMIs, want all %d", n, len(AMIs()))
	}
}

func TestWildcardMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"*", "anything", true},
		{"a*c", "abbbc", true},
		{"a*c", "abbb", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"*-1.30-*", "amazon-eks-node-1.30-v20240807", true},
		{"**x", "abx", true},
		{"a*b*c", "a-b-b-c", true},
		{"a*b*c", "a-c-b", false},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+"|"+tt.s, func(t *testing.T) {
			if got := wildcardMatch(tt.pattern, tt.s); got != tt.want {
				t.Errorf("wildcardMatch(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
			}
		})
	}
}

func TestAMIArch(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"amd64", ArchX8664, true},
		{"x86_64", ArchX8664, true},
		{"arm64", ArchARM64, true},
		{"aarch64", ArchARM64, true},
		{"386", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := AMIArch(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("AMIArch(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
	for _, a := range []AMI{{Arch: ArchX8664}, {Arch: ArchARM64}} {
		back, _ := AMIArch(a.KubeArch())
		if back != a.Arch {
			t.Errorf("AMIArch(KubeArch(%s)) = %s", a.Arch, back)
		}
	}
}

func TestAMIsReturnsCopy(t *testing.T) {
	amis := AMIs()
	id := amis[0].ID
	amis[0].ID = "mutated"
	if AMIs()[0].ID != id {
		t.Errorf("mutating the returned slice changed the catalog")
	}
}

func TestParseAMIsRejectsMalformedRows(t *testing.T) {
	const header = "id,name,family,arch,kubernetes_minor,release,release_date,kubelet_version,provenance\n"
	row := func(id, name, family, arch, minor, release, date, kubelet, prov string) string {
		return strings.Join([]string{id, name, family, arch, minor, release, date, kubelet, prov}, ",") + "\n"
	}
	good := row("ami-0123456789abcdef0", "amazon-eks-node-al2023-x86_64-standard-1.30-v20240807", "al2023", "x86_64", "1.30", "v20240807", "2024-08-07", "v1.30.2-eks-1234567", "synthetic")
	tests := []struct {
		name, data, wantErr string
	}{
		{"short id", header + row("ami-0123", "amazon-eks-node-al2023-x86_64-standard-1.30-v20240807", "al2023", "x86_64", "1.30", "v20240807", "2024-08-07", "v1.30.2-eks-1234567", "synthetic"), "does not match"},
		{"upper-case id", header + row("ami-0123456789ABCDEF0", "amazon-eks-node-al2023-x86_64-standard-1.30-v20240807", "al2023", "x86_64", "1.30", "v20240807", "2024-08-07", "v1.30.2-eks-1234567", "synthetic"), "does not match"},
		{"duplicate id", header + good + good, "duplicate AMI id"},
		{"unknown family", header + row("ami-0123456789abcdef0", "x", "ubuntu", "x86_64", "1.30", "v20240807", "2024-08-07", "v1.30.2-eks-1234567", "synthetic"), "unknown family"},
		{"kube arch name", header + row("ami-0123456789abcdef0", "amazon-eks-node-al2023-amd64-standard-1.30-v20240807", "al2023", "amd64", "1.30", "v20240807", "2024-08-07", "v1.30.2-eks-1234567", "synthetic"), "arch"},
		{"kubelet of another minor", header + row("ami-0123456789abcdef0", "amazon-eks-node-al2023-x86_64-standard-1.30-v20240807", "al2023", "x86_64", "1.30", "v20240807", "2024-08-07", "v1.31.2-eks-1234567", "synthetic"), "is not a 1.30 kubelet"},
		{"kubelet without build", header + row("ami-0123456789abcdef0", "amazon-eks-node-al2023-x86_64-standard-1.30-v20240807", "al2023", "x86_64", "1.30", "v20240807", "2024-08-07", "v1.30.2", "synthetic"), "kubelet_version"},
		{"release and date disagree", header + row("ami-0123456789abcdef0", "amazon-eks-node-al2023-x86_64-standard-1.30-v20240807", "al2023", "x86_64", "1.30", "v20240807", "2024-08-08", "v1.30.2-eks-1234567", "synthetic"), "does not match release_date"},
		{"bad date", header + row("ami-0123456789abcdef0", "amazon-eks-node-al2023-x86_64-standard-1.30-v20240807", "al2023", "x86_64", "1.30", "v20240807", "07/08/2024", "v1.30.2-eks-1234567", "synthetic"), "YYYY-MM-DD"},
		{"name scheme", header + row("ami-0123456789abcdef0", "amazon-eks-node-1.30-v20240807", "al2023", "x86_64", "1.30", "v20240807", "2024-08-07", "v1.30.2-eks-1234567", "synthetic"), "naming scheme"},
		{"bottlerocket release format", header + row("ami-0123456789abcdef0", "bottlerocket-aws-k8s-1.30-x86_64-v20240807-abcdef12", "bottlerocket", "x86_64", "1.30", "v20240807", "2024-08-07", "v1.30.2-eks-1234567", "synthetic"), "like v1.20.0"},
		{"provenance", header + row("ami-0123456789abcdef0", "amazon-eks-node-al2023-x86_64-standard-1.30-v20240807", "al2023", "x86_64", "1.30", "v20240807", "2024-08-07", "v1.30.2-eks-1234567", "real"), "provenance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseAMIs([]byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseAMIs() error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
	if _, err := parseAMIs([]byte(header + good)); err != nil {
		t.Errorf("good row: %v", err)
	}
}
