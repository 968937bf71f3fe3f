//go:build ignore

// gen_amis.go regenerates amis.csv deterministically:
//
//	cd internal/catalog && go run gen_amis.go   (or: go generate ./internal/catalog/)
//
// Release trains, windows and kubelet patches are modelled (see the comments
// below); the two seed AMIs are real and copied verbatim. Every other AMI id is
// "ami-" + the first 17 hex digits of sha256("ladder-catalog-ami:" + name), a
// stable synthetic placeholder (TestAMISyntheticIDsAreStable checks this).
package main

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

const dataDate = "2026-11-25"

// minor describes one Kubernetes minor on EKS (dates from eks-calendar.csv).
type minor struct {
	name         string
	upstream     string
	eksRelease   string
	endExtended  string
	finalPatch   int
	al2, al2023  bool
	al2023CapAt  string // newest al2023 release kept (seed AMIs must be the newest)
	bottlerocket bool
}

var minors = []minor{
	{"1.23", "2021-12-07", "2022-08-11", "2024-10-11", 17, true, false, "", true},
	{"1.24", "2022-05-03", "2022-11-15", "2025-01-31", 17, true, false, "", true},
	{"1.25", "2022-08-23", "2023-02-22", "2025-05-01", 16, true, true, "", true},
	{"1.26", "2022-12-09", "2023-04-11", "2025-06-11", 15, true, true, "", true},
	{"1.27", "2023-04-11", "2023-05-24", "2025-07-24", 16, true, true, "", true},
	{"1.28", "2023-08-15", "2023-09-26", "2025-11-26", 15, true, true, "", true},
	{"1.29", "2023-12-13", "2024-01-23", "2026-03-23", 15, true, true, "", true},
	{"1.30", "2024-04-17", "2024-05-23", "2026-07-23", 14, true, true, "2026-02-20", true},
	{"1.31", "2024-08-13", "2024-09-26", "2026-11-26", 14, true, true, "2026-03-20", true},
	{"1.32", "2024-12-11", "2025-01-23", "2027-03-23", 13, true, true, "", true},
	{"1.33", "2025-04-23", "2025-05-29", "2027-07-29", 10, false, true, "", true},
	{"1.34", "2025-08-27", "2025-10-02", "2027-12-02", 6, false, true, "", true},
	{"1.35", "2025-12-17", "2026-01-27", "2028-03-27", 3, false, true, "", true},
	{"1.36", "2026-04-22", "2026-06-02", "2028-08-02", 0, false, true, "", true},
}

// alTrains are amazon-eks-ami release versions (AL2 and AL2023 share them).
// Dates are modelled on the project's roughly monthly cadence.
var alTrains = []string{
	"v20220824", "v20221027", "v20221222",
	"v20230217", "v20230406", "v20230607", "v20230728", "v20230919", "v20231116",
	"v20240110", "v20240213", "v20240329", "v20240514", "v20240703", "v20240807", "v20240917", "v20241024", "v20241205",
	"v20250123", "v20250304", "v20250419", "v20250610", "v20250715", "v20250821", "v20250920", "v20251029", "v20251112", "v20251216",
	"v20260115", "v20260220", "v20260320", "v20260423", "v20260608", "v20260715", "v20260820", "v20260924", "v20261030", "v20261118",
}

