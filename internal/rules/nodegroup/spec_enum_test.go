package nodegroup

import "testing"

func TestUpperChoice(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{{"", CapacityOnDemand, true}, {"spot", CapacitySpot, true}, {"On_Demand", CapacityOnDemand, true}, {"reserved", "RESERVED", false}} {
		v := tc.in
		if ok := upperChoice(&v, CapacityOnDemand, CapacitySpot); v != tc.want || ok != tc.ok {
			t.Errorf("upperChoice(%q) = %q, %v; want %q, %v", tc.in, v, ok, tc.want, tc.ok)
		}
	}
}
