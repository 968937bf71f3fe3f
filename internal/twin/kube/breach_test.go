package kube

import (
	"slices"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func pdbMaxUnavailable(name, app string, maxUnavailable int32) *policyv1.PodDisruptionBudget {
	v := intstr.FromInt32(maxUnavailable)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &v, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
	}
}

// A pod taken down without the Eviction API is a breach when a PDB
// selecting it allows no disruption at that instant (semantics.md §D.1,
// §D.2), whichever way it goes — deleted or with its node — and only then:
// once per pod, never for a pod the budget could spare (a DaemonSet's
// included), one already terminating or an unready one.
func TestPDBBreaches(t *testing.T) {
	type want struct {
		pods      []string // indexes into the web pods, in breach order, as "0", "1"
		mechanism string
		by        string
	}
	cases := []struct {
		name string
		// onOneNode puts both web pods on one node; ready waits until
		// they are Ready before tracking starts.
		onOneNode bool
		notReady  bool
		budget    *policyv1.PodDisruptionBudget
		daemonSet bool
		takeDown  func(t *testing.T, c *Cluster, web []string, nodeOf func(string) string)
		want      want
	}{
		{
			name:   "deleted under maxUnavailable 0",
			budget: pdbMaxUnavailable("web", "web", 0),
			takeDown: func(t *testing.T, c *Cluster, web []string, _ func(string) string) {
				must(t, c.DeletePod("default", web[0], nil, "kubectl delete pod"))
			},
			want: want{pods: []string{"0"}, mechanism: BreachDeleted, by: "kubectl delete pod"},
		},
		{
			name:   "node removed under maxUnavailable 0",
			budget: pdbMaxUnavailable("web", "web", 0),
			takeDown: func(t *testing.T, c *Cluster, web []string, nodeOf func(string) string) {
				must(t, c.RemoveNode(nodeOf(web[0]), "DeleteNodegroup blue"))
			},
			want: want{pods: []string{"0"}, mechanism: BreachNodeRemoved, by: "DeleteNodegroup blue"},
		},
		{
			name:      "minAvailable 1: the node takes both pods, the second breaks the budget",
			onOneNode: true,
			budget:    pdb("web", "web", 1),
			takeDown: func(t *testing.T, c *Cluster, web []string, nodeOf func(string) string) {
				must(t, c.RemoveNode(nodeOf(web[0]), "instance terminated"))
			},
			want: want{pods: []string{"1"}, mechanism: BreachNodeRemoved, by: "instance terminated"},
		},
		{
			name:   "minAvailable 1 spares one pod",
			budget: pdb("web", "web", 1),
			takeDown: func(t *testing.T, c *Cluster, web []string, nodeOf func(string) string) {
				must(t, c.RemoveNode(nodeOf(web[0]), "instance terminated"))
			},
		},
		{
			name:   "a pod evicted, then its node removed, is not a breach",
			budget: pdb("web", "web", 1),
			takeDown: func(t *testing.T, c *Cluster, web []string, nodeOf func(string) string) {
				must(t, c.Evict("default", web[0]))
				must(t, c.RemoveNode(nodeOf(web[0]), "instance terminated"))
			},
		},
		{
			name:   "deleted, then its node removed, counts once",
			budget: pdbMaxUnavailable("web", "web", 0),
			takeDown: func(t *testing.T, c *Cluster, web []string, nodeOf func(string) string) {
				must(t, c.DeletePod("default", web[0], nil, "kubectl delete pod"))
				must(t, c.RemoveNode(nodeOf(web[0]), "instance terminated"))
			},
			want: want{pods: []string{"0"}, mechanism: BreachDeleted, by: "kubectl delete pod"},
		},
		{
			name:     "an unready pod costs the budget nothing",
			notReady: true,
			budget:   pdbMaxUnavailable("web", "web", 0),
			takeDown: func(t *testing.T, c *Cluster, web []string, nodeOf func(string) string) {
				must(t, c.RemoveNode(nodeOf(web[0]), "instance terminated"))
			},
		},
		{
			name:      "a DaemonSet pod its budget can spare goes with its node",
			daemonSet: true,
			budget:    pdb("agent", "agent", 1),
			takeDown: func(t *testing.T, c *Cluster, web []string, nodeOf func(string) string) {
				must(t, c.RemoveNode("n1", "instance terminated"))
			},
		},
		{
			name: "no PDB",
			takeDown: func(t *testing.T, c *Cluster, web []string, nodeOf func(string) string) {
				must(t, c.RemoveNode(nodeOf(web[0]), "instance terminated"))
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eng, c := newCluster(t)
			cpu := "1"
			if tc.onOneNode {
				cpu = "2"
			}
			must(t, c.AddNode(node("n1", "us-west-2a", cpu, "8Gi"), true))
			if !tc.onOneNode {
				must(t, c.AddNode(node("n2", "us-west-2b", cpu, "8Gi"), true))
			}
			if tc.budget != nil {
				must(t, c.Apply(tc.budget))
			}
			if tc.daemonSet {
				must(t, c.Apply(daemonSet("agent")))
			}
			must(t, c.Apply(deployment("default", "web", 2, "800m")))
			if tc.notReady {
				eng.RunUntil(eng.Now()) // bound, still starting
			} else {
				run(eng, time.Minute)
			}
			c.StartTracking()
			var web []string
			nodeOf := map[string]string{}
			for _, p := range c.Pods() {
				if p.Labels["app"] == "web" {
					web = append(web, p.Name)
					nodeOf[p.Name] = p.Spec.NodeName
				}
			}
			if len(web) != 2 || nodeOf[web[0]] == "" {
				t.Fatalf("web pods %v on %v, want two bound", web, nodeOf)
			}
			var hooked []PDBBreach
			c.OnPDBBreach(func(b PDBBreach) { hooked = append(hooked, b) })
			at := eng.Now()
			tc.takeDown(t, c, web, func(p string) string { return nodeOf[p] })

			got := c.PDBBreaches()
			if len(got) != len(tc.want.pods) || len(hooked) != len(got) {
				t.Fatalf("breaches %+v (hook saw %d), want pods %v", got, len(hooked), tc.want.pods)
			}
			for i, b := range got {
				pod := web[tc.want.pods[i][0]-'0']
				if b.Name != pod || b.Namespace != "default" || b.Node != nodeOf[pod] || !b.At.Equal(at) ||
					b.Mechanism != tc.want.mechanism || b.By != tc.want.by || !slices.Equal(b.PDBs, []string{"default/web"}) {
					t.Errorf("breach %+v, want %s on %s at %v by %s (%s) under default/web", b, pod, nodeOf[pod], at, tc.want.by, tc.want.mechanism)
				}
			}
			for _, w := range c.Workloads() {
				if w.Name == "web" && w.PDBViolations != len(tc.want.pods) {
					t.Errorf("web PDBViolations %d, want %d", w.PDBViolations, len(tc.want.pods))
				}
			}
		})
	}
}
