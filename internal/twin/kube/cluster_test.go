package kube

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/ladder-eks/ladder/internal/eviction"
	"github.com/ladder-eks/ladder/internal/sim"
)

var t0 = time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)

func newCluster(t *testing.T) (*sim.Engine, *Cluster) {
	t.Helper()
	eng := sim.New(t0, 1)
	return eng, New(eng, Options{Zones: []string{"us-west-2a", "us-west-2b"}})
}

func node(name, zone string, cpu, mem string, taints ...corev1.Taint) *corev1.Node {
	alloc := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse(mem),
		corev1.ResourcePods:   resource.MustParse("29"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelTopologyZone: zone, corev1.LabelHostname: name}},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status:     corev1.NodeStatus{Capacity: alloc, Allocatable: alloc},
	}
}

func deployment(ns, name string, replicas int32, cpu string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "app:1",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
				}}},
			},
		},
	}
}

func run(eng *sim.Engine, d time.Duration) { eng.Run(eng.Now().Add(d), nil) }

func readyPods(c *Cluster, ns string) int {
	n := 0
	for _, p := range c.Pods() {
		if p.Namespace == ns && podutils.IsPodReady(p) && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

func TestDeploymentPodsScheduleAndBecomeReady(t *testing.T) {
	eng, c := newCluster(t)
	must(t, c.AddNode(node("n1", "us-west-2a", "2", "8Gi"), true))
	must(t, c.Apply(deployment("default", "web", 3, "500m")))
	run(eng, time.Second)
	if got := readyPods(c, "default"); got != 0 {
		t.Fatalf("ready after 1s = %d, want 0 (startup is 5s)", got)
	}
	run(eng, 10*time.Second)
	if got := readyPods(c, "default"); got != 3 {
		t.Fatalf("ready = %d, want 3", got)
	}
	for _, p := range c.Pods() {
		if !strings.HasPrefix(p.Name, "web-") || p.Spec.NodeName != "n1" {
			t.Errorf("pod %s on %q", p.Name, p.Spec.NodeName)
		}
	}
}

func TestUnschedulableMessageReadsLikeKubeScheduler(t *testing.T) {
	eng, c := newCluster(t)
	must(t, c.AddNode(node("n1", "us-west-2a", "1", "8Gi"), true))
	must(t, c.AddNode(node("n2", "us-west-2a", "4", "8Gi", corev1.Taint{Key: "dedicated", Value: "CheckoutApp", Effect: corev1.TaintEffectNoSchedule}), true))
	must(t, c.Apply(deployment("default", "big", 1, "2")))
	fired := 0
	c.OnUnschedulable(func() { fired++ })
	run(eng, time.Second)
	p := c.PendingPods()
	if len(p) != 1 {
		t.Fatalf("pending = %d, want 1", len(p))
	}
	want := "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {dedicated: CheckoutApp}."
	if got := c.Unschedulable(p[0].Namespace, p[0].Name); got != want {
		t.Fatalf("message = %q\nwant      %q", got, want)
	}
	if fired == 0 {
		t.Fatal("unschedulable hook did not fire")
	}
}

func TestEvictionRespectsPDBAndReplacesPod(t *testing.T) {
	eng, c := newCluster(t)
	must(t, c.AddNode(node("n1", "us-west-2a", "4", "8Gi"), true))
	must(t, c.Apply(deployment("default", "web", 2, "100m")))
	minAvail := intstr.FromInt32(2)
	must(t, c.Apply(&policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvail, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}))
	run(eng, time.Minute)
	victim := c.Pods()[0]
	err := c.Evict(victim.Namespace, victim.Name)
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("evict with minAvailable 2 of 2: err = %v, want 429", err)
	}
	if !strings.Contains(err.(*apierrors.StatusError).ErrStatus.Details.Causes[0].Message, "needs 2 healthy pods and has 2 currently") {
		t.Fatalf("cause = %+v", err.(*apierrors.StatusError).ErrStatus.Details)
	}
	must(t, c.Scale("Deployment", "default", "web", 3))
	run(eng, time.Minute)
	if err := c.Evict(victim.Namespace, victim.Name); err != nil {
		t.Fatalf("evict with 3 ready and minAvailable 2: %v", err)
	}
	if c.Pod(victim.Namespace, victim.Name).DeletionTimestamp == nil {
		t.Fatal("evicted pod not terminating")
	}
	run(eng, time.Minute)
	if c.Pod(victim.Namespace, victim.Name) != nil {
		t.Fatal("evicted pod still present after its shutdown")
	}
	if got := readyPods(c, "default"); got != 3 {
		t.Fatalf("ready = %d, want 3 (the ReplicaSet replaced the evicted pod)", got)
	}
}

