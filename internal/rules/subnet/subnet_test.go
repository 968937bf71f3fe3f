package subnet

import "testing"

// A zone's /20 holds 16 third octets of .4 to .254: 4,016 addresses, the
// count a scenario's validation quotes.
func TestAddressesPerZone(t *testing.T) {
	if AddressesPerZone != 4016 {
		t.Errorf("AddressesPerZone = %d, want 4016", AddressesPerZone)
	}
}
