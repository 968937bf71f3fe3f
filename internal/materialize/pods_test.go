package materialize

import (
	"context"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ladder-eks/ladder/internal/inventory"
)

// A workload short of Running pods is named with what its pods wait for —
// the scheduler's reason, the phase on a node — or, when it has no pod at
// all, why its controller could not create one (the lab first failed so on
// ServiceAccounts the add-ons' manifests name but do not declare).
func TestMissingPods(t *testing.T) {
	web := workloadKey{"Deployment", "app", "web"}
	proxy := workloadKey{"DaemonSet", "kube-system", "kube-proxy"}
	db := workloadKey{"StatefulSet", "app", "db"}
	batch := workloadKey{"CronJob", "app", "report"}
	want := expected{pods: map[workloadKey]int{web: 2, proxy: 3, db: 1, batch: 1}}
	pod := func(k workloadKey, name, node string, phase corev1.PodPhase, conds ...corev1.PodCondition) inventory.Pod {
		return inventory.Pod{
			Pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: k.namespace, Name: name},
				Spec:   corev1.PodSpec{NodeName: node, SchedulerName: corev1.DefaultSchedulerName},
				Status: corev1.PodStatus{Phase: phase, Conditions: conds}},
			Workload: inventory.Workload{Namespace: k.namespace, Kind: k.kind, Name: k.name},
		}
	}
	pods := []inventory.Pod{
		pod(web, "web-1", "n1", corev1.PodRunning),
		pod(web, "web-2", "", corev1.PodPending, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Message: "0/3 nodes are available: 3 Insufficient cpu."}),
		pod(db, "db-0", "n2", corev1.PodPending),
	}
	failed := map[workloadKey]string{
		proxy: `daemonset kube-proxy: Error creating: pods "kube-proxy-" is forbidden: error looking up service account kube-system/kube-proxy: serviceaccount "kube-proxy" not found`,
	}
	got := missingPods(pods, want, failed)
	wantMsgs := []string{
		"CronJob app/report has 0 of 1 pods Running and no pod waiting (see kubectl -n app describe cronjob report)",
		"DaemonSet kube-system/kube-proxy has 0 of 3 pods Running: " + failed[proxy],
		"Deployment app/web has 1 of 2 pods Running: pod web-2 is Pending: 0/3 nodes are available: 3 Insufficient cpu.",
		"StatefulSet app/db has 0 of 1 pods Running: pod db-0 is Pending on n2",
	}
	if !reflect.DeepEqual(got, wantMsgs) {
		t.Errorf("missingPods:\n got %q\nwant %q", got, wantMsgs)
	}
	running := []inventory.Pod{
		pod(web, "web-1", "n1", corev1.PodRunning),
		pod(web, "web-2", "n2", corev1.PodRunning),
		pod(db, "db-0", "n2", corev1.PodRunning),
	}
	if got := missingPods(running, expected{pods: map[workloadKey]int{web: 2, db: 1}}, nil); len(got) != 0 {
		t.Errorf("every pod Running, still missing: %q", got)
	}
}

// The FailedCreate warnings of a Deployment's ReplicaSet and a CronJob's
// Job are the workload's; the latest warning wins.
func TestFailedCreates(t *testing.T) {
	at := time.Date(2026, 3, 30, 9, 0, 0, 0, time.UTC)
	event := func(kind, ns, name, msg string, ago time.Duration) *corev1.Event {
		return &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: name + "." + msg[:4]},
			InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: ns, Name: name},
			Type:           corev1.EventTypeWarning, Reason: "FailedCreate", Message: msg,
			LastTimestamp: metav1.NewTime(at.Add(-ago)),
		}
	}
	cs := fake.NewClientset(
		event("ReplicaSet", "karpenter", "karpenter-58bd85f9b4", `new: serviceaccount "karpenter" not found`, time.Second),
		event("ReplicaSet", "karpenter", "karpenter-58bd85f9b4", `old: exceeded quota`, time.Minute),
		event("DaemonSet", "kube-system", "aws-node", `serviceaccount "aws-node" not found`, 0),
		event("Job", "app", "report-29000000", `forbidden`, 0),
	)
	c := &client{cs: cs}
	got := c.failedCreates(context.Background())
	for k, want := range map[workloadKey]string{
		{"Deployment", "karpenter", "karpenter"}:            `replicaset karpenter-58bd85f9b4: new: serviceaccount "karpenter" not found`,
		{"ReplicaSet", "karpenter", "karpenter-58bd85f9b4"}: `replicaset karpenter-58bd85f9b4: new: serviceaccount "karpenter" not found`,
		{"DaemonSet", "kube-system", "aws-node"}:            `daemonset aws-node: serviceaccount "aws-node" not found`,
		{"CronJob", "app", "report"}:                        `job report-29000000: forbidden`,
	} {
		if got[k] != want {
			t.Errorf("%s: %q, want %q", k, got[k], want)
		}
	}
}