// bottlerocketTrains are Bottlerocket OS releases with approximate dates.
var bottlerocketTrains = []struct{ version, date string }{
	{"v1.9.2", "2022-09-01"}, {"v1.10.1", "2022-10-20"}, {"v1.11.1", "2022-12-01"},
	{"v1.12.0", "2023-01-25"}, {"v1.13.1", "2023-03-28"}, {"v1.14.1", "2023-06-01"},
	{"v1.15.0", "2023-08-22"}, {"v1.16.0", "2023-10-25"}, {"v1.17.0", "2023-12-12"},
	{"v1.18.0", "2024-01-29"}, {"v1.19.2", "2024-03-26"}, {"v1.20.0", "2024-05-28"},
	{"v1.20.5", "2024-07-30"}, {"v1.21.1", "2024-08-27"}, {"v1.22.0", "2024-09-27"},
	{"v1.24.0", "2024-10-03"}, {"v1.26.2", "2024-11-14"}, {"v1.29.0", "2025-01-08"},
	{"v1.32.0", "2025-02-04"}, {"v1.36.0", "2025-04-08"}, {"v1.39.1", "2025-06-03"},
	{"v1.43.0", "2025-07-29"}, {"v1.46.0", "2025-09-16"}, {"v1.48.0", "2025-10-07"},
	{"v1.50.0", "2025-11-18"}, {"v1.52.0", "2026-01-13"}, {"v1.53.0", "2026-01-29"},
	{"v1.55.0", "2026-03-17"}, {"v1.57.0", "2026-05-05"}, {"v1.58.0", "2026-06-04"},
	{"v1.60.0", "2026-07-21"}, {"v1.62.0", "2026-09-01"}, {"v1.64.0", "2026-10-20"},
	{"v1.65.0", "2026-11-17"},
}

const (
	al2023GA = "2024-03-01" // AL2023 EKS AMIs became generally available in early 2024
	al2End   = "2025-11-26" // AL2 EKS AMIs reached end of support; 1.32 is the last minor
)

// pinnedExamples are always kept when inside a window so documented aliases
// ("al2023@v20240807", "bottlerocket@v1.20.0") resolve.
var pinnedExamples = map[string]bool{"v20240807": true, "v1.20.0": true}

// seeds are the real AMIs from the Karpenter node-upgrade seed.
var seeds = map[string]struct{ id, kubelet string }{
	"amazon-eks-node-al2023-x86_64-standard-1.30-v20260220": {"ami-0f676a166352f02ab", "v1.30.14-eks-f69f56f"},
	"amazon-eks-node-al2023-x86_64-standard-1.31-v20260320": {"ami-0c4dea04571b1b508", "v1.31.14-eks-ecaa3a6"},
}

// seedBuilds fixes the kubelet build suffix of the seed patches everywhere.
var seedBuilds = map[string]string{"v1.30.14": "f69f56f", "v1.31.14": "ecaa3a6"}

type train struct{ version, date string }

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func alDate(v string) string {
	return v[1:5] + "-" + v[5:7] + "-" + v[7:9]
}

func minDate(a, b string) string {
	if a < b {
		return a
	}
	return b
}

func maxDate(a, b string) string {
	if a > b {
		return a
	}
	return b
}

// keepAllFrom is where the catalog stops thinning: every release from then on
// is kept, for every minor it was built for, as amazon-eks-ami and
// Bottlerocket publish each release for all supported minors. A pinned
// alias (al2023@v20260220) then resolves after a control-plane upgrade too.
const keepAllFrom = "2025-06-01"

// pick keeps every train from keepAllFrom on and, before it, the first,
// middle and last train of a window plus pinned examples.
func pick(ts []train) []train {
	if len(ts) == 0 {
		return nil
	}
	idx := map[int]bool{0: true, len(ts) / 2: true, len(ts) - 1: true}
	for i, t := range ts {
		if pinnedExamples[t.version] || t.date >= keepAllFrom {
			idx[i] = true
		}
	}
	var out []train
	for i, t := range ts {
		if idx[i] {
			out = append(out, t)
		}
	}
	return out
}

func window(ts []train, from, to string) []train {
	var out []train
	for _, t := range ts {
		if t.date >= from && t.date <= to {
			out = append(out, t)
		}
	}
	return out
}

// patch models the kubelet patch shipped on a date: upstream cuts roughly one
// patch a month and EKS ships it about a month later; capped at the final patch.
func patch(m minor, date string) int {
	u, d := day(m.upstream), day(date)
	months := (d.Year()-u.Year())*12 + int(d.Month()) - int(u.Month())
	if d.Day() < u.Day() {
		months--
	}
	p := months - 1
	if p < 0 {
		p = 0
	}
	if p > m.finalPatch {
		p = m.finalPatch
	}
	return p
}

func hexOf(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:n]
}

func kubelet(m minor, date string) string {
	v := fmt.Sprintf("v%s.%d", m.name, patch(m, date))
	build, ok := seedBuilds[v]
	if !ok {
		build = hexOf("ladder-catalog-kubelet:"+v, 7)
	}
	return v + "-eks-" + build
}

