package karpenter

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/twin/twintest"
)

// TestNodeIndexFollowsTheCluster: the capacity a simulation reads through
// the twin's node index is, after every change the cluster reports, what a
// fresh read of the cluster gives: nodes joining and leaving (the order),
// the disrupted taint coming and going, a node replaced by a new object of
// the same name.
func TestNodeIndexFollowsTheCluster(t *testing.T) {
	base := twintest.New(time.Date(2026, 3, 30, 9, 0, 0, 0, time.UTC), 1, "us-west-2a")
	eng, kc := base.Eng, base.Kube
	k := New(eng, kc, base.Cloud, Options{ControlPlaneVersion: func() string { return "1.30" }})
	node := func(name, label string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"v": label}},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"), corev1.ResourcePods: resource.MustParse("110")}}}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string, want ...string) {
		t.Helper()
		got := k.existingCapacity(nil)
		if len(got) != len(want) {
			t.Fatalf("%s: %d nodes of capacity, want %v", when, len(got), want)
		}
		for i, n := range got {
			if n.name != want[i] || n.labels != kc.Node(want[i]) {
				t.Fatalf("%s: capacity[%d] = %s (%p), want %s (%p)", when, i, n.name, n.labels, want[i], kc.Node(want[i]))
			}
		}
	}
	must(kc.AddNode(node("n1", "a"), true))
	must(kc.AddNode(node("n2", "a"), true))
	check("two nodes", "n1", "n2")
	must(kc.AddTaint("n1", corev1.Taint{Key: DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule}))
	check("n1 disrupted", "n2")
	must(kc.AddNode(node("n0", "a"), true))
	check("n0 joined", "n0", "n2")
	must(kc.RemoveTaint("n1", DisruptedTaintKey))
	check("n1 back", "n0", "n1", "n2")
	must(kc.RemoveNode("n2", "test"))
	check("n2 left", "n0", "n1")
	must(kc.RemoveNode("n1", "test"))
	must(kc.AddNode(node("n1", "b"), true))
	check("n1 replaced", "n0", "n1")
	if got := k.existingCapacity(nil)[1].labels.Labels["v"]; got != "b" {
		t.Fatalf("replaced n1 reads label v=%q, want the new object's b", got)
	}
}
