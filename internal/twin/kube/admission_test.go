package kube

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubectl/pkg/util/podutils"
)

const fargateScheduler = "fargate-scheduler"

func barePod(name, scheduler string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": name}},
		Spec:       corev1.PodSpec{SchedulerName: scheduler, Containers: []corev1.Container{{Name: "c", Image: "c"}}},
	}
}

// TestExternalSchedulerPodsWaitForBind: the default scheduler leaves a pod
// for another scheduler Pending — not unschedulable — until Bind, after
// which it starts as any bound pod does; Bind refuses what the binding
// subresource refuses.
func TestExternalSchedulerPodsWaitForBind(t *testing.T) {
	eng, c := newCluster(t)
	must(t, c.AddNode(node("n1", "us-west-2a", "4", "8Gi"), true))
	unschedulable := 0
	c.OnUnschedulable(func() { unschedulable++ })
	must(t, c.Apply(barePod("ext", fargateScheduler)))
	must(t, c.Apply(barePod("def", "")))
	run(eng, time.Minute)
	if p := c.Pod("default", "def"); p.Spec.NodeName != "n1" || p.Spec.SchedulerName != corev1.DefaultSchedulerName || !podutils.IsPodReady(p) {
		t.Fatalf("default-scheduler pod: node %q, scheduler %q", p.Spec.NodeName, p.Spec.SchedulerName)
	}
	ext := c.Pod("default", "ext")
	if ext.Spec.NodeName != "" || len(c.PendingPods()) != 1 || c.Unschedulable("default", "ext") != "" || unschedulable != 0 || c.Quiet() {
		t.Fatalf("external pod: node %q, %d pending, unschedulable %q (hook fired %d)", ext.Spec.NodeName, len(c.PendingPods()), c.Unschedulable("default", "ext"), unschedulable)
	}

	for _, tc := range []struct {
		pod, node string
		check     func(error) bool
		want      string
	}{
		{"missing", "n1", apierrors.IsNotFound, `pods "missing" not found`},
		{"ext", "n9", apierrors.IsNotFound, `nodes "n9" not found`},
		{"def", "n1", apierrors.IsConflict, `Operation cannot be fulfilled on pods/binding "def": pod def is already assigned to node "n1"`},
	} {
		if err := c.Bind("default", tc.pod, tc.node); !tc.check(err) || err.Error() != tc.want {
			t.Errorf("Bind(%s, %s) = %v, want %q", tc.pod, tc.node, err, tc.want)
		}
	}

	must(t, c.AddNode(node("fargate-ip-10-0-0-1", "us-west-2a", "1", "2Gi"), true))
	run(eng, time.Minute)
	if c.Pod("default", "ext").Spec.NodeName != "" {
		t.Fatal("the default scheduler bound the external pod")
	}
	must(t, c.Bind("default", "ext", "fargate-ip-10-0-0-1"))
	bound := eng.Now()
	advance(eng, 4*time.Second)
	if podutils.IsPodReady(ext) {
		t.Fatal("bound pod Ready before its startup time")
	}
	advance(eng, time.Second)
	if !podutils.IsPodReady(ext) || ext.Spec.NodeName != "fargate-ip-10-0-0-1" || eng.Now().Sub(bound) != 5*time.Second || !c.Quiet() {
		t.Fatalf("after Bind: ready %v on %q", podutils.IsPodReady(ext), ext.Spec.NodeName)
	}
	if got := c.PodsOnNode("fargate-ip-10-0-0-1"); len(got) != 1 {
		t.Fatalf("pods on the Fargate node: %d", len(got))
	}
}

// TestOnAdmitCanChooseTheScheduler: a mutating admission hook sees every
// pod the cluster creates, controllers' pods included, after the
// schedulerName default and before scheduling — as EKS's Fargate webhook
// does for pods matching a Fargate profile.
func TestOnAdmitCanChooseTheScheduler(t *testing.T) {
	eng, c := newCluster(t)
	must(t, c.AddNode(node("n1", "us-west-2a", "4", "8Gi"), true))
	var seen []string
	c.OnAdmit(func(p *corev1.Pod) bool {
		seen = append(seen, p.Spec.SchedulerName)
		if p.UID != "" || c.Pod(p.Namespace, p.Name) != nil {
			t.Errorf("pod %s admitted after it was stored", p.Name)
		}
		if p.Labels["app"] == "web" {
			p.Spec.SchedulerName = fargateScheduler
			p.Labels["eks.amazonaws.com/fargate-profile"] = "fp-default"
			return true
		}
		return false
	})
	must(t, c.Apply(deployment("default", "web", 2, "100m")))
	must(t, c.Apply(deployment("default", "api", 1, "100m")))
	run(eng, time.Minute)
	if len(seen) != 3 || seen[0] != corev1.DefaultSchedulerName {
		t.Fatalf("admission saw %v, want 3 pods defaulted to default-scheduler", seen)
	}
	for _, p := range c.Pods() {
		fargate := strings.HasPrefix(p.Name, "web-")
		if fargate != (p.Spec.SchedulerName == fargateScheduler) || fargate != (p.Spec.NodeName == "") || fargate != (p.Labels["eks.amazonaws.com/fargate-profile"] != "") {
			t.Errorf("pod %s: scheduler %s, node %q, labels %v", p.Name, p.Spec.SchedulerName, p.Spec.NodeName, p.Labels)
		}
	}
}

// TestPodCreatedAndDeletedHooks: OnPodCreated runs once a pod is stored;
// OnPodDeleted once it is removed — at the end of its graceful shutdown,
// not when it starts terminating — including an unbound pod deleted at
// once and pods that go with their node.
func TestPodCreatedAndDeletedHooks(t *testing.T) {
	eng, c := newCluster(t)
	must(t, c.AddNode(node("n1", "us-west-2a", "4", "8Gi"), true))
	var created, deleted []string
	c.OnPodCreated(func(p *corev1.Pod) {
		if c.Pod(p.Namespace, p.Name) != p {
			t.Errorf("OnPodCreated(%s) before the pod was stored", p.Name)
		}
		created = append(created, p.Name)
	})
	c.OnPodDeleted(func(p *corev1.Pod) {
		if c.Pod(p.Namespace, p.Name) != nil {
			t.Errorf("OnPodDeleted(%s) while the pod is still stored", p.Name)
		}
		deleted = append(deleted, p.Name)
	})
	must(t, c.Apply(barePod("a", "")))
	must(t, c.Apply(barePod("b", "")))
	must(t, c.Apply(barePod("ext", fargateScheduler)))
	run(eng, time.Minute)
	if strings.Join(created, ",") != "a,b,ext" {
		t.Fatalf("created %v", created)
	}
	must(t, c.DeletePod("default", "a", nil, "kubectl delete pod"))
	advance(eng, 4*time.Second)
	if len(deleted) != 0 {
		t.Fatalf("OnPodDeleted fired while the pod was terminating: %v", deleted)
	}
	advance(eng, time.Second)
	if strings.Join(deleted, ",") != "a" {
		t.Fatalf("deleted %v after the 5s shutdown, want a", deleted)
	}
	must(t, c.DeletePod("default", "ext", nil, "kubectl delete pod")) // unbound: removed at once
	if strings.Join(deleted, ",") != "a,ext" {
		t.Fatalf("deleted %v, want the unbound pod removed at once", deleted)
	}
	must(t, c.RemoveNode("n1", "terminated"))
	if strings.Join(deleted, ",") != "a,ext,b" {
		t.Fatalf("deleted %v, want b gone with its node", deleted)
	}
}
