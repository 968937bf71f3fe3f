package mng_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/mng"
)

// The two ways a managed node group takes down a pod its PDB cannot spare
// are recorded as breaches, naming who did it: DeleteNodegroup terminates
// the node with the pod on it after its 5-minute drain ("Amazon EKS lets
// Auto Scaling continue the forced termination of the instance"), and an
// update with force deletes the pod after 15 minutes ("Force update – This
// option doesn't respect Pod disruption budgets", semantics.md §B). The
// forced update's scale-down phase then terminates the surge nodes the pod
// moved to, each after 15 minutes ("if it takes more than 15 minutes, the
// node is terminated regardless"): breaches too.
func TestManagedNodeGroupBreaches(t *testing.T) {
	cases := []struct {
		name      string
		run       func(tw *twin)
		mechanism string
		by        string
		after     time.Duration // from the drain's start
		// scaleIn: later breaches by the update's scale-down phase.
		scaleIn bool
	}{
		{
			name: "DeleteNodegroup",
			run: func(tw *twin) {
				if err := tw.mng.Delete("initial", nil); err != nil {
					tw.t.Fatal(err)
				}
				tw.runUntil(time.Hour, func() bool { return tw.status("initial").Status == mng.StatusDeleted })
			},
			mechanism: kube.BreachNodeRemoved, by: "DeleteNodegroup initial", after: nodegroup.DeleteDrainLimit + terminateTakes,
		},
		{
			name:      "UpdateNodegroupVersion with force",
			run:       func(tw *twin) { tw.update("initial", nodegroup.UpdateRequest{Force: true}, 3*time.Hour) },
			mechanism: kube.BreachDeleted, by: "UpdateNodegroupVersion initial with force", after: nodegroup.UpgradeDrainLimit,
			scaleIn: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw, node, pod := pdbBlocked(t)
			tc.run(tw)
			drain, _ := tw.first(mng.ReasonDrainStarted, node)
			b := tw.Kube.PDBBreaches()
			if len(b) == 0 || (len(b) > 1) != tc.scaleIn {
				t.Fatalf("breaches %+v, want %s's first\n%s", b, pod, tw.dumpLog())
			}
			for _, later := range b[1:] {
				if later.Mechanism != kube.BreachNodeRemoved || !strings.HasPrefix(later.By, "scale-down phase of ") {
					t.Errorf("later breach %+v, want one by the scale-down phase", later)
				}
			}
			if b[0].Namespace+"/"+b[0].Name != pod || b[0].Node != node || b[0].Mechanism != tc.mechanism ||
				!strings.HasPrefix(b[0].By, tc.by) || b[0].PDBs[0] != "default/web-pdb" || b[0].At.Sub(drain.At) != tc.after {
				t.Errorf("breach %+v %s after the drain began; want %s on %s, %s by %q under default/web-pdb %s after", b[0], b[0].At.Sub(drain.At), pod, node, tc.mechanism, tc.by, tc.after)
			}
		})
	}
}

// DeleteNodegroup reports the evictions its drains saw refused, and a pod
// still blocked when its node is terminated regardless as node-removed.
func TestDeleteNodegroupReportsBlockedPods(t *testing.T) {
	tw, node, pod := pdbBlocked(t)
	if err := tw.mng.Delete("initial", nil); err != nil {
		t.Fatal(err)
	}
	tw.runUntil(time.Hour, func() bool { return tw.status("initial").Status == mng.StatusDeleted })
	bl := tw.mng.DeletionBlocked()
	if len(bl) != 1 || bl[0].Pod != pod || bl[0].Node != node || bl[0].PDB != "default/web-pdb" || bl[0].Outcome != "node-removed" ||
		bl[0].Until.Sub(bl[0].Since) != nodegroup.DeleteDrainLimit {
		t.Errorf("deletion blocked %+v; want %s on %s blocked by default/web-pdb for 5m, node-removed", bl, pod, node)
	}
}
