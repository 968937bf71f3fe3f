package worker_test

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/ec2"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/twintest"
	"github.com/ladder-eks/ladder/internal/twin/worker"
)

var t0 = time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)

// timings are all distinct so a test can tell which one it measured.
var timings = worker.Timings{Launch: 2 * time.Second, Register: 30 * time.Second, Ready: 10 * time.Second, Terminate: 45 * time.Second}

func setup(t *testing.T) (*sim.Engine, *kube.Cluster, *ec2.Cloud, *worker.Pool, worker.Spec) {
	t.Helper()
	base := twintest.New(t0, 1, "us-west-2a", "us-west-2b")
	eng, kc, cloud := base.Eng, base.Kube, base.Cloud
	it, ok := catalog.LookupInstanceType("m5.large")
	if !ok {
		t.Fatal("m5.large not in the catalog")
	}
	ami, ok := catalog.LookupAMI("ami-0f676a166352f02ab") // al2023 1.30, the seed's
	if !ok {
		t.Fatal("seed AMI not in the catalog")
	}
	spec := worker.Spec{Zone: "us-west-2b", InstanceType: it, AMI: ami,
		Labels: map[string]string{"eks.amazonaws.com/nodegroup": "initial"},
		Taints: []corev1.Taint{{Key: "dedicated", Value: "OrdersApp", Effect: corev1.TaintEffectNoSchedule}}}
	return eng, kc, cloud, worker.New(eng, kc, cloud, timings), spec
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// TestLaunch: a launched instance registers its Node NotReady after the
// launch and boot latencies (2 s + 30 s), turns Ready 10 s later, and the
// Node carries the instance's name, zone, provider id, the AMI's kubelet
// version, the group's labels and taints and the well-known labels.
func TestLaunch(t *testing.T) {
	eng, kc, _, pool, spec := setup(t)
	var registeredAt, readyAt time.Duration
	inst, err := pool.Launch(spec, func(string) { registeredAt = eng.Elapsed() }, func(string) { readyAt = eng.Elapsed() })
	if err != nil {
		t.Fatal(err)
	}
	eng.RunUntil(t0.Add(31 * time.Second))
	if kc.Node(inst.Hostname) != nil {
		t.Fatalf("node registered before 32 s")
	}
	eng.RunUntil(t0.Add(time.Hour))
	if registeredAt != 32*time.Second || readyAt != 42*time.Second {
		t.Errorf("registered at %v, Ready at %v; want 32s and 42s", registeredAt, readyAt)
	}
	n := kc.Node(inst.Hostname)
	if n == nil || !ready(n) {
		t.Fatalf("node %s missing or not Ready: %+v", inst.Hostname, n)
	}
	want := map[string]string{
		corev1.LabelTopologyZone:       "us-west-2b",
		corev1.LabelInstanceTypeStable: "m5.large",
		corev1.LabelHostname:           inst.Hostname,
		"eks.amazonaws.com/nodegroup":  "initial",
	}
	for k, v := range want {
		if n.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, n.Labels[k], v)
		}
	}
	if n.Spec.ProviderID != inst.ProviderID || n.Status.NodeInfo.KubeletVersion != "v1.30.14-eks-f69f56f" ||
		n.Annotations[worker.ImageIDAnnotation] != "ami-0f676a166352f02ab" || len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != "dedicated" {
		t.Errorf("node = provider %s kubelet %s image %s taints %v", n.Spec.ProviderID, n.Status.NodeInfo.KubeletVersion, n.Annotations[worker.ImageIDAnnotation], n.Spec.Taints)
	}
}

// TestTerminate: the kubelet stops at once (NotReady); after the
// terminate latency the instance is gone, the Node is deleted and a Ready
// pod that still ran there is recorded as killed, not evicted.
func TestTerminate(t *testing.T) {
	eng, kc, cloud, pool, spec := setup(t)
	spec.Taints = nil
	n, err := pool.Existing(spec, t0.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !ready(n) || !n.CreationTimestamp.Time.Equal(t0.Add(-time.Hour)) {
		t.Fatalf("existing node not Ready or wrong age: %+v", n.ObjectMeta)
	}
	replicas := int32(1)
	labels := map[string]string{"app": "web"}
	if err := kc.Apply(&appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "web", Image: "nginx", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}}},
	}); err != nil {
		t.Fatal(err)
	}
	eng.RunUntil(t0.Add(5 * time.Minute))
	kc.StartTracking()
	if got := kc.ActivePods(n.Name); got != 1 {
		t.Fatalf("%d pods on the node, want 1", got)
	}
	inst, _ := pool.Instance(n.Name)
	var doneAt time.Duration
	if err := pool.Terminate(n.Name, "terminated by test", func() { doneAt = eng.Elapsed() }); err != nil {
		t.Fatal(err)
	}
	if ready(kc.Node(n.Name)) {
		t.Errorf("node still Ready right after TerminateInstances")
	}
	eng.RunUntil(t0.Add(5*time.Minute + 44*time.Second))
	if kc.Node(n.Name) == nil {
		t.Fatalf("node deleted before the 45 s terminate latency")
	}
	eng.RunUntil(t0.Add(5*time.Minute + 45*time.Second))
	if kc.Node(n.Name) != nil || doneAt != 5*time.Minute+45*time.Second {
		t.Errorf("node still there or done at %v; want gone and done at 5m45s", doneAt)
	}
	for _, id := range cloud.Running() {
		if id == inst.ID {
			t.Errorf("instance %s still running", id)
		}
	}
	if k := kc.Killed(); len(k) != 1 || k[0].Node != n.Name {
		t.Errorf("Killed() = %+v, want the web pod on %s", k, n.Name)
	}
	if err := pool.Terminate(n.Name, "again", nil); err == nil {
		t.Errorf("terminating a terminated node succeeded")
	}
}

// TestTerminateBeforeReady: an instance terminated after its Node registers
// but before it turns Ready never turns Ready.
func TestTerminateBeforeReady(t *testing.T) {
	eng, kc, _, pool, spec := setup(t)
	readyCalled := false
	inst, err := pool.Launch(spec, nil, func(string) { readyCalled = true })
	if err != nil {
		t.Fatal(err)
	}
	eng.RunUntil(t0.Add(33 * time.Second)) // registered at 32 s, Ready due at 42 s
	if err := pool.Terminate(inst.Hostname, "test", nil); err != nil {
		t.Fatal(err)
	}
	eng.RunUntil(t0.Add(43 * time.Second))
	if n := kc.Node(inst.Hostname); n == nil || ready(n) || readyCalled {
		t.Errorf("node %v Ready after termination (ready callback %v)", n, readyCalled)
	}
}
