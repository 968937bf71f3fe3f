package catalog

import (
	_ "embed"
	"fmt"
	"slices"
	"sync"
	"time"
)

// eks-calendar.csv is a copy of the project's reference calendar (see its
// source_note column): AWS "Amazon EKS Kubernetes release calendar" plus
// endoflife.date for the newest minors.
//
//go:embed eks-calendar.csv
var calendarCSV []byte

// Support statuses, as EKS DescribeClusterVersions names them (versionStatus).
const (
	StatusStandardSupport = "STANDARD_SUPPORT"
	StatusExtendedSupport = "EXTENDED_SUPPORT"
	StatusUnsupported     = "UNSUPPORTED"
)

// Release is one Kubernetes minor in the EKS release calendar. All dates are
// at 00:00 UTC.
type Release struct {
	// Minor is the Kubernetes minor, e.g. "1.30".
	Minor string
	// Upstream is the upstream Kubernetes release date.
	Upstream time.Time
	// EKSRelease is the date the minor became available on EKS.
	EKSRelease time.Time
	// EndOfStandardSupport is the first day of extended support (and of its billing).
	EndOfStandardSupport time.Time
	// EndOfExtendedSupport is the first day the minor is unsupported.
	EndOfExtendedSupport time.Time
	// SourceNote says where the dates come from.
	SourceNote string
}

var (
	calendarOnce sync.Once
	releaseList  []Release
)

func loadCalendar() {
	calendarOnce.Do(func() {
		rels, err := parseCalendar(calendarCSV)
		if err != nil {
			panic("catalog: embedded " + err.Error())
		}
		releaseList = rels
	})
}

// Releases returns the EKS release calendar, oldest minor first. The slice is
// a fresh copy.
func Releases() []Release {
	loadCalendar()
	return slices.Clone(releaseList)
}

// LookupRelease returns the calendar entry of a minor ("1.30"; "v1.30" and
// "1.30.14" are accepted too).
func LookupRelease(minor string) (Release, bool) {
	m, ok := NormalizeMinor(minor)
	if !ok {
		return Release{}, false
	}
	loadCalendar()
	for _, r := range releaseList {
		if r.Minor == m {
			return r, true
		}
	}
	return Release{}, false
}

// SupportStatus returns the EKS support status of a minor at an instant:
// StatusStandardSupport before the end-of-standard-support date,
// StatusExtendedSupport from 00:00 UTC on that date (when extended billing
// starts) and StatusUnsupported from 00:00 UTC on the end-of-extended-support
// date. It fails for a minor not in the calendar or for an instant before the
// minor's EKS release.
func SupportStatus(minor string, at time.Time) (string, error) {
	r, ok := LookupRelease(minor)
	if !ok {
		first, last := "", ""
		if rels := Releases(); len(rels) > 0 {
			first, last = rels[0].Minor, rels[len(rels)-1].Minor
		}
		return "", fmt.Errorf("kubernetes version %q is not in the embedded EKS calendar (%s to %s, as of %s)", minor, first, last, DataDate)
	}
	switch {
	case at.Before(r.EKSRelease):
		return "", fmt.Errorf("kubernetes %s is not available on EKS at %s; it was released on %s",
			r.Minor, at.UTC().Format(time.RFC3339), r.EKSRelease.Format(time.DateOnly))
	case at.Before(r.EndOfStandardSupport):
		return StatusStandardSupport, nil
	case at.Before(r.EndOfExtendedSupport):
		return StatusExtendedSupport, nil
	default:
		return StatusUnsupported, nil
	}
}

var calendarHeader = []string{"kubernetes_version", "upstream_release", "eks_release", "end_of_standard_support", "end_of_extended_support", "source_note"}

// parseCalendar parses eks-calendar.csv and checks that each row's dates are
// in order and the minors are unique.
func parseCalendar(data []byte) ([]Release, error) {
	recs, err := readCSV("eks-calendar.csv", data, calendarHeader)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []Release
	for _, r := range recs {
		var rel Release
		if rel.Minor, err = r.str("kubernetes_version"); err != nil {
			return nil, err
		}
		if !isMinor(rel.Minor) {
			return nil, r.errorf("kubernetes_version %q is not like 1.30", rel.Minor)
		}
		if seen[rel.Minor] {
			return nil, r.errorf("duplicate kubernetes_version %s", rel.Minor)
		}
		for _, f := range []struct {
			dst  *time.Time
			name string
		}{
			{&rel.Upstream, "upstream_release"}, {&rel.EKSRelease, "eks_release"},
			{&rel.EndOfStandardSupport, "end_of_standard_support"}, {&rel.EndOfExtendedSupport, "end_of_extended_support"},
		} {
			if *f.dst, err = r.date(f.name); err != nil {
				return nil, err
			}
		}
		if !(rel.Upstream.Before(rel.EKSRelease) && rel.EKSRelease.Before(rel.EndOfStandardSupport) && rel.EndOfStandardSupport.Before(rel.EndOfExtendedSupport)) {
			return nil, r.errorf("%s: dates must increase: upstream < eks_release < end_of_standard_support < end_of_extended_support", rel.Minor)
		}
		rel.SourceNote = r.fields["source_note"]
		seen[rel.Minor] = true
		out = append(out, rel)
	}
	slices.SortFunc(out, func(a, b Release) int { return compareMinors(a.Minor, b.Minor) })
	return out, nil
}
