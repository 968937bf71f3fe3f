package drainwave

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ladder-eks/ladder/internal/eviction"
)

var now = time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)

// pdb is a PDB selecting app=app with the status the disruption controller
// writes (semantics.md §D.2) for replicas pods of one Deployment, ready of
// them Ready.
func pdb(t *testing.T, app string, replicas, ready int32, minAvailable, maxUnavailable *intstr.IntOrString) *policyv1.PodDisruptionBudget {
	t.Helper()
	p := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: "default", Generation: 1},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable:   minAvailable,
			MaxUnavailable: maxUnavailable,
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		},
	}
	res := eviction.SyncCounts(p, eviction.PodCounts{
		Selected: replicas, Healthy: ready, Scale: replicas,
		Lookup: func(string) (bool, bool) { return false, false },
	}, now)
	if res.SyncError != nil {
		t.Fatal(res.SyncError)
	}
	p.Status = res.Status
	return p
}

func val(s string) *intstr.IntOrString { v := intstr.Parse(s); return &v }

// pod is a Running pod of app; ready sets its Ready condition.
func pod(app string, i int, ready bool) *corev1.Pod {
	status := corev1.ConditionTrue
	if !ready {
		status = corev1.ConditionFalse
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", app, i), Namespace: "default", Labels: map[string]string{"app": app}},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}},
		},
	}
}

// spread puts n Ready pods of each app on nodes node-0..node-(n-1), one per
// node per app.
func spread(n int, apps ...string) []Node {
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i].Name = fmt.Sprintf("node-%d", i)
		for _, app := range apps {
			nodes[i].Pods = append(nodes[i].Pods, pod(app, i, true))
		}
	}
	return nodes
}

func names(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("node-%d", i))
	}
	return out
}

