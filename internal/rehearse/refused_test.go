package rehearse

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// TestRefusedPodsAreNotASuccess: a Deployment whose pods the API server's
// admission refuses (its PriorityClass is applied only by a later action,
// so the Priority admission plugin answers "no PriorityClass with name …
// was found") has no pod until the class exists. A wait for the cluster to
// settle before then does not end at once, as if nothing were left to do:
// the run is stuck, its reasons naming the workload and admission's answer.
// Once the class is applied the pods come, and the run succeeds with every
// pod Ready — not "succeeded" with 0 of 3.
func TestRefusedPodsAreNotASuccess(t *testing.T) {
	const sc = `apiVersion: ladder.dev/v1alpha1
kind: Scenario
metadata: {name: refused}
spec:
  start: "2026-03-30T10:00:00Z"
  timeLimit: 1h
  cluster: {name: test, version: "1.30", region: us-west-2, zones: [us-west-2a]}
  nodeGroups:
    - name: default
      type: karpenter
      karpenter:
        nodePool: default
        nodes:
          - {instanceType: m5.large, zone: us-west-2a, capacityType: on-demand}
  manifests:
    - file: cluster.yaml
  actions:
%s`
	const manifests = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: []
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: r
  amiSelectorTerms: [{alias: al2023@latest}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      priorityClassName: %s
      containers: [{name: web, image: nginx, resources: {requests: {cpu: 100m}}}]
`
	const apply = "    - apply: {inline: \"apiVersion: scheduling.k8s.io/v1\\nkind: PriorityClass\\nmetadata: {name: late}\\nvalue: 1000\\n\"}\n"
	for _, tc := range []struct {
		name, actions string
		status        string
	}{
		{"class applied, then settled", "    - wait: {for: 2m}\n" + apply + "    - wait: {settled: true}\n", report.Succeeded},
		{"settled before the class", "    - wait: {settled: true}\n" + apply, report.Stuck},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := scenario.Parse("/virtual/scenario.yaml", []byte(strings.Replace(sc, "%s", tc.actions, 1)),
				fstest.MapFS{"cluster.yaml": {Data: []byte(strings.Replace(manifests, "%s", "late", 1))}})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Run(s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Status != tc.status {
				t.Fatalf("status %s, want %s (%v)", rep.Status, tc.status, rep.Stuck)
			}
			if tc.status == report.Succeeded && (len(rep.Workloads) != 1 || rep.Workloads[0].Ready != 3) {
				t.Fatalf("succeeded with workloads %+v, want 3 of 3 Ready", rep.Workloads)
			}
			if tc.status == report.Stuck && !strings.Contains(strings.Join(rep.Stuck, "\n"), "deployment default/web: 0 of 3 pods created: pods \"web-") {
				t.Fatalf("stuck reasons do not name the workload and admission's answer: %q", rep.Stuck)
			}
		})
	}
}
