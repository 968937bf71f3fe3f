package rehearse

import (
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/scenario"
)

// A scenario's own PriorityClass is applied, and a DaemonSet of that
// class rolled out onto a node full of app pods preempts one of them:
// the timeline names each victim and the daemon runs on every node.
const preemptionScenario = `apiVersion: ladder.dev/v1alpha1
kind: Scenario
metadata: {name: preempt}
spec:
  start: "2026-03-30T10:00:00Z"
  timeLimit: 1h
  cluster: {name: c, version: "1.31", region: us-west-2, zones: [us-west-2a, us-west-2b]}
  nodeGroups:
    - name: workers
      type: managed
      managed: {instanceTypes: [m5.large], desired: 2}
  manifests:
    - inline: |
        apiVersion: scheduling.k8s.io/v1
        kind: PriorityClass
        metadata: {name: node-agent}
        value: 1000000
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web, namespace: default}
        spec:
          replicas: 2
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec:
              containers: [{name: web, image: web, resources: {requests: {cpu: 1500m}}}]
  actions:
    - apply:
        inline: |
          apiVersion: apps/v1
          kind: DaemonSet
          metadata: {name: agent, namespace: default}
          spec:
            selector: {matchLabels: {app: agent}}
            template:
              metadata: {labels: {app: agent}}
              spec:
                priorityClassName: node-agent
                containers: [{name: agent, image: agent, resources: {requests: {cpu: 600m}}}]
    - wait: {settled: true}
`

func TestDaemonSetPreemptsInARehearsal(t *testing.T) {
	sc, err := scenario.Parse("preempt.yaml", []byte(preemptionScenario), nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	preempted := 0
	for _, e := range rep.Events {
		if e.Code == "Preempted" {
			if !strings.Contains(e.Message, "preempted by pod default/agent-") {
				t.Errorf("event %q", e.Message)
			}
			preempted++
		}
	}
	// Each of the two nodes runs one web pod that leaves no room for the
	// agent: both are preempted, and their replacements find no room.
	if preempted != 2 {
		t.Fatalf("%d pods preempted, want 2; events: %+v", preempted, rep.Events)
	}
	ready := map[string]int{}
	for _, w := range rep.Workloads {
		ready[w.Name] = w.Ready
	}
	if ready["agent"] != 2 || ready["web"] != 0 {
		t.Fatalf("ready agent %d web %d, want 2 and 0", ready["agent"], ready["web"])
	}
}
