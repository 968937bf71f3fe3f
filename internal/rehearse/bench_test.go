package rehearse

import (
	"fmt"
	"testing"

	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// benchScenario generates a synthetic cluster whose every node drifts under
// a 10% budget (ladder scenario generate --nodes N --pods-per-node K).
func benchScenario(b testing.TB, nodes, podsPerNode int) *scenario.Scenario {
	b.Helper()
	data, err := scenario.Generate(scenario.GenerateOptions{Nodes: nodes, PodsPerNode: podsPerNode, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	sc, err := scenario.Parse(fmt.Sprintf("synthetic-%d.yaml", nodes), data, nil)
	if err != nil {
		b.Fatal(err)
	}
	return sc
}

func benchmarkDrift(b *testing.B, nodes, podsPerNode int) {
	sc := benchScenario(b, nodes, podsPerNode)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := Run(sc, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Status != report.Succeeded || rep.Groups[0].Replaced < nodes {
			b.Fatalf("status %s, %d of %d nodes replaced", rep.Status, rep.Groups[0].Replaced, nodes)
		}
		b.ReportMetric(rep.MakespanSeconds, "virtual-s")
	}
}

// BenchmarkRehearseDrift200Nodes is a quick check of the same path.
func BenchmarkRehearseDrift200Nodes(b *testing.B) { benchmarkDrift(b, 200, 20) }

// BenchmarkRehearseDrift2000Nodes rehearses 2,000 Karpenter nodes and
// 40,000 pods all drifting under a 10% budget (issue goal: < 10 s, < 1 GiB).
func BenchmarkRehearseDrift2000Nodes(b *testing.B) { benchmarkDrift(b, 2000, 20) }