// TestPlan: the wave for the PDB shapes of the reference's numbers.
func TestPlan(t *testing.T) {
	unready := spread(3, "web")
	unready[2].Pods[0] = pod("web", 2, false)
	pending := spread(2, "web")
	pending[1].Pods[0].Status.Phase = corev1.PodPending
	twoPerNode := spread(3, "web")
	twoPerNode[0].Pods = append(twoPerNode[0].Pods, pod("web", 10, true))
	twoPerNode[2].Pods = append(twoPerNode[2].Pods, pod("web", 11, true), pod("web", 12, true))

	for _, c := range []struct {
		name  string
		nodes []Node
		pdbs  []*policyv1.PodDisruptionBudget
		max   int
		want  []string
		alone []string // nodes refused even drained alone
	}{{
		name:  "no PDB: every node at once",
		nodes: spread(5, "web"),
		want:  names(0, 5),
	}, {
		name:  "maxUnavailable 1 of 6: one node",
		nodes: spread(6, "web"),
		pdbs:  []*policyv1.PodDisruptionBudget{pdb(t, "web", 6, 6, nil, val("1"))},
		want:  names(0, 1),
	}, {
		// §D.2: maxUnavailable 10% of 25 rounds up to 3, desiredHealthy 22.
		name:  "maxUnavailable 10% of 25: three nodes",
		nodes: spread(25, "web"),
		pdbs:  []*policyv1.PodDisruptionBudget{pdb(t, "web", 25, 25, nil, val("10%"))},
		want:  names(0, 3),
	}, {
		// §D.2: 10% of 5 still rounds up to 1.
		name:  "maxUnavailable 10% of 5: one node",
		nodes: spread(5, "web"),
		pdbs:  []*policyv1.PodDisruptionBudget{pdb(t, "web", 5, 5, nil, val("10%"))},
		want:  names(0, 1),
	}, {
		name:  "minAvailable N-1: one node",
		nodes: spread(4, "web"),
		pdbs:  []*policyv1.PodDisruptionBudget{pdb(t, "web", 4, 4, val("3"), nil)},
		want:  names(0, 1),
	}, {
		name:  "minAvailable 100%: no node, each refused alone",
		nodes: spread(3, "web"),
		pdbs:  []*policyv1.PodDisruptionBudget{pdb(t, "web", 3, 3, val("100%"), nil)},
		alone: names(0, 3),
	}, {
		name:  "one replica unready spends the budget of maxUnavailable 1",
		nodes: spread(3, "web"),
		pdbs:  []*policyv1.PodDisruptionBudget{pdb(t, "web", 3, 2, nil, val("1"))},
		alone: names(0, 3),
	}, {
		// §D.1, §F pitfall 8: currentHealthy 2 >= desiredHealthy 2 > 0, so
		// the unready pod goes without the budget; the Ready ones find 0.
		name:  "the unready pod's node drains at the healthy floor",
		nodes: unready,
		pdbs:  []*policyv1.PodDisruptionBudget{pdb(t, "web", 3, 2, nil, val("1"))},
		want:  []string{"node-2"},
		alone: names(0, 2),
	}, {
		name:  "a pending pod takes no budget",
		nodes: pending,
		pdbs:  []*policyv1.PodDisruptionBudget{pdb(t, "web", 2, 1, nil, val("1"))},
		want:  []string{"node-1"},
		alone: []string{"node-0"},
	}, {
		// maxUnavailable 2: node-0's two pods fill it, node-1 fits alone
		// and waits, node-2's three pods never fit.
		name:  "pods of one PDB on one node add up",
		nodes: twoPerNode,
		pdbs:  []*policyv1.PodDisruptionBudget{pdb(t, "web", 6, 6, nil, val("2"))},
		want:  []string{"node-0"},
		alone: []string{"node-2"},
	}, {
		// Each node holds a pod of both apps: the tighter PDB decides.
		name:  "two PDBs on every node: the smaller budget",
		nodes: spread(10, "web", "api"),
		pdbs: []*policyv1.PodDisruptionBudget{
			pdb(t, "web", 10, 10, nil, val("50%")),
			pdb(t, "api", 10, 10, val("8"), nil),
		},
		want: names(0, 2),
	}, {
		name:  "max bounds the wave",
		nodes: spread(25, "web"),
		pdbs:  []*policyv1.PodDisruptionBudget{pdb(t, "web", 25, 25, nil, val("10%"))},
		max:   2,
		want:  names(0, 2),
	}} {
		t.Run(c.name, func(t *testing.T) {
			before := make([]policyv1.PodDisruptionBudgetStatus, len(c.pdbs))
			for i, p := range c.pdbs {
				before[i] = *p.Status.DeepCopy()
			}
			w := Plan(c.nodes, c.pdbs, c.max, now)
			if !slices.Equal(w.Nodes, c.want) {
				t.Errorf("wave %v, want %v", w.Nodes, c.want)
			}
			var alone []string
			for _, r := range w.Waiting {
				if slices.Contains(w.Nodes, r.Node) {
					t.Errorf("%s both in the wave and waiting", r.Node)
				}
				if r.Alone {
					alone = append(alone, r.Node)
				}
			}
			if !slices.Equal(alone, c.alone) {
				t.Errorf("refused alone %v, want %v", alone, c.alone)
			}
			if len(w.Nodes)+len(w.Waiting) != len(c.nodes) {
				t.Errorf("%d in the wave and %d waiting of %d nodes", len(w.Nodes), len(w.Waiting), len(c.nodes))
			}
			for i, p := range c.pdbs {
				if p.Status.DisruptionsAllowed != before[i].DisruptionsAllowed || len(p.Status.DisruptedPods) != len(before[i].DisruptedPods) {
					t.Errorf("PDB %s changed: %+v", p.Name, p.Status)
				}
			}
		})
	}
}

// TestPlanRefusals: a waiting node names its pod, PDB and the Eviction API's
// answer — a 429 for a spent budget, a 500 for a pod under two PDBs.
func TestPlanRefusals(t *testing.T) {
	nodes := spread(2, "web")
	nodes = append(nodes, Node{Name: "node-2", Pods: []*corev1.Pod{pod("web", 2, true)}})
	nodes[2].Pods[0].Labels["tier"] = "front"
	front := pdb(t, "front", 1, 1, nil, val("1"))
	front.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "front"}}
	w := Plan(nodes, []*policyv1.PodDisruptionBudget{pdb(t, "web", 3, 3, nil, val("1")), front}, 0, now)

	if !slices.Equal(w.Nodes, []string{"node-0"}) || len(w.Waiting) != 2 {
		t.Fatalf("wave %v, waiting %+v", w.Nodes, w.Waiting)
	}
	spent, multiple := w.Waiting[0], w.Waiting[1]
	if spent.Node != "node-1" || spent.Pod != "default/web-1" || !slices.Equal(spent.PDBs, []string{"default/web"}) ||
		spent.Alone || spent.Err.ErrStatus.Code != http.StatusTooManyRequests {
		t.Errorf("spent budget: %+v", spent)
	}
	if multiple.Node != "node-2" || !slices.Equal(multiple.PDBs, []string{"default/web", "default/front"}) ||
		!multiple.Alone || multiple.Err.ErrStatus.Code != http.StatusInternalServerError || multiple.Err.ErrStatus.Message != eviction.MultiplePDBMessage {
		t.Errorf("several PDBs: %+v", multiple)
	}
}
