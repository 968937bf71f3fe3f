package rehearse

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/executor"
	"github.com/ladder-eks/ladder/internal/report"
)

// ownDrainScenario is a node group of one node, old, that Ladder drains
// itself (GROUP: a managed group moved blue/green, a self-managed one by
// --strategy ladder); web's REPLICAS pods run on it under a PDB of
// minAvailable MIN.
const ownDrainScenario = `apiVersion: ladder.dev/v1alpha1
kind: Scenario
metadata: {name: bluegreen-blocked}
spec:
  start: "2026-03-30T10:00:00Z"
  timeLimit: 1h
  cluster: {name: c, version: "1.30", region: us-west-2, zones: [us-west-2a, us-west-2b]}
  nodeGroups:
GROUP
  manifests:
    - inline: |
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web, namespace: default}
        spec:
          replicas: REPLICAS
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec:
              containers: [{name: web, image: web, resources: {requests: {cpu: 100m}}}]
        ---
        apiVersion: policy/v1
        kind: PodDisruptionBudget
        metadata: {name: web, namespace: default}
        spec:
          minAvailable: MIN
          selector: {matchLabels: {app: web}}
  upgrade: {to: "1.31"}
`

// ownDrainGroups are old as each strategy of Ladder's own drains has it.
var ownDrainGroups = []struct{ strategy, group string }{
	{"blue-green", `    - name: old
      type: managed
      managed: {instanceTypes: [m5.large], desired: 1, min: 1, max: 2, version: "1.30"}
      upgrade: {strategy: blue-green, green: {name: new}}`},
	{"ladder", `    - name: old
      type: self-managed
      selfManaged:
        instanceType: m5.large
        desired: 1
        min: 1
        max: 2
        launchTemplate: {name: old, version: "1", imageId: ami-0f676a166352f02ab}
      upgrade: {strategy: ladder}`},
}

func rehearseOwnDrain(t *testing.T, group, replicas, minAvailable string) *report.Report {
	t.Helper()
	return rehearseSource(t, strings.NewReplacer("GROUP", group, "REPLICAS", replicas, "MIN", minAvailable).Replace(ownDrainScenario))
}

// drainWaveAt is when the report's first DrainWave event came.
func drainWaveAt(t *testing.T, rep *report.Report) float64 {
	t.Helper()
	for _, e := range rep.Events {
		if e.Code == "DrainWave" {
			return e.T
		}
	}
	t.Fatal("no DrainWave event")
	return 0
}

// TestOwnDrainBlockedIsReported: Ladder drains old's node itself (a
// blue/green group's blue node, a self-managed group's under --strategy
// ladder); web's only pod, under a PDB of minAvailable 1, is refused every
// eviction. The run is stuck at its time limit; blocked[] lists the pod
// with its node and PDB, blocked from its drain's first wave to the end;
// and stuck names the node, the pod and the PDB — not only the phase's
// message does.
func TestOwnDrainBlockedIsReported(t *testing.T) {
	for _, g := range ownDrainGroups {
		t.Run(g.strategy, func(t *testing.T) {
			rep := rehearseOwnDrain(t, g.group, "1", "1")
			if rep.Status != report.Stuck {
				t.Fatalf("status %s (%s), want stuck", rep.Status, rep.Failure)
			}
			if len(rep.Blocked) != 1 {
				t.Fatalf("blocked %+v, want web's pod", rep.Blocked)
			}
			b := rep.Blocked[0]
			var old string
			for _, n := range rep.Nodes {
				if n.Group == "old" && strings.HasPrefix(n.Version, "v1.30.") {
					old = n.Name
				}
			}
			if !strings.HasPrefix(b.Pod, "default/web-") || b.PDB != "default/web" || b.Outcome != "blocked" || b.Node != old || old == "" ||
				b.Message != "Cannot evict pod as it would violate the pod's disruption budget. (The disruption budget web needs 1 healthy pods and has 1 currently)" {
				t.Errorf("blocked %+v, want web's pod on old's node %s blocked by default/web", b, old)
			}
			if want := rep.MakespanSeconds - drainWaveAt(t, rep); b.Seconds != want {
				t.Errorf("blocked for %gs, want %gs: from the drain's wave to the end", b.Seconds, want)
			}
			stuck := strings.Join(rep.Stuck, "\n")
			if want := "node " + old + ": eviction of pod " + b.Pod + " blocked by PodDisruptionBudget default/web for "; !strings.Contains(stuck, want) {
				t.Errorf("stuck %q lacks %q", rep.Stuck, want)
			}
		})
	}
}

// TestOwnDrainWaitIsReported: web's two pods share old's node under a
// PDB of minAvailable 1, so no wave evicts both within the budget: Ladder
// drains the node as kubectl drain does, and the second eviction is
// refused until the first pod runs Ready on the new node. blocked[] lists
// it, evicted, with the seconds it waited; the run succeeds.
func TestOwnDrainWaitIsReported(t *testing.T) {
	for _, g := range ownDrainGroups {
		t.Run(g.strategy, func(t *testing.T) {
			rep := rehearseOwnDrain(t, g.group, "2", "1")
			if rep.Status != report.Succeeded {
				t.Fatalf("status %s (%s %q), want succeeded", rep.Status, rep.Failure, rep.Stuck)
			}
			if len(rep.Blocked) != 1 {
				t.Fatalf("blocked %+v, want one of web's pods", rep.Blocked)
			}
			b := rep.Blocked[0]
			if !strings.HasPrefix(b.Pod, "default/web-") || b.PDB != "default/web" || b.Outcome != "evicted" || b.Seconds <= 0 || b.Seconds > 30 {
				t.Errorf("blocked %+v, want a web pod evicted after waiting on default/web for a few seconds", b)
			}
			if w := rep.Workloads[0]; w.Name != "web" || w.MinReady < 1 || w.PDBViolations != 0 {
				t.Errorf("web %+v, want never below its PDB's 1", w)
			}
		})
	}
}

// TestOwnDrainStuckWithoutEviction: a drain of Ladder's own that ran out
// of time waiting to evict a pod — no eviction made, since its PDB's pods
// were not all healthy — has no span, and stuck still names the node, the
// pod and the PDB; a pod with an open span is named once, by its span.
func TestOwnDrainStuckWithoutEviction(t *testing.T) {
	now := time.Date(2026, 3, 30, 11, 0, 0, 0, time.UTC)
	msg := "Cannot evict pod as it would violate the pod's disruption budget. (The disruption budget web needs 2 healthy pods and has 1 currently)"
	r := &run{ownDrainStuck: &executor.DrainBlocked{Node: "n1", Pod: "default/web-1", PDBs: []string{"default/web"}, Message: msg, Planned: true}}
	want := []string{"node n1: the drain waits to evict pod default/web-1, which PodDisruptionBudget default/web does not allow yet: " + msg}
	if got := r.ownDrainsStuck(now); !slices.Equal(got, want) {
		t.Errorf("stuck %q, want %q", got, want)
	}
	r.ownDrainStuck.Planned = false
	r.ownBlocked = []blockedSpan{{node: "n1", pod: "default/web-1", pdb: "default/web", since: now.Add(-time.Minute), outcome: "blocked", message: msg}}
	want = []string{"node n1: eviction of pod default/web-1 blocked by PodDisruptionBudget default/web for 1m0s: " + msg}
	if got := r.ownDrainsStuck(now); !slices.Equal(got, want) {
		t.Errorf("stuck %q, want %q", got, want)
	}
}
