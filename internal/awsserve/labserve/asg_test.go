package labserve

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ladder-eks/ladder/internal/drain"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// NTH's taint goes on once, however often NTH retries the node.
func TestAddTaintOnce(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-2-2.ec2.internal"}}
	k := NewKube(context.Background(), fake.NewSimpleClientset(node), kube.Options{})
	taint := corev1.Taint{Key: "aws-node-termination-handler/asg-lifecycle-termination", Effect: corev1.TaintEffectNoSchedule}
	for range 2 {
		if err := k.AddTaint(node.Name, taint); err != nil {
			t.Fatal(err)
		}
	}
	if got := k.Node(node.Name).Spec.Taints; len(got) != 1 || got[0] != taint {
		t.Errorf("taints %v, want [%v]", got, taint)
	}
}

// Drain runs kubectl's drain in the background: it cordons the node and
// tells done how it ended while holding the endpoints' lock; a node the
// API server lacks is refused at once, as NTH's drain fails with NotFound.
func TestDrainReportsUnderTheLock(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-2-2.ec2.internal"}}
	k := NewKube(context.Background(), fake.NewSimpleClientset(node), kube.Options{})
	held := false
	k.lock = func(fn func()) {
		held = true
		fn()
		held = false
	}
	k.timeScale = 60
	ended := make(chan bool, 1)
	opts := kube.DrainOptions{Options: drain.Options{Force: true, IgnoreAllDaemonSets: true, DeleteEmptyDirData: true}, Timeout: 120 * time.Second}
	if err := k.Drain(node.Name, opts, func(err error) {
		if err != nil {
			t.Errorf("drain of an empty node: %v", err)
		}
		ended <- held
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case locked := <-ended:
		if !locked {
			t.Error("done ran without the endpoints' lock")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the drain never reported")
	}
	if !k.Node(node.Name).Spec.Unschedulable {
		t.Error("the drained node is not cordoned")
	}
	if err := k.Drain("ip-10-0-9-9.ec2.internal", opts, func(error) { t.Error("done ran for a node that does not exist") }); err == nil {
		t.Error("Drain of a missing node = nil, want NotFound")
	}
	if got := k.wall(opts.Timeout); got != 2*time.Second {
		t.Errorf("NTH's 120 s timeout at 60x is %s of wall time, want 2s", got)
	}
}
