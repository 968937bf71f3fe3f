package kube

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ladder-eks/ladder/internal/drain"
)

func pdb(name, app string, minAvailable int32) *policyv1.PodDisruptionBudget {
	v := intstr.FromInt32(minAvailable)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &v, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
	}
}

func drainFor(t *testing.T, c *Cluster, node string, opts DrainOptions) (*bool, *error) {
	t.Helper()
	done := false
	var result error
	if err := c.Drain(node, opts, func(err error) { done, result = true, err }); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	return &done, &result
}

// TestDrainRetries429EveryFiveSeconds: kubectl drain retries an eviction a
// PDB refuses every 5 s (semantics.md §D.3) and finishes once the budget
// allows it; the blocked pod is recorded with how long it waited.
func TestDrainRetries429EveryFiveSeconds(t *testing.T) {
	eng, c := newCluster(t)
	must(t, c.AddNode(node("n1", "us-west-2a", "4", "8Gi"), true))
	must(t, c.AddNode(node("n2", "us-west-2a", "4", "8Gi"), true))
	must(t, c.Apply(deployment("default", "web", 2, "100m")))
	must(t, c.Apply(pdb("web", "web", 2)))
	run(eng, time.Minute)
	var target string
	for _, p := range c.Pods() {
		target = p.Spec.NodeName
	}
	start := eng.Now()
	done, result := drainFor(t, c, target, DrainOptions{})
	run(eng, 30*time.Second)
	if *done {
		t.Fatalf("drain finished while the PDB (minAvailable 2 of 2) refuses every eviction: %v", *result)
	}
	// A third replica lets the PDB allow one disruption.
	must(t, c.Scale("Deployment", "default", "web", 3))
	run(eng, 2*time.Minute)
	if !*done || *result != nil {
		t.Fatalf("drain done=%v err=%v, want success once the PDB allows it", *done, *result)
	}
	blocks := c.DrainBlocks()
	if len(blocks) == 0 {
		t.Fatal("no blocked eviction recorded")
	}
	b := blocks[0]
	if b.Outcome != "evicted" || b.PDB != "default/web" || !strings.Contains(b.Message, "needs 2 healthy pods") {
		t.Fatalf("block %+v", b)
	}
	// The scale-up happened at +30s; the pod is Ready 5s later; the retry
	// cadence is 5s, so the eviction succeeds by +40s.
	if waited := b.Until.Sub(b.Since); waited < 30*time.Second || waited > 41*time.Second || !b.Since.Equal(start) {
		t.Fatalf("blocked from +%s for %s, want from +0s for 30–40s", b.Since.Sub(start), waited)
	}
	if !c.Node(target).Spec.Unschedulable {
		t.Fatal("drained node not cordoned")
	}
}

// TestDrainBlockedPodDeleted: a pod whose eviction a PDB refuses and that
// is then deleted without the Eviction API is recorded as deleted, not
// evicted; the drain finishes, as kubectl's does once the pod is gone.
func TestDrainBlockedPodDeleted(t *testing.T) {
	eng, c := newCluster(t)
	must(t, c.AddNode(node("n1", "us-west-2a", "4", "8Gi"), true))
	must(t, c.Apply(deployment("default", "web", 1, "100m")))
	must(t, c.Apply(pdb("web", "web", 1)))
	run(eng, time.Minute)
	pod := c.Pods()[0]
	done, result := drainFor(t, c, "n1", DrainOptions{})
	run(eng, 12*time.Second)
	must(t, c.DeletePod(pod.Namespace, pod.Name, nil, "kubectl delete pod"))
	run(eng, 2*time.Minute)
	if !*done || *result != nil {
		t.Fatalf("drain done=%v err=%v, want it finished once the pod is gone", *done, *result)
	}
	blocks := c.DrainBlocks()
	if len(blocks) != 1 || blocks[0].Outcome != "deleted" {
		t.Fatalf("blocks %+v, want one with outcome deleted", blocks)
	}
}

// TestDrainFails: errors kubectl drain stops on.
func TestDrainFails(t *testing.T) {
	cases := []struct {
		name  string
		setup func(c *Cluster)
		opts  DrainOptions
		want  string // in the error; "" = succeeds
	}{
		{
			name: "a pod with two PDBs gets a 500, which is not retried",
			setup: func(c *Cluster) {
				must(t, c.Apply(deployment("default", "web", 3, "100m")))
				must(t, c.Apply(pdb("a", "web", 1)))
				must(t, c.Apply(pdb("b", "web", 1)))
			},
			want: "This pod has more than one PodDisruptionBudget",
		},
		{
			name: "a DaemonSet pod without --ignore-daemonsets",
			setup: func(c *Cluster) {
				must(t, c.Apply(daemonSet("agent")))
			},
			want: "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)",
		},
		{
			name:  "a DaemonSet pod with --ignore-daemonsets",
			setup: func(c *Cluster) { must(t, c.Apply(daemonSet("agent"))) },
			opts:  DrainOptions{Options: drain.Options{IgnoreAllDaemonSets: true}},
		},
		{
			name: "a bare pod without --force",
			setup: func(c *Cluster) {
				must(t, c.Apply(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "lonely", Namespace: "default"},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "c"}}}}))
			},
			want: "cannot delete Pods that declare no controller (use --force to override)",
		},
		{
			name: "an exhausted PDB past --timeout",
			setup: func(c *Cluster) {
				must(t, c.Apply(deployment("default", "web", 1, "100m")))
				must(t, c.Apply(pdb("web", "web", 1)))
			},
			opts: DrainOptions{Timeout: 30 * time.Second},
			want: "global timeout reached: 30s",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eng, c := newCluster(t)
			must(t, c.AddNode(node("n1", "us-west-2a", "4", "8Gi"), true))
			tc.setup(c)
			run(eng, time.Minute)
			var result error
			done := false
			err := c.Drain("n1", tc.opts, func(e error) { done, result = true, e })
			if err == nil {
				run(eng, 2*time.Minute)
				if !done {
					t.Fatal("drain neither finished nor failed")
				}
				err = result
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("err = %v, want success", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func daemonSet(name string) *appsv1.DaemonSet {
	labels := map[string]string{"app": name}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "c"}}},
			},
		},
	}
}