func TestTwoPDBsGive500(t *testing.T) {
	eng, c := newCluster(t)
	must(t, c.AddNode(node("n1", "us-west-2a", "4", "8Gi"), true))
	must(t, c.Apply(deployment("default", "web", 3, "100m")))
	one := intstr.FromInt32(1)
	for _, name := range []string{"a", "b"} {
		must(t, c.Apply(&policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		}))
	}
	run(eng, time.Minute)
	p := c.Pods()[0]
	err := c.Evict(p.Namespace, p.Name)
	se, ok := err.(*apierrors.StatusError)
	if !ok || se.ErrStatus.Code != 500 {
		t.Fatalf("err = %v, want a 500", err)
	}
}

func TestDaemonSetRunsOnEveryTolerableNode(t *testing.T) {
	eng, c := newCluster(t)
	must(t, c.AddNode(node("n1", "us-west-2a", "4", "8Gi"), true))
	must(t, c.AddNode(node("n2", "us-west-2b", "4", "8Gi", corev1.Taint{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}), true))
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy", Namespace: "kube-system"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-proxy"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"k8s-app": "kube-proxy"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "p", Image: "p"}}},
			},
		},
	}
	must(t, c.Apply(ds))
	run(eng, time.Minute)
	if got := len(c.PodsOnNode("n1")); got != 1 {
		t.Fatalf("n1 pods = %d, want 1", got)
	}
	if got := len(c.PodsOnNode("n2")); got != 0 {
		t.Fatalf("n2 pods = %d, want 0 (untolerated taint)", got)
	}
	must(t, c.AddNode(node("n3", "us-west-2b", "4", "8Gi"), true))
	run(eng, time.Minute)
	if got := len(c.PodsOnNode("n3")); got != 1 {
		t.Fatalf("n3 pods = %d, want 1 (a new node gets a daemon pod)", got)
	}
	// Whether the daemon runs on a node is decided again when the node
	// changes, and when the template does.
	must(t, c.RemoveTaint("n2", "dedicated"))
	run(eng, time.Minute)
	if got := len(c.PodsOnNode("n2")); got != 1 {
		t.Fatalf("n2 pods = %d, want 1 once its taint is gone", got)
	}
	must(t, c.UpdateNode("n3", func(n *corev1.Node) { n.Labels["proxy"] = "yes" }))
	ds = ds.DeepCopy()
	ds.Spec.Template.Spec.NodeSelector = map[string]string{"proxy": "yes"}
	must(t, c.Apply(ds))
	run(eng, 10*time.Minute)
	for n, want := range map[string]int{"n1": 0, "n2": 0, "n3": 1} {
		if got := len(c.PodsOnNode(n)); got != want {
			t.Fatalf("with nodeSelector proxy=yes: %s pods = %d, want %d", n, got, want)
		}
	}
}

