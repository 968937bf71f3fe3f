package catalog

import (
	"testing"
	"time"
)

func TestDescribe(t *testing.T) {
	want := "embedded data as of 2026-11-25: 54 instance types, 598 AMIs, EKS calendar 1.23-1.36, add-on versions for 4 add-ons"
	if got := Describe(); got != want {
		t.Errorf("Describe() =\n%q\nwant\n%q", got, want)
	}
}

// DataDate is the date of the newest facts: nothing embedded is newer, and the
// newest AMI release is close to it.
func TestDataDate(t *testing.T) {
	d, err := time.Parse(time.DateOnly, DataDate)
	if err != nil {
		t.Fatalf("DataDate %q: %v", DataDate, err)
	}
	var newest time.Time
	for _, a := range AMIs() {
		if a.ReleaseDate.After(newest) {
			newest = a.ReleaseDate
		}
	}
	if newest.After(d) || d.Sub(newest) > 30*24*time.Hour {
		t.Errorf("newest AMI released %s; DataDate %s should be on or shortly after it", newest.Format(time.DateOnly), DataDate)
	}
}

func TestNormalizeMinor(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"1.30", "1.30", true},
		{"v1.30", "1.30", true},
		{"1.30.14", "1.30", true},
		{"v1.30.14-eks-f69f56f", "1.30", true},
		{" 1.9 ", "1.9", true},
		{"1", "", false},
		{"2.0", "", false},
		{"1.030", "", false},
		{"1.30.x", "", false},
		{"1.30.1.2", "", false},
		{"latest", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := NormalizeMinor(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("NormalizeMinor(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}
