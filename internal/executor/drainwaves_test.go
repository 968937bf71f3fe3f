package executor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/twin/mng"
)

// TestBlueGreenWaves: a blue group of 10 nodes, one pod of the wide
// Deployment on each (required anti-affinity by hostname), drained under
// each PDB shape in as few waves as the budget allows: ceil(10 / k) where
// k is the PDB's disruptionsAllowed with every pod healthy (semantics.md
// §D.2) — the fewest waves any drain that never has an eviction refused
// can take, since a wave evicts at most k of the pods — within 1.10 × the
// makespan bound those waves give, and no PDB breached.
func TestBlueGreenWaves(t *testing.T) {
	const nodes = 10
	var drainTime int // seconds: the first case's, without a PDB
	for _, c := range []struct {
		name  string
		pdb   *policyv1.PodDisruptionBudgetSpec
		waves int
	}{
		{"none", nil, 1},
		{"maxUnavailable 1", &policyv1.PodDisruptionBudgetSpec{MaxUnavailable: intOrString("1")}, 10},
		{"maxUnavailable 30%", &policyv1.PodDisruptionBudgetSpec{MaxUnavailable: intOrString("30%")}, 4},
		{"minAvailable N-2", &policyv1.PodDisruptionBudgetSpec{MinAvailable: intOrString(fmt.Sprint(nodes - 2))}, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			tw := newManagedTwin(t)
			kc := tw.port.Cluster()
			if err := tw.groups.Adopt(mng.Spec{Name: "wide", InstanceTypes: []string{"m5.large"}, Desired: nodes, Min: 1, Max: nodes, Version: "1.30",
				Labels: map[string]string{"type": "wide"}}, time.Hour); err != nil {
				t.Fatal(err)
			}
			lbls := map[string]string{"app": "wide"}
			if err := kc.Apply(&appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wide"},
				Spec: appsv1.DeploymentSpec{Replicas: aws.Int32(nodes), Selector: &metav1.LabelSelector{MatchLabels: lbls},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbls}, Spec: corev1.PodSpec{
						NodeSelector: map[string]string{"type": "wide"},
						Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
							LabelSelector: &metav1.LabelSelector{MatchLabels: lbls}, TopologyKey: corev1.LabelHostname}}}},
						Containers: []corev1.Container{{Name: "app", Image: "wide"}}}}},
			}); err != nil {
				t.Fatal(err)
			}
			if c.pdb != nil {
				spec := *c.pdb
				spec.Selector = &metav1.LabelSelector{MatchLabels: lbls}
				if err := kc.Apply(&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wide"}, Spec: spec}); err != nil {
					t.Fatal(err)
				}
			}
			ctx := context.Background()
			if err := tw.ex.WaitFor(ctx, kubeport.Until{What: "wide's pods", Holds: func(ctx context.Context) (bool, error) {
				pods, err := tw.port.ListPods(ctx, kubeport.PodQuery{Namespace: "default"})
				ready := 0
				for _, p := range pods {
					if p.Labels["app"] == "wide" && p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning {
						ready++
					}
				}
				return ready == nodes, err
			}}); err != nil {
				t.Fatal(err)
			}
			if err := tw.ex.UpgradeBlueGreen(ctx, BlueGreen{Group: "wide", Blue: "wide", Green: Green{Name: "wide-green"}}, v131); err != nil {
				t.Fatal(err)
			}
			waves := 0
			for _, e := range tw.events() {
				if strings.HasPrefix(e, "Normal DrainWave: node group wide: ") {
					waves++
				}
			}
			// The drain's makespan, first wave to blue empty, for the record.
			var first, last string
			for _, l := range tw.rec.lines {
				at, _, _ := strings.Cut(strings.TrimSpace(l), " ")
				if strings.Contains(l, "DrainWave") && first == "" {
					first = at
				}
				if strings.Contains(l, "BlueGreenDrain") {
					last = at
				}
			}
			makespan := seconds(t, last) - seconds(t, first)
			if c.pdb == nil {
				drainTime = makespan
			}
			// The bound: no wave can evict more than k pods, so no drain
			// without a refused eviction takes fewer than ceil(10/k)
			// waves, and a wave takes at least one node's drain time —
			// the unbudgeted one-wave drain's makespan.
			bound := c.waves * drainTime
			t.Logf("%s: %d waves, makespan %ds, bound %ds", c.name, waves, makespan, bound)
			if drainTime == 0 || float64(makespan) > 1.10*float64(bound) {
				t.Errorf("makespan %ds, want at most 1.10 × %ds", makespan, bound)
			}
			if waves != c.waves {
				t.Errorf("%d waves, want %d: %q", waves, c.waves, tw.events())
			}
			if b := kc.PDBBreaches(); len(b) != 0 {
				t.Errorf("PDB breaches %+v", b)
			}
		})
	}
}

// seconds reads the recorder's "NNs" time.
func seconds(t *testing.T, at string) int {
	t.Helper()
	var s int
	if _, err := fmt.Sscanf(at, "%ds", &s); err != nil {
		t.Fatalf("time %q: %v", at, err)
	}
	return s
}

func intOrString(s string) *intstr.IntOrString { v := intstr.Parse(s); return &v }