func TestVolumeZonePinsPodAndWaitsForDetach(t *testing.T) {
	eng, c := newCluster(t)
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	must(t, c.Apply(&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "gp3"}, Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &wffc}))
	sc := "gp3"
	must(t, c.Apply(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"}, Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &sc}}))
	must(t, c.AddNode(node("a1", "us-west-2a", "4", "8Gi"), true))
	d := deployment("default", "db", 1, "100m")
	d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
	must(t, c.Apply(d))
	run(eng, time.Minute)
	if z := c.PVCZone("default", "data"); z != "us-west-2a" {
		t.Fatalf("volume zone = %q, want us-west-2a (WaitForFirstConsumer binds where the pod lands)", z)
	}
	must(t, c.AddNode(node("b1", "us-west-2b", "4", "8Gi"), true))
	must(t, c.AddNode(node("a2", "us-west-2a", "4", "8Gi"), true))
	must(t, c.Cordon("a1"))
	old := c.PodsOnNode("a1")[0]
	must(t, c.Evict(old.Namespace, old.Name))
	run(eng, 2*time.Second)
	var replacement *corev1.Pod
	for _, p := range c.Pods() {
		if p.Name != old.Name {
			replacement = p
		}
	}
	if replacement == nil || replacement.Spec.NodeName != "a2" {
		t.Fatalf("replacement on %v, want a2 (the only schedulable node in the volume's zone)", replacement)
	}
	// Old pod exits at +5s, the volume detaches at +15s and attaches at +25s,
	// then the container starts (+5s): Ready 30s after the eviction.
	run(eng, 27*time.Second)
	if podutils.IsPodReady(c.Pod(replacement.Namespace, replacement.Name)) {
		t.Fatal("replacement Ready before the volume could move")
	}
	run(eng, 2*time.Second)
	if !podutils.IsPodReady(c.Pod(replacement.Namespace, replacement.Name)) {
		t.Fatal("replacement not Ready 30s after the eviction")
	}
	w := c.Workloads()
	_ = w
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A PDB over pods whose controller cannot be found fails safe, and the
// condition names the first such pod in name order every time: the twin
// computes the status over its unsorted index and words the error from the
// sorted list.
func TestPDBSyncErrorNamesFirstPodInOrder(t *testing.T) {
	eng, c := newCluster(t)
	must(t, c.AddNode(node("n1", "us-west-2a", "4", "8Gi"), true))
	yes := true
	for i := range 8 {
		must(t, c.Apply(&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: "web-" + string(rune('a'+i)), Namespace: "default", Labels: map[string]string{"app": "web"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "gone", UID: "gone-uid", Controller: &yes}},
			},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
		}))
	}
	one := intstr.FromInt32(1)
	must(t, c.Apply(&policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}))
	run(eng, time.Minute)
	for range 20 {
		c.markPDBsDirty(c.pods[key("default", "web-d")])
		pdbs := c.PDBsForPod("default", "web-d")
		if len(pdbs) != 1 {
			t.Fatalf("PDBs of web-d = %d, want 1", len(pdbs))
		}
		st := pdbs[0].Status
		if st.DisruptionsAllowed != 0 || len(st.Conditions) != 1 || st.Conditions[0].Reason != policyv1.SyncFailedReason ||
			st.Conditions[0].Message != `found no controllers for pod "web-a"` {
			t.Fatalf("status = %+v, want fail-safe naming web-a", st)
		}
	}
}

// A PDB sync reads each pod's facts from the pod index (podState) instead of
// the pod object: they must agree with eviction.FactsOf at every step —
// creation (a manifest's status and deletionTimestamp are dropped, as the
// API server drops them), binding, readiness, eviction, deletion, a node
// going NotReady and away, a rollout.
func TestPodFactsMirrorPods(t *testing.T) {
	podLifecycle(t, func(c *Cluster, step string) {
		t.Helper()
		for _, ps := range c.pods {
			got := ps.facts()
			if want := eviction.FactsOf(ps.pod); got != want {
				t.Fatalf("%s: pod %s: index says %+v, the object %+v", step, ps.key, got, want)
			}
		}
	})
}

