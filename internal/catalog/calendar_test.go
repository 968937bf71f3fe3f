package catalog

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestEmbeddedCalendar(t *testing.T) {
	rels, err := parseCalendar(calendarCSV)
	if err != nil {
		t.Fatalf("eks-calendar.csv: %v", err)
	}
	var minors []string
	for i, r := range rels {
		minors = append(minors, r.Minor)
		if r.SourceNote == "" {
			t.Errorf("%s: empty source note", r.Minor)
		}
		// Standard support is 14 months and extended support 12 more, give or take the day-of-month.
		if std := r.EndOfStandardSupport.Sub(r.EKSRelease).Hours() / 24; std < 400 || std > 450 {
			t.Errorf("%s: standard support lasts %.0f days, want about 14 months", r.Minor, std)
		}
		if ext := r.EndOfExtendedSupport.Sub(r.EndOfStandardSupport).Hours() / 24; ext < 365 || ext > 366 {
			t.Errorf("%s: extended support lasts %.0f days, want 12 months", r.Minor, ext)
		}
		if i > 0 && !rels[i-1].EKSRelease.Before(r.EKSRelease) {
			t.Errorf("%s released on EKS no later than %s", r.Minor, rels[i-1].Minor)
		}
	}
	want := []string{"1.23", "1.24", "1.25", "1.26", "1.27", "1.28", "1.29", "1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36"}
	if !slices.Equal(minors, want) {
		t.Errorf("minors = %v, want %v", minors, want)
	}
	if got := Releases(); !slices.Equal(got, rels) {
		t.Errorf("Releases() differs from a fresh parse")
	}
}

func TestLookupRelease(t *testing.T) {
	tests := []struct {
		name, minor                           string
		upstream, eks, endStandard, endExtend string
	}{
		{"oldest", "1.23", "2021-12-07", "2022-08-11", "2023-10-11", "2024-10-11"},
		{"seed source", "1.30", "2024-04-17", "2024-05-23", "2025-07-23", "2026-07-23"},
		{"seed target", "1.31", "2024-08-13", "2024-09-26", "2025-11-26", "2026-11-26"},
		{"derived EKS release", "1.35", "2025-12-17", "2026-01-27", "2027-03-27", "2028-03-27"},
		{"newest", "1.36", "2026-04-22", "2026-06-02", "2027-08-02", "2028-08-02"},
		{"v prefix and patch accepted", "v1.31.14", "2024-08-13", "2024-09-26", "2025-11-26", "2026-11-26"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := LookupRelease(tt.minor)
			if !ok {
				t.Fatalf("LookupRelease(%q) not found", tt.minor)
			}
			got := []string{r.Upstream.Format(time.DateOnly), r.EKSRelease.Format(time.DateOnly),
				r.EndOfStandardSupport.Format(time.DateOnly), r.EndOfExtendedSupport.Format(time.DateOnly)}
			if want := []string{tt.upstream, tt.eks, tt.endStandard, tt.endExtend}; !slices.Equal(got, want) {
				t.Errorf("LookupRelease(%q) dates = %v, want %v", tt.minor, got, want)
			}
			if r.EKSRelease.Location() != time.UTC {
				t.Errorf("dates are not UTC")
			}
		})
	}
	for _, minor := range []string{"1.22", "1.37", "2.0", "", "latest"} {
		if _, ok := LookupRelease(minor); ok {
			t.Errorf("LookupRelease(%q) found a release", minor)
		}
	}
}

func TestSupportStatus(t *testing.T) {
	kst := time.FixedZone("KST", 9*60*60)
	tests := []struct {
		name, minor string
		at          time.Time
		want        string
	}{
		{"release day", "1.31", time.Date(2024, 9, 26, 0, 0, 0, 0, time.UTC), StatusStandardSupport},
		{"last second of standard support", "1.31", time.Date(2025, 11, 25, 23, 59, 59, 0, time.UTC), StatusStandardSupport},
		{"extended billing starts 00:00 UTC", "1.31", time.Date(2025, 11, 26, 0, 0, 0, 0, time.UTC), StatusExtendedSupport},
		{"08:59 KST is still the previous UTC day", "1.31", time.Date(2025, 11, 26, 8, 59, 0, 0, kst), StatusStandardSupport},
		{"09:00 KST is 00:00 UTC", "1.31", time.Date(2025, 11, 26, 9, 0, 0, 0, kst), StatusExtendedSupport},
		{"last second of extended support", "1.31", time.Date(2026, 11, 25, 23, 59, 59, 0, time.UTC), StatusExtendedSupport},
		{"unsupported", "1.31", time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC), StatusUnsupported},
		{"1.30 at the data date", "1.30", date(DataDate), StatusUnsupported},
		{"1.32 at the data date", "1.32", date(DataDate), StatusExtendedSupport},
		{"1.33 at the data date", "1.33", date(DataDate), StatusExtendedSupport},
		{"1.34 at the data date", "1.34", date(DataDate), StatusStandardSupport},
		{"1.23 long gone", "v1.23", date(DataDate), StatusUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SupportStatus(tt.minor, tt.at)
			if err != nil || got != tt.want {
				t.Errorf("SupportStatus(%q, %s) = %q, %v; want %q", tt.minor, tt.at, got, err, tt.want)
			}
		})
	}
}

func TestSupportStatusErrors(t *testing.T) {
	tests := []struct {
		name, minor string
		at          time.Time
		wantErr     string
	}{
		{"unknown minor", "1.40", date(DataDate), `kubernetes version "1.40" is not in the embedded EKS calendar (1.23 to 1.36, as of 2026-11-25)`},
		{"garbage", "one.thirty", date(DataDate), "not in the embedded EKS calendar"},
		{"before the EKS release", "1.36", date("2026-06-01"), "kubernetes 1.36 is not available on EKS at 2026-06-01T00:00:00Z; it was released on 2026-06-02"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SupportStatus(tt.minor, tt.at)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("SupportStatus(%q) = %q, %v; want error containing %q", tt.minor, got, err, tt.wantErr)
			}
		})
	}
}

func TestParseCalendarRejectsMalformedRows(t *testing.T) {
	const header = "kubernetes_version,upstream_release,eks_release,end_of_standard_support,end_of_extended_support,source_note\n"
	tests := []struct {
		name, data, wantErr string
	}{
		{"bad minor", header + "1.3x,2024-04-17,2024-05-23,2025-07-23,2026-07-23,x\n", "not like 1.30"},
		{"bad date", header + "1.30,2024-04-17,May 23 2024,2025-07-23,2026-07-23,x\n", "YYYY-MM-DD"},
		{"dates out of order", header + "1.30,2024-04-17,2024-05-23,2026-07-23,2025-07-23,x\n", "dates must increase"},
		{"duplicate", header + "1.30,2024-04-17,2024-05-23,2025-07-23,2026-07-23,x\n1.30,2024-04-17,2024-05-23,2025-07-23,2026-07-23,x\n", "duplicate"},
		{"unterminated quote", header + "1.30,2024-04-17,2024-05-23,2025-07-23,2026-07-23,\"x\n", "eks-calendar.csv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseCalendar([]byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseCalendar() error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}
