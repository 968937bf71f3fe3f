package rehearse

import (
	"slices"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
)

const drainScenario = `apiVersion: ladder.dev/v1alpha1
kind: Scenario
metadata: {name: drain}
spec:
  start: "2026-03-30T10:00:00Z"
  timeLimit: 1h
  cluster: {name: c, version: "1.31", region: us-west-2, zones: [us-west-2a, us-west-2b]}
  nodeGroups:
    - name: old
      type: managed
      managed: {instanceTypes: [m5.large], desired: 1, zones: [us-west-2a]}
    - name: new
      type: managed
      managed: {instanceTypes: [m5.large], desired: 2}
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
              PIN
              containers: [{name: web, image: web, resources: {requests: {cpu: 100m}}}]
        ---
        apiVersion: policy/v1
        kind: PodDisruptionBudget
        metadata: {name: web, namespace: default}
        spec:
          minAvailable: 1
          selector: {matchLabels: {app: web}}
  actions:
    - name: move web to the new group
      patch: {kind: Deployment, namespace: default, name: web, patch: {spec: {replicas: REPLICAS}}}
    - drain: {selector: eks.amazonaws.com/nodegroup=old, ignoreDaemonSets: true, timeout: 2m}
`

func rehearseDrain(t *testing.T, replicas string, pinned bool) *report.Report {
	t.Helper()
	return rehearseSource(t, drainSource(replicas, pinned))
}

func drainSource(replicas string, pinned bool) string {
	src := strings.ReplaceAll(drainScenario, "REPLICAS", replicas)
	pin := ""
	if pinned {
		pin = "nodeSelector: {eks.amazonaws.com/nodegroup: old}"
	}
	return strings.ReplaceAll(src, "PIN", pin)
}

func rehearseSource(t *testing.T, src string) *report.Report {
	t.Helper()
	sc, err := scenario.Parse("drain.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestDrainActionHonoursPDBs: kubectl drain through the Eviction API. With
// minAvailable 1 of a single replica every eviction gets a 429, retried
// every 5 s, and the drain fails at its --timeout naming the pod and the PDB.
// With two replicas free to move, the drain finishes and web never drops
// below its PDB.
func TestDrainActionHonoursPDBs(t *testing.T) {
	rep := rehearseDrain(t, "1", true)
	if rep.Status != report.Failed || !strings.Contains(rep.Failure, "global timeout reached: 2m0s") {
		t.Fatalf("status %s, failure %q; want failed at the drain timeout", rep.Status, rep.Failure)
	}
	if len(rep.Blocked) != 1 || rep.Blocked[0].PDB != "default/web" || rep.Blocked[0].Seconds != 120 {
		t.Fatalf("blocked %+v, want web's pod blocked by default/web for 120s", rep.Blocked)
	}
	retries := 0
	for _, e := range rep.Events {
		if e.Code == "EvictionBlocked" {
			retries++
		}
	}
	if retries != 24 { // at 0s, 5s, …, 115s; the timeout comes first at 120s
		t.Errorf("evictions refused %d times in 2m, want 24 (every 5 s)", retries)
	}

	rep = rehearseDrain(t, "2", false)
	if rep.Status != report.Succeeded {
		t.Fatalf("status %s (%s %v), want succeeded", rep.Status, rep.Failure, rep.Stuck)
	}
	for _, w := range rep.Workloads {
		if w.Name == "web" && (w.Ready != 2 || w.MinReady < 1 || w.PDBViolations != 0) {
			t.Errorf("web %+v, want 2 ready, never below the PDB's 1", w)
		}
	}
	for _, n := range rep.Nodes {
		if n.Group == "old" && n.Schedulable {
			t.Errorf("drained node %s is still schedulable", n.Name)
		}
	}
}

// TestDrainActionStuckAtTheTimeLimit: without --timeout, a drain a PDB
// blocks waits until the rehearsal's time limit (3m) and leaves the run
// stuck there, saying so, rather than failed.
func TestDrainActionStuckAtTheTimeLimit(t *testing.T) {
	src := strings.ReplaceAll(strings.ReplaceAll(drainSource("1", true), "timeLimit: 1h", "timeLimit: 3m"), ", timeout: 2m", "")
	rep := rehearseSource(t, src)
	if rep.Status != report.Stuck {
		t.Fatalf("status %s (%s), want stuck at the time limit", rep.Status, rep.Failure)
	}
	for _, e := range rep.Events {
		if e.Code == "TimeLimit" {
			if !strings.Contains(e.Message, "the drain did not finish within the time limit") || e.T != 180 {
				t.Errorf("time-limit event at %gs: %q; want the drain's, at 180s", e.T, e.Message)
			}
			return
		}
	}
	t.Errorf("no TimeLimit event")
}

// TestPatchActionPDB: kubectl patch of the PDB through the Kubernetes port
// (by its resource, poddisruptionbudgets.policy): with minAvailable 0, the
// drain the PDB blocks at minAvailable 1 (TestDrainActionHonoursPDBs)
// evicts web's only pod at once and finishes; the pod, pinned to the
// drained group, then waits Pending until the time limit.
func TestPatchActionPDB(t *testing.T) {
	src := strings.Replace(drainSource("1", true), "    - drain:", `    - patch: {kind: PodDisruptionBudget, namespace: default, name: web, type: json, patch: [{op: replace, path: /spec/minAvailable, value: 0}]}
    - drain:`, 1)
	rep := rehearseSource(t, src)
	if rep.Status != report.Stuck || rep.Failure != "" || len(rep.Blocked) != 0 {
		t.Fatalf("status %s (%q), blocked %+v; want the drain to finish unblocked, then web's pod Pending", rep.Status, rep.Failure, rep.Blocked)
	}
	for _, n := range rep.Nodes {
		if n.Group == "old" && n.Schedulable {
			t.Errorf("drained node %s is still schedulable", n.Name)
		}
	}
}

// TestDrainActionNodes: the drain action finds its nodes through the
// Kubernetes port, as kubectl drain does — a named node that does not exist
// fails the action, a selector drains the nodes it matches in the list's
// order (by name), and a selector matching none fails.
func TestDrainActionNodes(t *testing.T) {
	for _, tc := range []struct {
		name, drain, failure string
		drained              int
	}{
		{name: "missing node", drain: "node: nowhere", failure: `spec.actions[1] (drain): node "nowhere" not found`},
		{name: "selector", drain: "selector: eks.amazonaws.com/nodegroup=new, ignoreDaemonSets: true", drained: 2},
		{name: "selector matching none", drain: "selector: eks.amazonaws.com/nodegroup=gone", failure: `spec.actions[1] (drain): no node matches "eks.amazonaws.com/nodegroup=gone"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(drainSource("2", false), "selector: eks.amazonaws.com/nodegroup=old, ignoreDaemonSets: true, timeout: 2m", tc.drain, 1)
			rep := rehearseSource(t, src)
			if rep.Failure != tc.failure {
				t.Fatalf("failure %q, want %q", rep.Failure, tc.failure)
			}
			if tc.drained == 0 {
				return
			}
			var want []string
			for _, n := range rep.Nodes {
				if n.Group == "new" {
					want = append(want, n.Name)
				}
			}
			slices.Sort(want)
			for _, e := range rep.Events {
				if e.Code == "Draining" {
					if !strings.HasSuffix(e.Message, "kubectl drain "+strings.Join(want, " ")) || len(want) != tc.drained {
						t.Errorf("drain event %q, want the %d nodes of new by name: %v", e.Message, tc.drained, want)
					}
					return
				}
			}
			t.Errorf("no Draining event")
		})
	}
}
