package drainpredict

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/scenario"
)

func loadBuiltin(t *testing.T, name string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.LoadBuiltin(name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func describePredictions(ps []Prediction) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "%s %s/%s %s finished=%v %s evicted=%d err=%q\n", p.Node, p.Group.Type, p.Group.Name, p.Zone, p.Finished, p.Duration, p.Evicted, p.Error)
		for _, bl := range p.Blocks {
			fmt.Fprintf(&b, "  block %s (%s) pdb=%s for=%s %s\n", bl.Pod, bl.Workload.Name, bl.PDB, bl.For, bl.Outcome)
		}
		for _, pp := range p.Pending {
			fmt.Fprintf(&b, "  pending %s (%s) zones=%v: %s\n", pp.Pod, pp.Workload.Name, pp.VolumeZones, pp.Reason)
		}
	}
	return b.String()
}

// TestScenarioPDBDeadlock: orders has one replica and a PDB of
// minAvailable 1 (builtin pdb-deadlock); draining its blue-mng node is
// refused until EKS's 15 minutes, every other node drains.
func TestScenarioPDBDeadlock(t *testing.T) {
	ps, err := Scenario(loadBuiltin(t, "pdb-deadlock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + describePredictions(ps))
	blocked := 0
	for _, p := range ps {
		if len(p.Blocks) == 0 {
			if !p.Finished {
				t.Errorf("%s: not finished without a block: %s", p.Node, p.Error)
			}
			continue
		}
		blocked++
		if p.Group.Name != "blue-mng" || p.Finished || p.Duration != 15*time.Minute || p.Limit != 15*time.Minute {
			t.Errorf("%s: %+v, want blue-mng blocked until 15m", p.Node, p)
		}
		if b := p.Blocks[0]; b.PDB != "orders/orders-pdb" || b.Outcome != "blocked" || b.Workload.Name != "orders" || b.For != 15*time.Minute {
			t.Errorf("%s: block %+v, want orders held by orders/orders-pdb for 15m", p.Node, b)
		}
	}
	if blocked != 1 {
		t.Errorf("%d nodes blocked, want 1", blocked)
	}
}

// TestScenarioWorkshop: every workshop node drains; draining the
// blue-mng node with orders-mysql leaves it Pending (its EBS volume's zone
// has no other node tolerating dedicated=OrdersApp), and the run is fast
// and deterministic.
func TestScenarioWorkshop(t *testing.T) {
	sc := loadBuiltin(t, "workshop")
	start := time.Now()
	ps, err := Scenario(sc)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d predictions in %s\n%s", len(ps), time.Since(start), describePredictions(ps))
	if len(ps) != 10 {
		t.Errorf("%d predictions, want 10 (11 nodes, one of them Fargate)", len(ps))
	}
	again, err := Scenario(sc)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := describePredictions(ps), describePredictions(again); a != b {
		t.Errorf("not deterministic:\n%s\n---\n%s", a, b)
	}
}

// TestScenarioCapsEachGroup: a generated 60-node cluster drains at
// most PerGroup nodes of each group, not all 60 — each drain sets up
// a fresh twin of the whole cluster.
func TestScenarioCapsEachGroup(t *testing.T) {
	data, err := scenario.Generate(scenario.GenerateOptions{Nodes: 60, PodsPerNode: 5, Seed: 1, Mix: true})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse("mix-60.yaml", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := Scenario(sc)
	if err != nil {
		t.Fatal(err)
	}
	perGroup := map[string]int{}
	for _, p := range ps {
		perGroup[p.Group.Name]++
	}
	if len(perGroup) < 4 {
		t.Fatalf("drains in groups %v, want every EC2 group", perGroup)
	}
	for g, n := range perGroup {
		if n > PerGroup {
			t.Errorf("group %s: %d drains, want at most %d", g, n, PerGroup)
		}
	}
}

// TestScenarioPDBSpanningADaemonSet: pdb-deadlock's orders-pdb changed to
// maxUnavailable 1 and a DaemonSet whose pods it also selects: the
// disruption controller cannot get a DaemonSet's scale and fails safe
// (eviction.ScaleError), so the orders pod that a one-pod budget would let go
// is refused on every node and each drain holding it is predicted blocked.
// With the budget alone (no DaemonSet) every drain finishes.
func TestScenarioPDBSpanningADaemonSet(t *testing.T) {
	for _, withDaemonSet := range []bool{false, true} {
		sc := loadBuiltin(t, "pdb-deadlock")
		one := intstr.FromInt32(1)
		var pdb *policyv1.PodDisruptionBudget
		for _, o := range sc.Objects {
			if p, ok := o.Object.(*policyv1.PodDisruptionBudget); ok && p.Name == "orders-pdb" {
				pdb = p
			}
		}
		if pdb == nil {
			t.Fatal("pdb-deadlock has no orders-pdb")
		}
		pdb.Spec.MinAvailable, pdb.Spec.MaxUnavailable = nil, &one
		if withDaemonSet {
			labels := map[string]string{"app.kubernetes.io/name": "orders", "app.kubernetes.io/component": "service", "agent": "log"}
			ds := &appsv1.DaemonSet{
				TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
				ObjectMeta: metav1.ObjectMeta{Name: "orders-log-agent", Namespace: "orders"},
				Spec: appsv1.DaemonSetSpec{
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"agent": "log"}},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "fluent-bit:3",
							Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}}}},
					},
				},
			}
			sc.Objects = append(sc.Objects, manifest.Object{GVK: appsv1.SchemeGroupVersion.WithKind("DaemonSet"), Object: ds})
		}
		ps, err := Scenario(sc)
		if err != nil {
			t.Fatal(err)
		}
		blocked := 0
		for _, p := range ps {
			for _, b := range p.Blocks {
				if b.PDB == "orders/orders-pdb" && b.Outcome == "blocked" && b.Workload.Name == "orders" {
					blocked++
				}
			}
		}
		switch {
		case withDaemonSet && blocked == 0:
			t.Errorf("with the DaemonSet: no drain blocked by orders/orders-pdb:\n%s", describePredictions(ps))
		case !withDaemonSet && blocked > 0:
			t.Errorf("maxUnavailable 1 alone: %d drains blocked, want none:\n%s", blocked, describePredictions(ps))
		}
	}
}