type row struct {
	id, name, family, arch, minor, release, date, kubelet, provenance string
}

func main() {
	var als []train
	for _, v := range alTrains {
		als = append(als, train{v, alDate(v)})
	}
	var brs []train
	for _, b := range bottlerocketTrains {
		brs = append(brs, train{b.version, b.date})
	}
	var rows []row
	add := func(m minor, family, arch string, t train, name string) {
		r := row{name: name, family: family, arch: arch, minor: m.name, release: t.version, date: t.date,
			kubelet: kubelet(m, t.date), provenance: "synthetic"}
		if s, ok := seeds[name]; ok {
			r.id, r.kubelet, r.provenance = s.id, s.kubelet, "seed"
		} else {
			r.id = "ami-" + hexOf("ladder-catalog-ami:"+name, 17)
		}
		rows = append(rows, r)
	}
	for _, m := range minors {
		end := minDate(m.endExtended, dataDate)
		for _, arch := range []string{"x86_64", "arm64"} {
			if m.al2 {
				for _, t := range pick(window(als, m.eksRelease, minDate(end, al2End))) {
					name := fmt.Sprintf("amazon-eks-node-%s-%s", m.name, t.version)
					if arch == "arm64" {
						name = fmt.Sprintf("amazon-eks-arm64-node-%s-%s", m.name, t.version)
					}
					add(m, "al2", arch, t, name)
				}
			}
			if m.al2023 {
				to := end
				if m.al2023CapAt != "" {
					to = minDate(to, m.al2023CapAt)
				}
				for _, t := range pick(window(als, maxDate(m.eksRelease, al2023GA), to)) {
					add(m, "al2023", arch, t, fmt.Sprintf("amazon-eks-node-al2023-%s-standard-%s-%s", arch, m.name, t.version))
				}
			}
			if m.bottlerocket {
				for _, t := range pick(window(brs, m.eksRelease, end)) {
					commit := hexOf("ladder-catalog-bottlerocket:"+t.version, 8)
					add(m, "bottlerocket", arch, t, fmt.Sprintf("bottlerocket-aws-k8s-%s-%s-%s-%s", m.name, arch, t.version, commit))
				}
			}
		}
	}
	for name := range seeds {
		found := false
		for _, r := range rows {
			found = found || r.name == name
		}
		if !found {
			panic("seed AMI not generated: " + name)
		}
	}
	familyOrder := map[string]int{"al2": 0, "al2023": 1, "bottlerocket": 2}
	minorNum := func(s string) int { n, _ := strconv.Atoi(strings.TrimPrefix(s, "1.")); return n }
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.family != b.family {
			return familyOrder[a.family] < familyOrder[b.family]
		}
		if a.minor != b.minor {
			return minorNum(a.minor) < minorNum(b.minor)
		}
		if a.arch != b.arch {
			return a.arch > b.arch // x86_64 before arm64
		}
		return a.date < b.date
	})

	f, err := os.Create("amis.csv")
	if err != nil {
		panic(err)
	}
	fmt.Fprintln(f, "# EKS-optimized AMI catalog for Ladder, data as of "+dataDate+". Generated by gen_amis.go; do not edit by hand.")
	fmt.Fprintln(f, "# Naming schemes follow awslabs/amazon-eks-ami and bottlerocket-os/bottlerocket; release trains, dates and kubelet patches are modelled.")
	fmt.Fprintln(f, "# provenance=seed rows are real (ami ids and kubelet versions seen in the Karpenter node-upgrade seed, us-west-2).")
	fmt.Fprintln(f, "# provenance=synthetic ids are stable placeholders (sha256 of the name); real ids come from the SSM public parameters at runtime.")
	w := csv.NewWriter(f)
	_ = w.Write([]string{"id", "name", "family", "arch", "kubernetes_minor", "release", "release_date", "kubelet_version", "provenance"})
	for _, r := range rows {
		_ = w.Write([]string{r.id, r.name, r.family, r.arch, r.minor, r.release, r.date, r.kubelet, r.provenance})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		panic(err)
	}
	if err := f.Close(); err != nil {
		panic(err)
	}
}
