package karpenter_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// The seed (shared/seeds/karpenter-node-upgrade.ko.txt): NodePool default
// with label team=checkout and taint dedicated=CheckoutApp:NoSchedule,
// EC2NodeClass default on the 1.30 AMI by id; one Karpenter node (m6i.large
// spot) runs checkout and checkout-redis.
const seedNodeClass = `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: KarpenterNodeRole-eksworkshop
  amiFamily: AL2023
  amiSelectorTerms:
    - id: %s
`

const seedNodePool = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    metadata:
      labels:
        team: checkout
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["spot"]
        - key: karpenter.k8s.aws/instance-category
          operator: In
          values: ["c", "m", "r"]
        - key: kubernetes.io/arch
          operator: In
          values: ["amd64"]
      taints:
        - key: dedicated
          value: CheckoutApp
          effect: NoSchedule
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 30s
%s`

const seedWorkloads = `
apiVersion: v1
kind: Namespace
metadata:
  name: checkout
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: checkout
  namespace: checkout
spec:
  replicas: 1
  selector:
    matchLabels: {app: checkout}
  template:
    metadata:
      labels: {app: checkout}
    spec:
      nodeSelector: {team: checkout}
      tolerations:
        - {key: dedicated, operator: Equal, value: CheckoutApp, effect: NoSchedule}
      containers:
        - name: checkout
          image: public.ecr.aws/aws-containers/retail-store-sample-checkout:1.2.1
          resources:
            requests: {cpu: 250m, memory: 256Mi}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: checkout-redis
  namespace: checkout
spec:
  replicas: 1
  selector:
    matchLabels: {app: checkout-redis}
  template:
    metadata:
      labels: {app: checkout-redis}
    spec:
      nodeSelector: {team: checkout}
      tolerations:
        - {key: dedicated, operator: Equal, value: CheckoutApp, effect: NoSchedule}
      containers:
        - name: redis
          image: public.ecr.aws/docker/library/redis:7
          resources:
            requests: {cpu: 100m, memory: 128Mi}
