package rehearse

import (
	"bytes"
	"strings"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// TestWorkshopOrdersPDBMaxUnavailableZero: with orders-pdb at
// maxUnavailable 0 the budget never allows a disruption, so DeleteNodegroup
// blue-mng drains its nodes in vain for 5 minutes and terminates them with
// both orders pods (orders and orders-mysql, which the PDB's selector also
// matches) on them. The run is not a success: its status and the blue-mng
// step's are violated, and the report names the two pods, orders/orders-pdb,
// how they went and the step.
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
	rep, err := Run(sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != report.Violated {
		t.Fatalf("status %s, want %s (%s %v)", rep.Status, report.Violated, rep.Failure, rep.Stuck)
	}
	pods := map[string]bool{}
	for _, v := range rep.Violations {
		if v.PDB != "orders/orders-pdb" || v.Mechanism != kube.BreachNodeRemoved || v.By != "DeleteNodegroup blue-mng" ||
			v.Hop != "1.31" || v.Step != "node-group" || v.Name != "blue-mng" || v.Node == "" {
			t.Errorf("violation %+v, want an orders pod gone with a blue-mng node under orders/orders-pdb in step 1.31 node-group blue-mng", v)
		}
		pods[v.Pod] = true
	}
	if len(rep.Violations) != 2 || len(pods) != 2 || !hasPodOf(pods, "orders/orders-mysql-") || !hasPodOf(pods, "orders/orders-") {
		t.Fatalf("violations %+v, want the orders and the orders-mysql pod once each", rep.Violations)
	}
	for _, ph := range rep.Phases {
		want := report.Succeeded
		if ph.Name == "blue-mng" {
			want = report.Violated
			if ph.PDBViolations != 2 || !strings.Contains(ph.Message, "orders/orders-pdb") {
				t.Errorf("blue-mng phase %+v, want 2 violations naming orders/orders-pdb", ph)
			}
		}
		if ph.Status != want {
			t.Errorf("phase %s %s: %s, want %s", ph.Kind, ph.Name, ph.Status, want)
		}
	}
	violations := 0
	for _, w := range rep.Workloads {
		violations += w.PDBViolations
	}
	if violations != 2 {
		t.Errorf("workloads count %d PDB violations, want 2", violations)
	}
	removed := 0
	for _, b := range rep.Blocked {
		if pods[b.Pod] && b.PDB == "orders/orders-pdb" && b.Outcome == "node-removed" {
			removed++
		}
	}
	if removed != 2 {
		t.Errorf("blocked %+v, want both orders pods blocked by orders/orders-pdb, node-removed", rep.Blocked)
	}
	for _, n := range rep.Notes {
		if strings.Contains(n, "orders/orders") {
			t.Errorf("note %q repeats a violation", n)
		}
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	head := strings.SplitN(text.String(), "\n", 4)
	if !strings.HasPrefix(head[0], "Scenario workshop (seed 1): violated after ") {
		t.Errorf("summary %q", head[0])
	}
	for _, line := range head[1:3] {
		if !strings.HasPrefix(line, "  violated: ") || !strings.Contains(line, "PodDisruptionBudget orders/orders-pdb allowed no disruption") ||
			!strings.Contains(line, "(DeleteNodegroup blue-mng); step 1.31 node-group blue-mng") {
			t.Errorf("summary line %q does not name the pod, its PDB, how and the step", line)
		}
	}
}

func hasPodOf(pods map[string]bool, prefix string) bool {
	for p := range pods {
		if strings.HasPrefix(p, prefix) && !strings.HasPrefix(strings.TrimPrefix(p, prefix), "mysql-") {
			return true
		}
	}
	return false
}
