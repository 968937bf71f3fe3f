package kube

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ladder-eks/ladder/internal/drain"
)

// reconstructDrops counts, from a PDB's samples alone, the pods taken
// below its floor: between samples a and b, max(0, (a.Healthy − b.Healthy)
// − max(0, a.Allowed)) (PDBHistory's doc).
func reconstructDrops(h PDBHistory) int {
	n := 0
	for i := 1; i < len(h.Samples); i++ {
		a, b := h.Samples[i-1], h.Samples[i]
		n += max(0, int(a.Healthy-b.Healthy)-max(0, int(a.Allowed)))
	}
	return n
}

func checkHistories(t *testing.T, c *Cluster) {
	t.Helper()
	for _, h := range c.PDBHistories() {
		if got, want := len(h.Drops), reconstructDrops(h); got != want {
			t.Fatalf("PDB %s/%s: %d drops recorded, its samples show %d: %+v", h.Namespace, h.Name, got, want, h.Samples)
		}
	}
}

func sts(name, app string, replicas int32, cpu string) *appsv1.StatefulSet {
	s := statefulSet(name, replicas)
	s.Spec.Selector.MatchLabels = map[string]string{"sts": name}
	s.Spec.Template.Labels = map[string]string{"sts": name, "app": app}
	s.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	return s
}

// A PDB whose selector spans several controllers keeps their scale in its
// expected count while a node takes their pods away (semantics.md §D.2:
// expectedPods is the sum of the controllers' scale; the controllers'
// replacements are listed the moment they are created): six pods under
// maxUnavailable 4 lose the same two pods below the floor whether they
// are one StatefulSet's or two's. Before, the second StatefulSet's scale
// left the count with its last pod and the split layout lost none.
func TestPDBFloorSpansControllers(t *testing.T) {
	for _, split := range []bool{false, true} {
		t.Run(fmt.Sprintf("split=%v", split), func(t *testing.T) {
			eng, c := newCluster(t)
			must(t, c.AddNode(node("n1", "us-west-2a", "8", "32Gi"), true))
			must(t, c.Apply(pdbMaxUnavailable("db", "db", 4)))
			if split {
				must(t, c.Apply(sts("db-a", "db", 3, "100m")))
				must(t, c.Apply(sts("db-b", "db", 3, "100m")))
			} else {
				must(t, c.Apply(sts("db-a", "db", 6, "100m")))
			}
			run(eng, 10*time.Minute)
			if n := readyPods(c, "default"); n != 6 {
				t.Fatalf("%d Ready pods, want 6", n)
			}
			c.StartTracking()
			must(t, c.RemoveNode("n1", "instance terminated"))
			run(eng, time.Second)
			if got := len(c.PDBBreaches()); got != 2 {
				t.Fatalf("%d breaches, want 2 (six pods under maxUnavailable 4): %+v", got, c.PDBBreaches())
			}
			h := c.PDBHistories()[0]
			if len(h.Drops) != 2 || h.Drops[0].Cause != DropNodeRemoved {
				t.Fatalf("drops %+v, want two node-removed", h.Drops)
			}
			for _, s := range h.Samples {
				if s.Expected != 6 || s.Desired != 2 {
					t.Fatalf("sample %+v: the floor moved while the node took the pods (want expected 6, desired 2)", s)
				}
			}
			checkHistories(t, c)
		})
	}
}

