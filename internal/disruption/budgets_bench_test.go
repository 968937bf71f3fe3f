package disruption

import (
	"testing"
	"time"
)

// BenchmarkAllowedByReason10000Nodes evaluates a 10,000-node NodePool with
// three budgets, one of them scheduled, for all three reasons.
func BenchmarkAllowedByReason10000Nodes(b *testing.B) {
	np := pool(
		nodes("10%"),
		nodes("25", drifted),
		scheduled("0", "0 9 * * mon-fri", 8*time.Hour),
	)
	now := at(b, monday+"T18:30:00Z")
	b.ReportAllocs()
	for b.Loop() {
		got, err := AllowedByReason(np, now, 10_000)
		if err != nil || got[drifted] != 25 || got[empty] != 1000 {
			b.Fatalf("AllowedByReason = %v, %v", got, err)
		}
	}
}

// BenchmarkChangesWeek10000Nodes lists a week of changes of the same NodePool.
func BenchmarkChangesWeek10000Nodes(b *testing.B) {
	np := pool(
		nodes("10%"),
		nodes("25", drifted),
		scheduled("0", "0 9 * * mon-fri", 8*time.Hour),
	)
	from := at(b, monday+"T00:00:00Z")
	b.ReportAllocs()
	for b.Loop() {
		got, err := Changes(np, from, 7*24*time.Hour, 10_000, 0)
		if err != nil || len(got) != 10 {
			b.Fatalf("Changes = %d changes, %v", len(got), err)
		}
	}
}
