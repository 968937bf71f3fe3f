package rehearse

import (
	"strings"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ladder-eks/ladder/internal/executor"
	"github.com/ladder-eks/ladder/internal/report"
)

// TestWorkshopOrdersPDBMaxUnavailableZero: with orders-pdb at
// maxUnavailable 0 the budget never allows a disruption. Ladder drains
// blue-mng itself before it deletes the group, and its drain waits on the
// PDB instead of letting DeleteNodegroup terminate the nodes with the
// orders pods on them: the run is stuck in the blue-mng step, blue-mng is
// never deleted, no PDB is violated, and the step names the pod and PDB.
func TestWorkshopOrdersPDBMaxUnavailableZero(t *testing.T) {
	sc := loadBuiltin(t, "workshop")
	found := false
	for _, o := range sc.Objects {
		if p, ok := o.Object.(*policyv1.PodDisruptionBudget); ok && p.Namespace == "orders" && p.Name == "orders-pdb" {
			zero := intstr.FromInt32(0)
			p.Spec.MinAvailable, p.Spec.MaxUnavailable = nil, &zero
			found = true
		}
	}
	if !found {
		t.Fatal("the workshop has no orders/orders-pdb")
	}
	j := mapJournal{}
	rep, err := Run(sc, Options{Journal: j})
	if err != nil {
		t.Fatal(err)
	}
	// The journal's record of the paused step names what holds it, as
	// ladder upgrade status shows it.
	if en := j["1.31/node-group/blue-mng"]; en.State != executor.StepFailed || !strings.HasPrefix(en.BlockedPod, "orders/orders-") ||
		en.BlockedPDB != "orders/orders-pdb" || en.BlockedNode == "" {
		t.Errorf("journal's blue-mng step %+v, want failed, blocked by an orders pod, orders/orders-pdb and its node", en)
	}
	if rep.Status != report.Stuck || len(rep.Violations) != 0 {
		t.Fatalf("status %s with violations %+v, want %s with none (%s %v)", rep.Status, rep.Violations, report.Stuck, rep.Failure, rep.Stuck)
	}
	for _, ph := range rep.Phases {
		if ph.Name == "blue-mng" && (ph.Status != report.Stuck || !strings.Contains(ph.Message, "pod orders/orders-") ||
			!strings.Contains(ph.Message, "The disruption budget orders-pdb needs 2 healthy pods")) {
			t.Errorf("blue-mng phase %+v, want stuck naming an orders pod and orders-pdb", ph)
		}
		if ph.PDBViolations != 0 {
			t.Errorf("phase %s %s: %d PDB violations", ph.Kind, ph.Name, ph.PDBViolations)
		}
	}
	for _, e := range rep.Events {
		if strings.Contains(e.Message, "Deleting node group blue-mng") {
			t.Errorf("%s: blue-mng deleted while its drain is blocked", e.Message)
		}
	}
}

// mapJournal is an executor.Journal in a map.
type mapJournal map[string]executor.Entry

func (j mapJournal) Get(key string) (executor.Entry, bool)  { e, ok := j[key]; return e, ok }
func (j mapJournal) Put(key string, e executor.Entry) error { j[key] = e; return nil }

func hasPodOf(pods map[string]bool, prefix string) bool {
	for p := range pods {
		if strings.HasPrefix(p, prefix) && !strings.HasPrefix(strings.TrimPrefix(p, prefix), "mysql-") {
			return true
		}
	}
	return false
}