// A StatefulSet creates a pod's replacement only once the pod is gone —
// evicted or deleted, not only lost with its node — and a PDB keeps the
// StatefulSet's scale in expectedPods meanwhile, as the disruption
// controller lists the replacement the moment it exists. db-a's one pod
// evicted, db-b's three on n2 under maxUnavailable 2 spanning both: when
// n2 goes away at the instant db-a-0 is gone, the floor is still 4 − 2, so
// two of db-b's pods go below it. Before, db-a's scale left expectedPods
// with its pod, the floor fell to 1 and only one was counted.
func TestPDBKeepsStatefulSetScaleWhileItReplacesAPod(t *testing.T) {
	eng, c := newCluster(t)
	must(t, c.AddNode(node("n1", "us-west-2a", "8", "32Gi"), true))
	must(t, c.AddNode(node("n2", "us-west-2b", "8", "32Gi"), true))
	must(t, c.Apply(pdbMaxUnavailable("db", "db", 2)))
	a, b := sts("db-a", "db", 1, "100m"), sts("db-b", "db", 3, "100m")
	a.Spec.Template.Spec.NodeSelector = map[string]string{corev1.LabelHostname: "n1"}
	b.Spec.Template.Spec.NodeSelector = map[string]string{corev1.LabelHostname: "n2"}
	must(t, c.Apply(a))
	must(t, c.Apply(b))
	run(eng, 10*time.Minute)
	if n := readyPods(c, "default"); n != 4 {
		t.Fatalf("%d Ready pods, want 4", n)
	}
	c.StartTracking()
	must(t, c.Evict("default", "db-a-0"))
	// n2 goes at the instant db-a-0 is removed, before its StatefulSet
	// creates the replacement (an event queued by the removal).
	p := c.pods[string(c.podKey("default", "db-a-0"))].pod
	exit := min(c.opts.Timings.PodShutdown, time.Duration(*p.DeletionGracePeriodSeconds)*time.Second)
	eng.After(exit, func() { must(t, c.RemoveNode("n2", "instance terminated")) })
	run(eng, 10*time.Minute)
	if got := len(c.PDBBreaches()); got != 2 {
		t.Fatalf("%d breaches, want 2 (db-a-0 being replaced, 4 − 2 healthy wanted, n2 takes 3): %+v", got, c.PDBBreaches())
	}
	h := c.PDBHistories()[0]
	for _, s := range h.Samples {
		if s.Expected != 4 || s.Desired != 2 {
			t.Fatalf("sample %+v: the floor moved while db-a replaced its pod (want expected 4, desired 2): %+v", s, h.Samples)
		}
	}
	checkHistories(t, c)
}

// A DaemonSet has no scale subresource: a PDB that needs a scale
// (maxUnavailable, a percentage minAvailable) and selects a DaemonSet's
// pods fails its sync and fails safe, allowing no disruption, so every
// eviction of its pods — a DaemonSet's or another controller's under the
// same selector — is refused (k8s.io/kubernetes
// pkg/controller/disruption getScaleController, failSafe; §D.2). An
// integer minAvailable needs no scale and works.
func TestDaemonSetPDBFailsSafe(t *testing.T) {
	for _, tc := range []struct {
		name   string
		budget *policyv1.PodDisruptionBudget
		allow  bool
	}{
		{"maxUnavailable 1", pdbMaxUnavailable("agent", "agent", 1), false},
		{"minAvailable 50%", pdbPercent("agent", "agent", "50%"), false},
		{"minAvailable 1", pdb("agent", "agent", 1), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng, c := newCluster(t)
			must(t, c.AddNode(node("n1", "us-west-2a", "2", "8Gi"), true))
			must(t, c.AddNode(node("n2", "us-west-2b", "2", "8Gi"), true))
			must(t, c.Apply(tc.budget))
			must(t, c.Apply(daemonSet("agent")))
			run(eng, time.Minute)
			pods := c.PodsOnNode("n1")
			if len(pods) != 1 {
				t.Fatalf("pods on n1: %d, want the agent", len(pods))
			}
			st := c.PDBs("default")[0].Status
			err := c.Evict("default", pods[0].Name)
			if tc.allow {
				if err != nil || st.DisruptionsAllowed != 1 {
					t.Fatalf("allowed %d, eviction %v: want 1 and granted", st.DisruptionsAllowed, err)
				}
				return
			}
			cond := metav1.Condition{}
			if len(st.Conditions) == 1 {
				cond = st.Conditions[0]
			}
			if st.DisruptionsAllowed != 0 || cond.Reason != policyv1.SyncFailedReason || cond.Message != "daemonsets.apps does not implement the scale subresource" {
				t.Fatalf("status %+v, want fail-safe with the controller's error", st)
			}
			if !apierrors.IsTooManyRequests(err) {
				t.Fatalf("eviction: %v, want 429", err)
			}
		})
	}
}

