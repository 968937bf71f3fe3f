package nodegroup

import (
	"testing"
)

// The update's arithmetic as tables (semantics.md §B, §F.9).

func TestSurge(t *testing.T) {
	for _, c := range []struct {
		name                  string
		zones, maxUnavailable int
		want                  int
	}{
		{"3 AZs, maxUnavailable 1: twice the zones", 3, 1, 6},
		{"3 AZs, maxUnavailable 20: maxUnavailable", 3, 20, 20},
		{"user guide: 5 AZs, maxUnavailable 1", 5, 1, 10},
		{"user guide: 5 AZs, maxUnavailable 20", 5, 20, 20},
		{"user guide: 5 AZs, maxUnavailable 10 ties", 5, 10, 10},
		{"1 AZ", 1, 1, 2},
		{"3 AZs, maxUnavailable 7", 3, 7, 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Surge(c.zones, c.maxUnavailable); got != c.want {
				t.Fatalf("Surge(%d AZs, maxUnavailable %d) = %d, want %d", c.zones, c.maxUnavailable, got, c.want)
			}
		})
	}
}

func TestMaxUnavailable(t *testing.T) {
	n := func(v int) *int { return &v }
	for _, c := range []struct {
		name string
		cfg  UpdateConfig
		size int
		want int
	}{
		{"default is one node", UpdateConfig{}, 10, 1},
		{"maxUnavailable as given", UpdateConfig{MaxUnavailable: n(3)}, 10, 3},
		{"maxUnavailable above the group's size is kept", UpdateConfig{MaxUnavailable: n(20)}, 3, 20},
		{"quota of 100", UpdateConfig{MaxUnavailable: n(150)}, 500, 100},
		{"20% of 10", UpdateConfig{MaxUnavailablePercentage: n(20)}, 10, 2},
		{"33% of 10 rounds up to 4", UpdateConfig{MaxUnavailablePercentage: n(33)}, 10, 4},
		{"50% of 3 rounds up to 2", UpdateConfig{MaxUnavailablePercentage: n(50)}, 3, 2},
		{"1% of 3 rounds up to 1", UpdateConfig{MaxUnavailablePercentage: n(1)}, 3, 1},
		{"34% of 6 rounds up to 3", UpdateConfig{MaxUnavailablePercentage: n(34)}, 6, 3},
		{"100% of 250 is capped at 100", UpdateConfig{MaxUnavailablePercentage: n(100)}, 250, 100},
		{"any percentage of an empty group is 1", UpdateConfig{MaxUnavailablePercentage: n(10)}, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := MaxUnavailable(c.cfg, c.size); got != c.want {
				t.Fatalf("MaxUnavailable(%s, size %d) = %d, want %d", c.name, c.size, got, c.want)
			}
		})
	}
}
