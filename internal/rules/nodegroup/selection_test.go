package nodegroup

import (
	"slices"
	"testing"
)

// first is an intn that always takes the first candidate, last the last:
// the tests see the candidate list through them.
func first(int) int  { return 0 }
func last(n int) int { return n - 1 }

// NextToUpgrade: old instances (earlier launch template version), not
// leaving, not selected, while fewer than maxUnavailable are in flight (§B
// upgrade phase step 2).
func TestNextToUpgrade(t *testing.T) {
	group := []Instance{
		{Name: "a", LaunchTemplateVersion: 1, Selected: true},
		{Name: "b", LaunchTemplateVersion: 1, Leaving: true},
		{Name: "c", LaunchTemplateVersion: 2},
		{Name: "d", LaunchTemplateVersion: 1},
		{Name: "e", LaunchTemplateVersion: 1},
	}
	cases := []struct {
		name                     string
		instances                []Instance
		inFlight, maxUnavailable int
		intn                     func(int) int
		want                     string // "" = none
	}{
		{name: "first candidate", instances: group, inFlight: 1, maxUnavailable: 2, intn: first, want: "d"},
		{name: "last candidate", instances: group, inFlight: 1, maxUnavailable: 2, intn: last, want: "e"},
		{name: "maxUnavailable reached", instances: group, inFlight: 2, maxUnavailable: 2, intn: first},
		{name: "only new, leaving or selected instances left", instances: group[:3], inFlight: 1, maxUnavailable: 5, intn: first},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			i, ok := NextToUpgrade(tc.instances, 2, tc.inFlight, tc.maxUnavailable, tc.intn)
			got := ""
			if ok {
				got = tc.instances[i].Name
			}
			if got != tc.want {
				t.Fatalf("NextToUpgrade = %q, want %q", got, tc.want)
			}
		})
	}
}

// The surge launches round-robin in the zones of the old instances, in the
// group's zone order (§B scale-up phase step 1).
func TestSurgeZones(t *testing.T) {
	zones := []string{"us-west-2a", "us-west-2b", "us-west-2c"}
	cases := []struct {
		name      string
		instances []Instance
		surge     int
		want      []string
	}{
		{name: "three zones, surge 6: two per zone",
			instances: []Instance{{Zone: "us-west-2c", LaunchTemplateVersion: 1}, {Zone: "us-west-2a", LaunchTemplateVersion: 1}, {Zone: "us-west-2b", LaunchTemplateVersion: 1}},
			surge:     6, want: []string{"us-west-2a", "us-west-2b", "us-west-2c", "us-west-2a", "us-west-2b", "us-west-2c"}},
		{name: "old instances in two zones only",
			instances: []Instance{{Zone: "us-west-2c", LaunchTemplateVersion: 1}, {Zone: "us-west-2a", LaunchTemplateVersion: 1}, {Zone: "us-west-2b", LaunchTemplateVersion: 2}},
			surge:     3, want: []string{"us-west-2a", "us-west-2c", "us-west-2a"}},
		{name: "no old instance: every zone of the group",
			instances: []Instance{{Zone: "us-west-2b", LaunchTemplateVersion: 2}},
			surge:     4, want: []string{"us-west-2a", "us-west-2b", "us-west-2c", "us-west-2a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := SurgeZones(tc.instances, 2, zones, tc.surge); !slices.Equal(got, tc.want) {
				t.Fatalf("SurgeZones = %v, want %v", got, tc.want)
			}
		})
	}
}

// The default termination policy: the zone with the most instances (ties:
// zone order), then the oldest launch template version (§B scale-down
// phase).
func TestScaleInVictim(t *testing.T) {
	zones := []string{"us-west-2a", "us-west-2b"}
	cases := []struct {
		name      string
		instances []Instance
		intn      func(int) int
		want      string // "" = none
	}{
		{name: "the fuller zone",
			instances: []Instance{{Name: "a1", Zone: "us-west-2a", LaunchTemplateVersion: 1}, {Name: "b1", Zone: "us-west-2b", LaunchTemplateVersion: 2}, {Name: "b2", Zone: "us-west-2b", LaunchTemplateVersion: 2}},
			intn:      first, want: "b1"},
		{name: "a tie goes to the first zone; its oldest version",
			instances: []Instance{{Name: "a1", Zone: "us-west-2a", LaunchTemplateVersion: 2}, {Name: "a2", Zone: "us-west-2a", LaunchTemplateVersion: 1}, {Name: "b1", Zone: "us-west-2b", LaunchTemplateVersion: 1}, {Name: "b2", Zone: "us-west-2b", LaunchTemplateVersion: 1}},
			intn:      last, want: "a2"},
		{name: "leaving instances do not count",
			instances: []Instance{{Name: "a1", Zone: "us-west-2a", Leaving: true}, {Name: "a2", Zone: "us-west-2a", Leaving: true}, {Name: "b1", Zone: "us-west-2b"}},
			intn:      first, want: "b1"},
		{name: "random among the oldest",
			instances: []Instance{{Name: "a1", Zone: "us-west-2a", LaunchTemplateVersion: 3}, {Name: "a2", Zone: "us-west-2a", LaunchTemplateVersion: 3}, {Name: "a3", Zone: "us-west-2a", LaunchTemplateVersion: 4}},
			intn:      last, want: "a2"},
		{name: "all leaving", instances: []Instance{{Name: "a1", Zone: "us-west-2a", Leaving: true}}, intn: first},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			i, ok := ScaleInVictim(tc.instances, zones, tc.intn)
			got := ""
			if ok {
				got = tc.instances[i].Name
			}
			if got != tc.want {
				t.Fatalf("ScaleInVictim = %q, want %q", got, tc.want)
			}
		})
	}
}