func pdbPercent(name, app, minAvailable string) *policyv1.PodDisruptionBudget {
	p := pdb(name, app, 0)
	v := intstr.FromString(minAvailable)
	p.Spec.MinAvailable = &v
	return p
}

// A drain of a Deployment's pod whose PDB also selects a DaemonSet's pods
// never finishes: the budget fails safe (TestDaemonSetPDBFailsSafe), so
// kubectl drain --ignore-daemonsets retries the 429 forever.
func TestDrainBlockedByPDBSpanningADaemonSet(t *testing.T) {
	eng, c := newCluster(t)
	must(t, c.AddNode(node("n1", "us-west-2a", "2", "8Gi"), true))
	must(t, c.AddNode(node("n2", "us-west-2b", "2", "8Gi"), true))
	budget := pdbMaxUnavailable("shared", "", 1)
	budget.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "edge"}}
	must(t, c.Apply(budget))
	ds := daemonSet("agent")
	ds.Spec.Template.Labels["tier"] = "edge"
	must(t, c.Apply(ds))
	d := deployment("default", "web", 2, "100m")
	d.Spec.Template.Labels["tier"] = "edge"
	must(t, c.Apply(d))
	run(eng, time.Minute)
	target := ""
	for _, p := range c.Pods() {
		if p.Labels["app"] == "web" {
			target = p.Spec.NodeName
		}
	}
	done, _ := drainFor(t, c, target, DrainOptions{Options: drain.Options{IgnoreAllDaemonSets: true}, Timeout: 10 * time.Minute})
	run(eng, 5*time.Minute)
	if *done {
		t.Fatal("the drain finished: the budget fails safe and allows no eviction")
	}
	blocked := false
	for _, b := range c.DrainBlocks() {
		blocked = blocked || (b.PDB == "default/shared" && b.Outcome == "blocked")
	}
	if !blocked {
		t.Fatalf("drain blocks %+v, want the web pod blocked by default/shared", c.DrainBlocks())
	}
}

// A rollout deletes pods whatever their PDB says: a Deployment of two
// under minAvailable 2 rolled with maxUnavailable 1 and no surge drops one
// pod below the floor, recorded as a rollout drop by the Deployment and not
// as a breach (no one bypassed the Eviction API).
func TestRolloutDropsBelowTheFloor(t *testing.T) {
	eng, c := newCluster(t)
	must(t, c.AddNode(node("n1", "us-west-2a", "4", "8Gi"), true))
	must(t, c.Apply(pdb("web", "web", 2)))
	d := rolling(deployment("default", "web", 2, "100m"), "0", "1")
	must(t, c.Apply(d))
	run(eng, time.Minute)
	c.StartTracking()
	must(t, c.Apply(withImage(d, "app:2")))
	run(eng, 10*time.Minute)
	h := c.PDBHistories()[0]
	if len(h.Drops) == 0 {
		t.Fatal("no drop: the rollout took web below its floor of 2")
	}
	for _, d := range h.Drops {
		if d.Cause != DropRollout || d.By != "Deployment default/web" || d.Workload != "Deployment/web" {
			t.Fatalf("drop %+v, want a rollout by Deployment default/web", d)
		}
	}
	if len(c.PDBBreaches()) != 0 {
		t.Fatalf("breaches %+v, want none: a rollout is not an eviction bypassed", c.PDBBreaches())
	}
	checkHistories(t, c)
}

// Through a whole pod lifecycle — evictions, deletions, a node going away,
// rollouts — the drops each PDB records are the ones its samples show.
func TestPDBHistoryAgreesWithItsSamples(t *testing.T) {
	saw := 0
	podLifecycle(t, func(c *Cluster, step string) {
		t.Helper()
		if !c.tracking {
			c.StartTracking()
		}
		checkHistories(t, c)
		for _, h := range c.PDBHistories() {
			saw = max(saw, len(h.Samples))
		}
	})
	if saw < 3 {
		t.Fatalf("the lifecycle gave at most %d samples to a PDB: it tests nothing", saw)
	}
}