// A PDB's counters (Ready pods, pods per controller) follow its pods
// through the same lifecycle, so a sync over them gives the status a sync
// over every pod gives (semantics.md §D.2) — for PDBs by minAvailable and
// maxUnavailable, as counts and percentages, one whose pods also have a
// second PDB, and one covering a pod whose controller the twin does not
// know, which is synced pod by pod.
func TestPDBCountersAgreeWithPods(t *testing.T) {
	podLifecycle(t, func(c *Cluster, step string) {
		t.Helper()
		now := c.eng.Now()
		for name, st := range c.pdbs {
			if st.sel == nil || st.unresolved > 0 {
				if st.sel != nil && name != "default/stray" {
					t.Fatalf("%s: PDB %s has %d pods without a known controller", step, name, st.unresolved)
				}
				continue
			}
			got, want := c.syncByCounts(st, now), c.syncByPods(st, now)
			if !apiequality.Semantic.DeepEqual(got.Status, want.Status) || !reflect.DeepEqual(got.RecheckAt, want.RecheckAt) || got.Changed != want.Changed {
				t.Fatalf("%s: PDB %s: counters give %+v (recheck %v), the pods %+v (recheck %v)", step, name, got.Status, got.RecheckAt, want.Status, want.RecheckAt)
			}
			c.sync(st)
		}
		want := int32(0)
		if _, ok := c.pods["default/stray"]; ok {
			want = 1
		}
		if st := c.pdbs["default/stray"]; st.unresolved != want {
			t.Fatalf("%s: the stray pod's PDB counts %d unresolved pods, want %d", step, st.unresolved, want)
		}
	})
}

// TestNodePodsAgreeWithLookups: NodePods hands out a node's pods in
// PodsOnNode's order with the PDBs PDBsOf finds, at every step of a pod
// lifecycle.
func TestNodePodsAgreeWithLookups(t *testing.T) {
	sawPDB := false
	podLifecycle(t, func(c *Cluster, step string) {
		t.Helper()
		for _, n := range c.Nodes() {
			want := c.PodsOnNode(n.Name)
			i := 0
			for p := range c.NodePods(n.Name) {
				if i >= len(want) || p.Pod() != want[i] {
					t.Fatalf("%s: node %s: NodePods' pod %d is %s, PodsOnNode has %v", step, n.Name, i, p.Pod().Name, want)
				}
				pdbs := c.PDBsOf(p.Pod())
				if p.PDBs() != len(pdbs) {
					t.Fatalf("%s: pod %s: %d PDBs, PDBsOf finds %d", step, p.Pod().Name, p.PDBs(), len(pdbs))
				}
				for j := range pdbs {
					if got := p.PDB(j); got != pdbs[j] || got.Status.DisruptionsAllowed != pdbs[j].Status.DisruptionsAllowed {
						t.Fatalf("%s: pod %s: PDB %d is %s, PDBsOf gives %s", step, p.Pod().Name, j, got.Name, pdbs[j].Name)
					}
					sawPDB = true
				}
				i++
			}
			if i != len(want) {
				t.Fatalf("%s: node %s: NodePods yields %d pods, PodsOnNode %d", step, n.Name, i, len(want))
			}
		}
	})
	if !sawPDB {
		t.Fatal("no pod on a node had a PDB")
	}
}