`

// TestSeedUpgrade replays the seed: scale checkout to 10 (Karpenter adds a
// node, also on 1.30), then switch the EC2NodeClass to the 1.31 AMI and add
// the budget nodes "1" for Drifted; the nodes are replaced one at a time,
// each through created → launched → registered → initialized → tainted →
// deleted, and end on kubelet v1.31.14-eks-ecaa3a6 (semantics.md §A.1b,
// §A.3 AMIDrift, §A.4).
func TestSeedUpgrade(t *testing.T) {
	cases := []struct {
		name    string
		budgets string // the seed's step 3 budgets block
		wantMax int
	}{
		{name: `budget nodes "1" for Drifted (the seed)`, budgets: "    budgets:\n      - nodes: \"1\"\n        reasons: [Drifted]\n", wantMax: 1},
		// Even unbounded, the second node waits: its pods would land only on
		// the first node's replacement, and a disruption never relies on a
		// NodeClaim still initializing (SimulateScheduling); by the time it
		// is, the first node's instance is terminating and no longer counts.
		{name: `budget nodes "100%" for Drifted`, budgets: "    budgets:\n      - nodes: \"100%\"\n        reasons: [Drifted]\n", wantMax: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t)
			tw.applyYAML(fmt.Sprintf(seedNodeClass, ami130))
			tw.applyYAML(fmt.Sprintf(seedNodePool, ""))
			if _, err := tw.karp.Adopt("default", "m6i.large", "us-west-2a", "spot", "", t0.Add(-(3*time.Hour + 57*time.Minute))); err != nil {
				t.Fatal(err)
			}
			tw.applyYAML(seedWorkloads)
			tw.Settle()
			if n := len(tw.Kube.Nodes()); n != 1 {
				t.Fatalf("%d nodes at the start, want 1", n)
			}

			// Step 1: scale checkout 1 → 10.
			if err := tw.Kube.Scale("Deployment", "checkout", "checkout", 10); err != nil {
				t.Fatal(err)
			}
			ready := func() bool {
				return tw.workload("Deployment", "checkout").Ready == 10 && tw.workload("Deployment", "checkout-redis").Ready == 1 && !tw.karp.Busy()
			}
			if !tw.runUntil(10*time.Minute, ready) {
				t.Fatalf("checkout not scaled out\n%s", tw.dumpLog())
			}
			nodes := tw.Kube.Nodes()
			if len(nodes) != 2 {
				t.Fatalf("%d nodes after the scale-out, want 2 (the seed's ip-10-0-12-111 and ip-10-0-41-46)", len(nodes))
			}
			for _, n := range nodes {
				if n.Labels["team"] != "checkout" || n.Status.NodeInfo.KubeletVersion != kubelet130 {
					t.Errorf("node %s: team=%q kubelet %s, want checkout and %s", n.Name, n.Labels["team"], n.Status.NodeInfo.KubeletVersion, kubelet130)
				}
			}
			added := tw.events("NodeClaimLaunched")
			if len(added) != 1 || !strings.Contains(strings.Join(added[0].Fields, " "), "capacity-type=spot") {
				t.Errorf("scale-out launches = %v, want one spot NodeClaim", added)
			}

			// Step 3: the 1.31 AMI and the Drifted budget.
			tw.log.Lines = nil
			tw.applyYAML(fmt.Sprintf(seedNodeClass, ami131))
			tw.applyYAML(fmt.Sprintf(seedNodePool, tc.budgets))
			if got := len(tw.karp.Drifted()); got != 2 {
				t.Fatalf("Drifted() = %d, want 2", got)
			}
			if !tw.runUntil(time.Hour, func() bool { return tw.upgraded() && ready() }) {
				t.Fatalf("not upgraded within 1h\n%s", tw.dumpLog())
			}

			st := tw.karp.Stats("default")
			if st.MaxConcurrentDisruptions != tc.wantMax || st.Replaced != 2 {
				t.Errorf("MaxConcurrentDisruptions %d, Replaced %d; want %d and 2\n%s", st.MaxConcurrentDisruptions, st.Replaced, tc.wantMax, tw.dumpLog())
			}
			for _, n := range tw.Kube.Nodes() {
				if n.Status.NodeInfo.KubeletVersion != kubelet131 || n.Labels["team"] != "checkout" || !hasTaint(n, "dedicated") {
					t.Errorf("node %s: kubelet %s, team=%q; want %s, checkout, tainted dedicated", n.Name, n.Status.NodeInfo.KubeletVersion, n.Labels["team"], kubelet131)
				}
			}
			started := tw.events("DisruptionStarted")
			if len(started) != 2 {
				t.Fatalf("DisruptionStarted = %d, want 2\n%s", len(started), tw.dumpLog())
			}
			for _, s := range started {
				if s.Reason != "drifted" || !strings.Contains(s.Message, "via replace, terminating 1 nodes") || !strings.Contains(s.Message, "/spot and replacing with node from types c4.large") {
					t.Errorf("DisruptionStarted = %q reason %q, want the seed's \"via replace ... c4.large\" line, reason drifted\n%s", s.Message, s.Reason, tw.dumpLog())
				}
			}
			if tc.wantMax == 1 {
				// The second node's disruption starts only after the first
				// node's NodeClaim is gone... at least after its replacement
				// is initialized and its drain is done.
				firstGone, _ := tw.firstEvent("NodeDeleted", nil)
				if !started[1].At.After(started[0].At) || started[1].At.Before(firstGone.At.Add(-testTimings.Terminate)) {
					t.Errorf("second disruption at +%s, first node deleted at +%s: not one at a time", started[1].At.Sub(t0), firstGone.At.Sub(t0))
				}
			}
			if k := tw.Kube.Killed(); len(k) != 0 {
				t.Errorf("pods killed without eviction: %v", k)
			}
			for _, p := range tw.Kube.Pods() {
				if p.Namespace == "checkout" && (p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning) {
					t.Errorf("pod %s not running", p.Name)
				}
			}
			if np := tw.karp.NodePool("default"); len(np.Spec.Disruption.Budgets) != 1 || np.Spec.Disruption.Budgets[0].Reasons[0] != karpv1.DisruptionReasonDrifted {
				t.Errorf("stored budgets = %+v", np.Spec.Disruption.Budgets)
			}
		})
	}
}
