package eviction

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// SyncCounts must give what SyncFacts gives for the same pods whenever every
// controller resolves: the twin keeps counters instead of reading every pod
// per sync, and its PDB statuses must not move. Random PDBs (each kind of
// minAvailable/maxUnavailable), pods (Ready or not, being deleted or not,
// several controllers, some unmanaged) and DisruptedPods entries (present,
// deleting, missing pods; expired, expiring now, fresh) are synced twice in
// a row, so the second sync also compares the unchanged-status path.
func TestSyncCountsMatchesSyncFacts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Date(2026, 3, 30, 10, 0, 0, 0, time.UTC)
	specs := []func() *policyv1.PodDisruptionBudget{
		func() *policyv1.PodDisruptionBudget {
			return newPDB("p", minAvailable(intstr.FromInt32(rng.Int32N(6))))
		},
		func() *policyv1.PodDisruptionBudget {
			return newPDB("p", minAvailable(intstr.FromString(fmt.Sprintf("%d%%", rng.IntN(101)))))
		},
		func() *policyv1.PodDisruptionBudget {
			return newPDB("p", maxUnavailable(intstr.FromInt32(rng.Int32N(4))))
		},
		func() *policyv1.PodDisruptionBudget {
			return newPDB("p", maxUnavailable(intstr.FromString(fmt.Sprintf("%d%%", rng.IntN(101)))))
		},
		func() *policyv1.PodDisruptionBudget { return newPDB("p", maxUnavailable(intstr.FromString("ten"))) },
	}
	replicas := map[types.UID]int32{"deploy": 5, "sts": 2} // by scale owner
	owner := map[types.UID]types.UID{"rs-a": "deploy", "rs-b": "deploy", "sts": "sts"}
	for i := range 3000 {
		pdb := specs[rng.IntN(len(specs))]()
		pdb.Generation = 1
		n := rng.IntN(9)
		facts := make([]PodFacts, n)
		byName := map[string]*PodFacts{}
		var healthy int32
		for j := range facts {
			f := &facts[j]
			f.Name = fmt.Sprintf("pod-%d", j)
			f.Pod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: f.Name, Namespace: "default"}}
			if rng.IntN(5) > 0 {
				f.HasController = true
				f.ControllerUID = []types.UID{"rs-a", "rs-b", "sts"}[rng.IntN(3)]
			}
			f.Ready, f.Deleting = rng.IntN(4) > 0, rng.IntN(5) == 0
			if f.Ready && !f.Deleting {
				healthy++
			}
			byName[f.Name] = f
		}
		scale := func(p *corev1.Pod) (types.UID, int32, bool) {
			f := byName[p.Name]
			return owner[f.ControllerUID], replicas[owner[f.ControllerUID]], true
		}
		var sum int32
		seen := map[types.UID]bool{}
		for _, f := range facts {
			if f.HasController && !seen[owner[f.ControllerUID]] {
				seen[owner[f.ControllerUID]] = true
				sum += replicas[owner[f.ControllerUID]]
			}
		}
		if rng.IntN(3) > 0 {
			pdb.Status.DisruptedPods = map[string]metav1.Time{}
			for range rng.IntN(4) {
				name := fmt.Sprintf("pod-%d", rng.IntN(10))
				ago := []time.Duration{0, time.Minute, DeletionTimeout, DeletionTimeout + time.Second}[rng.IntN(4)]
				pdb.Status.DisruptedPods[name] = metav1.NewTime(now.Add(-ago))
			}
		}
		counts := PodCounts{Selected: int32(n), Healthy: healthy, Scale: sum, Lookup: func(name string) (bool, bool) {
			f := byName[name]
			if f == nil || f.Deleting {
				return false, false
			}
			return true, f.Ready
		}}
		for round := range 2 {
			want := SyncFacts(pdb, facts, scale, now)
			got := SyncCounts(pdb, counts, now)
			want.UnmanagedPods = nil // counters do not name pods
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("case %d round %d (%d pods, spec %+v, disrupted %v):\n counts %+v\n facts  %+v", i, round, n, pdb.Spec, pdb.Status.DisruptedPods, got, want)
			}
			pdb.Status = want.Status
		}
	}
}