// TestIdleNodesAreTheNodesWithoutActivePods: the idle set, kept as pods
// are bound, evicted, deleted and killed and as nodes join and leave, names
// exactly the nodes whose ActivePods is 0, each once.
func TestIdleNodesAreTheNodesWithoutActivePods(t *testing.T) {
	sawIdle, sawBusy := false, false
	check := func(c *Cluster, step string) {
		t.Helper()
		want := map[string]bool{}
		for _, n := range c.Nodes() {
			if c.ActivePods(n.Name) == 0 {
				want[n.Name] = true
			}
		}
		got := map[string]bool{}
		for name := range c.IdleNodes() {
			if got[name] {
				t.Fatalf("%s: IdleNodes yields %s twice", step, name)
			}
			got[name] = true
		}
		if !maps.Equal(got, want) {
			t.Fatalf("%s: IdleNodes = %v, want the nodes without active pods %v", step, got, want)
		}
		sawIdle = sawIdle || len(want) > 0
		sawBusy = sawBusy || len(want) < len(c.Nodes())
	}
	podLifecycle(t, check)

	// One pod per node, taken away each way a node can lose it.
	eng, c := newCluster(t)
	for _, n := range []string{"n1", "n2", "n3"} {
		must(t, c.AddNode(node(n, "us-west-2a", "1", "8Gi"), true))
	}
	check(c, "nodes added")
	must(t, c.Apply(deployment("default", "web", 3, "800m")))
	run(eng, time.Minute)
	check(c, "one pod per node")
	pods := c.Pods()
	zero := int64(0)
	must(t, c.DeletePod(pods[0].Namespace, pods[0].Name, nil, "kubectl delete pod"))
	check(c, "a pod terminating")
	must(t, c.DeletePod(pods[1].Namespace, pods[1].Name, &zero, "kubectl delete pod"))
	check(c, "a pod deleted at once")
	must(t, c.RemoveNode(pods[2].Spec.NodeName, "test"))
	check(c, "a node removed with its pod")
	run(eng, time.Minute)
	check(c, "replacements bound")
	must(t, c.Scale("Deployment", "default", "web", 0))
	run(eng, time.Minute)
	check(c, "scaled to 0")
	must(t, c.AddNode(node("n4", "us-west-2b", "1", "8Gi"), true))
	check(c, "a node joined")
	if !sawIdle || !sawBusy {
		t.Fatalf("the lifecycle had idle nodes %v, busy nodes %v: want both", sawIdle, sawBusy)
	}
}

// podLifecycle takes a Deployment's pods, a bare pod and a pod owned by an
// unknown controller, under several PDBs, through start, eviction, a node
// going NotReady and away, scaling, a rollout and a deletion, calling check
// after every step.
func podLifecycle(t *testing.T, check func(c *Cluster, step string)) {
	t.Helper()
	eng, c := newCluster(t)
	must(t, c.AddNode(node("n1", "us-west-2a", "4", "8Gi"), true))
	must(t, c.AddNode(node("n2", "us-west-2b", "4", "8Gi"), true))
	must(t, c.Apply(deployment("default", "web", 4, "100m")))
	pdb := func(name string, spec policyv1.PodDisruptionBudgetSpec, app string) {
		t.Helper()
		spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
		must(t, c.Apply(&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: spec}))
	}
	one, two, half := intstr.FromInt32(1), intstr.FromInt32(2), intstr.FromString("50%")
	pdb("web", policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one}, "web")
	pdb("web-min", policyv1.PodDisruptionBudgetSpec{MinAvailable: &two}, "web")
	pdb("web-half", policyv1.PodDisruptionBudgetSpec{MinAvailable: &half}, "web")
	pdb("web-max-half", policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &half}, "web")
	pdb("stray", policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one}, "stray")
	gone := metav1.NewTime(t0)
	ready := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	must(t, c.Apply(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: "default", Labels: map[string]string{"app": "web"}, DeletionTimestamp: &gone},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
		Status:     ready,
	}))
	yes := true
	must(t, c.Apply(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "stray", Namespace: "default", Labels: map[string]string{"app": "stray"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Thing", Name: "thing", UID: "thing-uid", Controller: &yes}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
	}))
	check(c, "created")
	for _, d := range []time.Duration{time.Second, 5 * time.Second, time.Minute} {
		run(eng, d)
		check(c, "starting")
	}
	for _, p := range c.Pods() {
		if p.Name != "bare" {
			_ = c.Evict(p.Namespace, p.Name)
			check(c, "evicted "+p.Name)
		}
	}
	run(eng, 10*time.Second)
	check(c, "after evictions")
	must(t, c.SetNodeReady("n1", false))
	run(eng, time.Minute)
	check(c, "n1 NotReady")
	must(t, c.RemoveNode("n1", "test"))
	check(c, "n1 removed")
	must(t, c.Scale("Deployment", "default", "web", 6))
	check(c, "scaled")
	d := deployment("default", "web", 6, "200m")
	must(t, c.Apply(d))
	for range 150 {
		run(eng, time.Second)
		check(c, "rollout")
	}
	for _, p := range c.Pods() {
		_ = c.Evict(p.Namespace, p.Name)
		check(c, "evicted again "+p.Name)
		run(eng, time.Second)
		check(c, "a second later")
	}
	run(eng, eviction.DeletionTimeout)
	check(c, "disrupted entries expired")
	victim := c.Pods()[0]
	must(t, c.DeletePod(victim.Namespace, victim.Name, nil, "kubectl delete pod"))
	check(c, "deleted "+victim.Name)
	run(eng, time.Minute)
	check(c, "end")
}

