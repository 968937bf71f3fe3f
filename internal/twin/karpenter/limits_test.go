package karpenter_test

import (
	"testing"
	"time"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// Karpenter's own errors for a NodePool whose limits leave no room
// (scheduler.go addToNewNodeClaim, printed by serrors with the pool's name).
const (
	exceedLimits   = "all available instance types exceed limits for nodepool (NodePool=default)"
	nodesExhausted = "node limits have been exhausted for nodepool (NodePool=default)"
)

func withLimits(kv ...string) poolOption {
	return func(np *karpv1.NodePool) {
		np.Spec.Limits = karpv1.Limits{}
		for i := 0; i+1 < len(kv); i += 2 {
			np.Spec.Limits[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
	}
}

// launchedCPU is the vCPU of every NodeClaim's instance type, and how many
// NodeClaims there are.
func (tw *twin) launchedCPU() (vcpu, claims int) {
	for _, c := range tw.karp.NodeClaims() {
		vcpu += c.InstanceType.VCPU
		claims++
	}
	return vcpu, claims
}

// pendingReasons counts the pending pods of a workload by Karpenter's
// reason for them.
func (tw *twin) pendingReasons(prefix string) map[string]int {
	out := map[string]int{}
	for _, p := range tw.PodsOf(prefix) {
		if p.Spec.NodeName == "" {
			out[tw.karp.Unschedulable(p.Namespace, p.Name)]++
		}
	}
	return out
}

// TestLimitsHoldWithinABatch: one provisioning batch of 30 pods opens
// NodeClaims only while the NodePool's limits last. Karpenter's scheduler
// subtracts each NodeClaim it opens as it opens it, counting the largest
// capacity among the NodeClaim's instance-type options (scheduler.go
// subtractMax), and filters the next NodeClaim's types by what is left
// (filterByRemainingResources); the pods left over stay pending with
// Karpenter's reason.
func TestLimitsHoldWithinABatch(t *testing.T) {
	largeAndXLarge := []karpv1.NodeSelectorRequirementWithMinValues{
		req(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot"),
		req(awsv1.LabelInstanceCategory, corev1.NodeSelectorOpIn, "c", "m", "r"),
		req(awsv1.LabelInstanceSize, corev1.NodeSelectorOpIn, "large", "xlarge"),
	}
	cases := []struct {
		name       string
		pool       *karpv1.NodePool
		adopted    int // c4.large nodes of the pool already running
		wantClaims int // NodeClaims launched by the batch
		wantCPU    int // their vCPU, at most the limit
		wantReason string
	}{
		{
			// Every large c/m/r has 2 vCPU: two NodeClaims use the 4.
			name:       "cpu 4, size large: two 2-vCPU nodes",
			pool:       nodePool(withLimits("cpu", "4")),
			wantClaims: 2, wantCPU: 4,
			wantReason: exceedLimits,
		},
		{
			// The first NodeClaim may still become an xlarge: its 4 vCPU
			// are subtracted whichever type it launches as, and nothing is
			// left for a second.
			name:       "cpu 4, sizes large and xlarge: the largest option counts",
			pool:       nodePool(withLimits("cpu", "4"), withRequirements(largeAndXLarge...)),
			wantClaims: 1, wantCPU: 4,
			wantReason: exceedLimits,
		},
		{
			// An r-family large has 16 GiB (15,155 MiB after the VM
			// overhead): the first batch's NodeClaim could become one, so it
			// opens no other. It launches a c4.large (3.5 GiB); the next
			// batches, counting what launched, fit an m- then c-sized
			// claim, then another c: four c4.large within 16 GiB.
			name:       "memory 16Gi, category c/m/r: the batches stay within it",
			pool:       nodePool(withLimits("memory", "16Gi")),
			wantClaims: 4, wantCPU: 8,
			wantReason: exceedLimits,
		},
		{
			// Two running nodes already use the 4 vCPU.
			name:       "cpu 4, two nodes running: none",
			pool:       nodePool(withLimits("cpu", "4")),
			adopted:    2,
			wantClaims: 0, wantCPU: 0,
			wantReason: exceedLimits,
		},
		{
			name:       "nodes 1, one node running: none",
			pool:       nodePool(withLimits("nodes", "1")),
			adopted:    1,
			wantClaims: 0, wantCPU: 0,
			wantReason: nodesExhausted,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t)
			tw.apply(nodeClass(amiID(ami130)), tc.pool)
			if tc.adopted > 0 {
				tw.adopt(tc.adopted, "c4.large", "spot", ami130, time.Hour)
				tw.Settle()
			}
			// 500m pods: three fit a large node, seven an xlarge.
			tw.apply(deployment("web", 30, "500m"))
			tw.runFor(5 * time.Minute)
			vcpu, claims := tw.launchedCPU()
			vcpu -= 2 * tc.adopted
			claims -= tc.adopted
			if claims != tc.wantClaims || vcpu != tc.wantCPU {
				t.Errorf("launched %d NodeClaims of %d vCPU, want %d of %d\n%s", claims, vcpu, tc.wantClaims, tc.wantCPU, tw.dumpLog())
			}
			for name, limit := range tc.pool.Spec.Limits {
				used := resource.NewQuantity(int64(len(tw.karp.NodeClaims())), resource.DecimalSI)
				if name != "nodes" {
					used = resource.NewQuantity(0, resource.BinarySI)
					for _, c := range tw.karp.NodeClaims() {
						used.Add(c.InstanceType.Capacity()[name])
					}
				}
				if used.Cmp(limit) > 0 {
					t.Errorf("NodeClaims hold %s %s, over the limit %s", used, name, limit.String())
				}
			}
			reasons := tw.pendingReasons("web-")
			if len(reasons) != 1 || reasons[tc.wantReason] == 0 {
				t.Errorf("pending pods by Karpenter's reason: %v, want all %q", reasons, tc.wantReason)
			}
		})
	}
}

// TestLimitsSecondBatchSeesTheFirst: a later batch starts from the limits
// minus the NodeClaims the earlier one launched (NewScheduler subtracts
// every active node's capacity, updateRemainingResources), then subtracts
// its own as it opens them.
func TestLimitsSecondBatchSeesTheFirst(t *testing.T) {
	tw := newTwin(t)
	tw.apply(nodeClass(amiID(ami130)), nodePool(withLimits("cpu", "6")))
	tw.apply(deployment("first", 1, "1500m"))
	tw.runFor(2 * time.Minute)
	if vcpu, claims := tw.launchedCPU(); claims != 1 || vcpu != 2 {
		t.Fatalf("first batch: %d NodeClaims of %d vCPU, want 1 of 2\n%s", claims, vcpu, tw.dumpLog())
	}
	tw.apply(deployment("second", 30, "500m"))
	tw.runFor(5 * time.Minute)
	if vcpu, claims := tw.launchedCPU(); claims != 3 || vcpu != 6 {
		t.Errorf("after the second batch: %d NodeClaims of %d vCPU, want 3 of 6\n%s", claims, vcpu, tw.dumpLog())
	}
	if reasons := tw.pendingReasons("second-"); len(reasons) != 1 || reasons[exceedLimits] != 30-2*3 {
		t.Errorf("pending pods by Karpenter's reason: %v, want %d with %q", reasons, 30-2*3, exceedLimits)
	}
}

// TestLimitsDriftReplacesAtTheLimit: a drift candidate's own capacity does
// not count against its NodePool's limits in the simulation that plans its
// replacement (SimulateScheduling leaves the candidates out of the
// scheduler's state nodes), so a pool at its limit still rolls.
func TestLimitsDriftReplacesAtTheLimit(t *testing.T) {
	tw := newTwin(t)
	tw.apply(nodeClass(amiID(ami130)), nodePool(withLimits("cpu", "4"), withBudgets(budget("1"))))
	tw.adopt(2, "c4.large", "spot", ami130, 4*time.Hour)
	tw.apply(deployment("web", 4, "500m"))
	tw.Settle()
	tw.apply(nodeClass(amiID(ami131)))
	if !tw.runUntil(time.Hour, func() bool { return tw.claimsOnAMI(ami131) == 2 && tw.claimsOnAMI(ami130) == 0 }) {
		t.Fatalf("after an hour %d NodeClaims on the new AMI, %d on the old, want 2 and 0\n%s", tw.claimsOnAMI(ami131), tw.claimsOnAMI(ami130), tw.dumpLog())
	}
}
