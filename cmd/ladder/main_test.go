package main

import "testing"

// TestMemoryLimit: Ladder sets its soft limit only when the user set none.
func TestMemoryLimit(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if limit, ok := memoryLimit(getenv); !ok || limit != 1750<<20 {
		t.Errorf("without GOMEMLIMIT: %d, %v; want 1750 MiB", limit, ok)
	}
	env["GOMEMLIMIT"] = "4GiB"
	if limit, ok := memoryLimit(getenv); ok {
		t.Errorf("with GOMEMLIMIT=4GiB Ladder set its own limit %d", limit)
	}
}