// Pending pods are handed out, and scheduled, by priority and then
// creation, whatever order their priorities arrive in.
func TestPendingPodsInSchedulingOrder(t *testing.T) {
	eng, c := newCluster(t)
	for _, v := range []int32{50, 100} {
		must(t, c.Apply(priorityClassOf(fmt.Sprintf("p%d", v), v)))
	}
	pod := func(name string, priority int32) {
		t.Helper()
		class := ""
		if priority != 0 {
			class = fmt.Sprintf("p%d", priority)
		}
		must(t, c.Apply(&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: corev1.PodSpec{PriorityClassName: class, Containers: []corev1.Container{{Name: "app", Image: "app:1",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
		}))
	}
	order := func() string {
		var names []string
		for _, p := range c.PendingPods() {
			names = append(names, p.Name)
		}
		return strings.Join(names, ",")
	}
	want := func(step, w string) {
		t.Helper()
		if got := order(); got != w {
			t.Fatalf("%s: pending %s, want %s", step, got, w)
		}
	}
	pod("a", 0)
	pod("b", 100)
	pod("c", 0)
	want("three pods", "b,a,c")
	pod("d", 0)
	want("a fourth of priority 0", "b,a,c,d")
	pod("e", 50)
	want("one of priority 50", "b,e,a,c,d")
	must(t, c.AddNode(node("n1", "us-west-2a", "2", "8Gi"), true))
	run(eng, time.Minute)
	want("room for two", "a,c,d")
	pod("f", 0)
	want("after binding", "a,c,d,f")
}

// Holding pod starts while a scenario's starting state is built changes
// nothing but the work: pods StartPodsNow starts are Running and Ready at
// once either way, and a pod it does not start (on a node left out) gets
// the kubelet's timers when the hold ends and becomes Ready on time.
func TestHeldPodStartsEndAsUnheld(t *testing.T) {
	build := func(hold bool) []*corev1.Pod {
		eng, c := newCluster(t)
		must(t, c.AddNode(node("n1", "us-west-2a", "4", "8Gi"), true))
		must(t, c.AddNode(node("n2", "us-west-2b", "4", "8Gi"), true))
		if hold {
			c.HoldPodStarts()
		}
		must(t, c.Apply(deployment("default", "web", 4, "100m")))
		eng.Run(eng.Now(), nil)
		c.StartPodsNow("n1", t0.Add(-time.Hour))
		if hold {
			c.ReleasePodStarts()
		}
		eng.Run(eng.Now(), nil)
		if n := len(c.PodsOnNode("n2")); n == 0 {
			t.Fatal("no pod on n2: the test needs one left to the kubelet")
		}
		for _, p := range c.PodsOnNode("n2") {
			if podutils.IsPodReady(p) {
				t.Fatalf("hold %v: %s Ready before its startup time", hold, p.Name)
			}
		}
		run(eng, time.Minute)
		return c.Pods()
	}
	held, unheld := build(true), build(false)
	if !apiequality.Semantic.DeepEqual(held, unheld) {
		t.Fatalf("held starts end differently:\nheld   %+v\nunheld %+v", held, unheld)
	}
	for _, p := range held {
		if !podutils.IsPodReady(p) {
			t.Fatalf("%s on %s is not Ready a minute on", p.Name, p.Spec.NodeName)
		}
	}
}
