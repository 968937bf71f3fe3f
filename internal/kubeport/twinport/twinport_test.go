package twinport

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// What is particular to the twin's port: virtual time and no hangs. The
// behaviour shared with a real cluster is in conformance_test.go.

// blockedWeb is a twin with one node running web (1 replica, Ready) under
// a PDB that allows no disruption.
func blockedWeb(t *testing.T, opts Options) (*Port, string) {
	t.Helper()
	c := kube.New(sim.New(t0, 1), kube.Options{})
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("10")}
	must(t, c.AddNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Allocatable: alloc, Capacity: alloc}}, true))
	lbls := map[string]string{"app": "web"}
	one := int32(1)
	must(t, c.Apply(&appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: lbls},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbls},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}}}},
	}))
	minAvailable := intstr.FromInt32(1)
	must(t, c.Apply(&policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable, Selector: &metav1.LabelSelector{MatchLabels: lbls}},
	}))
	p := New(c, opts)
	var pod string
	must(t, p.Wait(context.Background(), time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := p.ListPods(ctx, kubeport.PodQuery{Namespace: "default"})
		if err != nil || len(pods) != 1 || !podutils.IsPodReady(&pods[0]) {
			return false, err
		}
		pod = pods[0].Name
		return true, nil
	}))
	return p, pod
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestWaitTimesOutInVirtualTime(t *testing.T) {
	p, _ := blockedWeb(t, Options{PollInterval: 2 * time.Second})
	start := p.Now()
	checks := 0
	err := p.Wait(context.Background(), 10*time.Second, func(context.Context) (bool, error) { checks++; return false, nil })
	if !errors.Is(err, kubeport.ErrWaitTimeout) {
		t.Fatalf("Wait = %v, want ErrWaitTimeout", err)
	}
	if got := p.Now().Sub(start); got != 10*time.Second {
		t.Errorf("virtual time passed = %s, want exactly the 10s timeout", got)
	}
	if checks != 6 { // at 0, 2, 4, 6, 8 and 10 s
		t.Errorf("condition checked %d times, want 6 (every 2s of virtual time, both ends included)", checks)
	}
}

// TestBlockingCallsRefuseToRunInsideTheEngine: a twin event (a controller,
// a hook) that calls Wait or Drain would run the engine from inside itself;
// the port refuses with an error instead of corrupting the run.
func TestBlockingCallsRefuseToRunInsideTheEngine(t *testing.T) {
	p, _ := blockedWeb(t, Options{})
	var inWait, inDrain error
	p.Cluster().Engine().After(time.Second, func() {
		inWait = p.Wait(context.Background(), time.Second, func(context.Context) (bool, error) { return true, nil })
		inDrain = p.Drain(context.Background(), "n1", kubeport.DrainOptions{})
	})
	err := p.Wait(context.Background(), 5*time.Second, func(context.Context) (bool, error) { return false, nil })
	if !errors.Is(err, kubeport.ErrWaitTimeout) {
		t.Fatalf("outer Wait = %v, want ErrWaitTimeout", err)
	}
	for call, err := range map[string]error{"Wait": inWait, "Drain": inDrain} {
		if err == nil || !strings.Contains(err.Error(), "twinport: "+call+" called while the port is already running the twin's engine") {
			t.Errorf("%s from a twin event = %v, want the reentrancy error", call, err)
		}
	}
}

// TestDrainWithoutTimeoutStopsAtDrainLimit: kubectl would wait forever for
// a pod its PDB protects; the twin port gives up after DrainLimit of
// virtual time, naming the limit — an ErrWaitTimeout, so a caller can tell
// it from the drain's own failure — and the pod is untouched.
func TestDrainWithoutTimeoutStopsAtDrainLimit(t *testing.T) {
	p, pod := blockedWeb(t, Options{DrainLimit: 10 * time.Minute})
	start := p.Now()
	err := p.Drain(context.Background(), "n1", kubeport.DrainOptions{})
	if !errors.Is(err, kubeport.ErrWaitTimeout) || !strings.Contains(err.Error(), `drain of node "n1" not finished after 10m0s of virtual time`) {
		t.Fatalf("Drain = %v, want the DrainLimit error", err)
	}
	if got := p.Now().Sub(start); got != 10*time.Minute {
		t.Errorf("virtual time passed = %s, want the 10m DrainLimit", got)
	}
	got, err := p.GetPod(context.Background(), "default", pod)
	if err != nil || got.DeletionTimestamp != nil {
		t.Errorf("blocked pod after the drain = %v, %v; want it untouched", got, err)
	}
}

func TestDrainStopsWhenContextEnds(t *testing.T) {
	p, _ := blockedWeb(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Drain(ctx, "n1", kubeport.DrainOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Drain with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestDeletePodNegativeGraceIsOneSecond(t *testing.T) {
	p, pod := blockedWeb(t, Options{})
	must(t, p.DeletePod(context.Background(), "default", pod, ptr(int64(-5))))
	got, err := p.GetPod(context.Background(), "default", pod)
	if err != nil {
		t.Fatal(err)
	}
	if g := got.DeletionGracePeriodSeconds; g == nil || *g != 1 {
		t.Errorf("deletionGracePeriodSeconds = %v, want 1 as the API server sets for a negative value", g)
	}
}

func TestSetPodReadyRefusesAPodThatDoesNotRun(t *testing.T) {
	p, pod := blockedWeb(t, Options{})
	must(t, p.DeletePod(context.Background(), "default", pod, nil))
	err := p.Cluster().SetPodReady("default", pod, false)
	if err == nil || !strings.Contains(err.Error(), "is terminating") {
		t.Errorf("SetPodReady on a terminating pod = %v, want a refusal naming why", err)
	}
}

// A DELETE through the port (kubectl delete pod) of a pod whose PDB allows
// no disruption is a breach the rehearsal reports: the Eviction API would
// have refused it.
func TestDeletePodUnderAnExhaustedPDBIsABreach(t *testing.T) {
	p, pod := blockedWeb(t, Options{})
	p.Cluster().StartTracking()
	must(t, p.DeletePod(context.Background(), "default", pod, nil))
	b := p.Cluster().PDBBreaches()
	if len(b) != 1 || b[0].Name != pod || b[0].Mechanism != kube.BreachDeleted || b[0].By != "DELETE pods/"+pod+" (no Eviction API)" ||
		len(b[0].PDBs) != 1 || b[0].PDBs[0] != "default/web" {
		t.Errorf("breaches %+v, want %s deleted under default/web", b, pod)
	}
}
