package rehearse

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// benchScenario generates a synthetic cluster whose every node drifts under
// a 10% budget (ladder scenario generate --nodes N --pods-per-node K).
func benchScenario(b testing.TB, o scenario.GenerateOptions) *scenario.Scenario {
	b.Helper()
	data, err := scenario.Generate(o)
	if err != nil {
		b.Fatal(err)
	}
	sc, err := scenario.Parse(fmt.Sprintf("synthetic-%d-mix-%v.yaml", o.Nodes, o.Mix), data, nil)
	if err != nil {
		b.Fatal(err)
	}
	return sc
}

// benchmarkRun rehearses a generated scenario b.N times; check fails the
// benchmark when a run did not do its job.
func benchmarkRun(b *testing.B, o scenario.GenerateOptions, check func(*report.Report) string) {
	sc := benchScenario(b, o)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := Run(sc, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if msg := check(rep); msg != "" {
			b.Fatal(msg)
		}
		b.ReportMetric(rep.MakespanSeconds, "virtual-s")
	}
}

func benchmarkDrift(b *testing.B, nodes, podsPerNode int) {
	benchmarkRun(b, scenario.GenerateOptions{Nodes: nodes, PodsPerNode: podsPerNode, Seed: 1}, func(rep *report.Report) string {
		if rep.Status != report.Succeeded || rep.Groups[0].Replaced < nodes {
			return fmt.Sprintf("status %s, %d of %d nodes replaced", rep.Status, rep.Groups[0].Replaced, nodes)
		}
		return ""
	})
}

// BenchmarkRehearseDrift200Nodes is a quick check of the same path.
func BenchmarkRehearseDrift200Nodes(b *testing.B) { benchmarkDrift(b, 200, 20) }

// BenchmarkRehearseDrift2000Nodes rehearses 2,000 Karpenter nodes and
// 40,000 pods all drifting under a 10% budget (issue goal: < 10 s, < 1 GiB).
func BenchmarkRehearseDrift2000Nodes(b *testing.B) { benchmarkDrift(b, 2000, 20) }

// benchmarkMix rehearses a generated cluster of every node type (ladder
// scenario generate --mix) one hop, 1.30 → 1.31, with the whole playbook.
func benchmarkMix(b *testing.B, nodes, podsPerNode int) {
	benchmarkRun(b, scenario.GenerateOptions{Nodes: nodes, PodsPerNode: podsPerNode, Seed: 1, Mix: true}, func(rep *report.Report) string {
		if rep.Status != report.Succeeded || rep.ControlPlane.Version != "1.31" {
			return fmt.Sprintf("status %s, control plane %s: %s %v", rep.Status, rep.ControlPlane.Version, rep.Failure, rep.Stuck)
		}
		for _, n := range rep.Nodes {
			if !strings.HasPrefix(n.Version, "v1.31.") {
				return fmt.Sprintf("node %s (%s) at %s after the hop", n.Name, n.Group, n.Version)
			}
		}
		return ""
	})
}

// BenchmarkRehearseMix200Nodes is a quick check of the whole playbook.
func BenchmarkRehearseMix200Nodes(b *testing.B) { benchmarkMix(b, 200, 20) }

// BenchmarkRehearseMix5000Nodes is the scale goal: 5,000 nodes of
// every type and 100,000 pods, one hop (goal ≤ 20 s, ≤ 2 GiB; not met, see
// the README's performance section).
func BenchmarkRehearseMix5000Nodes(b *testing.B) { benchmarkMix(b, 5000, 20) }

// pendingScenario is the built-in karpenter-drift scenario with checkout
// scaled to replicas instead of 10: thousands of pods pending at once, most
// of which the NodePool's limits (cpu: 100) leave pending for the rest of
// the rehearsal, so every provisioning batch and every drift pass packs them
// again.
func pendingScenario(b testing.TB, replicas int32) *scenario.Scenario {
	b.Helper()
	sc, err := scenario.LoadBuiltin("karpenter-drift")
	if err != nil {
		b.Fatal(err)
	}
	scaled := false
	for i := range sc.Spec.Actions {
		if s := sc.Spec.Actions[i].Scale; s != nil && s.Name == "checkout" {
			s.Replicas, scaled = replicas, true
		}
	}
	if !scaled {
		b.Fatal("karpenter-drift has no scale action for checkout")
	}
	return sc
}

// BenchmarkRehearsePending3000 rehearses karpenter-drift with checkout
// scaled to 3,000 replicas (issue 15: thousands of pending pods rehearse in
// seconds).
func BenchmarkRehearsePending3000(b *testing.B) {
	sc := pendingScenario(b, 3000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := Run(sc, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Groups[0].Launched == 0 {
			b.Fatalf("status %s: no NodeClaim launched", rep.Status)
		}
		b.ReportMetric(rep.MakespanSeconds, "virtual-s")
	}
}
