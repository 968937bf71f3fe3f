package materialize

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/inventory"
	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// expected is what the twin runs at the start, per workload: how many pods,
// and for a Fargate workload the Fargate nodes the twin made for them.
type expected struct {
	pods    map[workloadKey]int
	fargate map[workloadKey][]string
}

func expect(snap *twinbuild.Snapshot) expected {
	e := expected{pods: map[workloadKey]int{}, fargate: map[workloadKey][]string{}}
	for _, p := range snap.Pods {
		k := snapshotKey(p)
		e.pods[k]++
		if snap.Groups[p.Pod.Spec.NodeName].Type == "fargate" {
			e.fargate[k] = append(e.fargate[k], p.Pod.Spec.NodeName)
		}
	}
	return e
}

func snapshotKey(p twinbuild.SnapshotPod) workloadKey {
	if p.Workload.Kind == "" {
		return workloadKey{"Pod", p.Pod.Namespace, p.Pod.Name}
	}
	return workloadKey{p.Workload.Kind, p.Pod.Namespace, p.Workload.Name}
}

func liveKey(p inventory.Pod) workloadKey {
	return workloadKey{p.Workload.Kind, p.Workload.Namespace, p.Workload.Name}
}

// waitPods waits until every workload runs as many Running pods as the
// twin's starting cluster does. Meanwhile it plays EKS's fargate-scheduler
// for the pods the Fargate profiles selected: each is bound to a Fargate
// node the twin made for its workload (a node hosts one pod).
func (c *client) waitPods(ctx context.Context, snap *twinbuild.Snapshot) error {
	t := time.Now()
	want := expect(snap)
	var missing []string
	var bound []string
	lastReport := t
	err := poll(ctx, podTimeout, func(ctx context.Context) (bool, error) {
		pods, err := inventory.ListPods(ctx, c.cs)
		if err != nil {
			return false, err
		}
		b, err := c.bindFargate(ctx, pods, want)
		if err != nil {
			return false, err
		}
		bound = append(bound, b...)
		missing = missingPods(pods, want, nil)
		if len(missing) > 0 && time.Since(lastReport) >= 15*time.Second {
			lastReport = time.Now()
			missing = missingPods(pods, want, c.failedCreates(ctx))
			c.printf("  waiting for pods (%s): %s\n", since(t), strings.Join(first(missing, 3), "; "))
		}
		return len(missing) == 0, nil
	})
	if err != nil {
		if len(missing) == 0 {
			return err
		}
		if pods, lerr := inventory.ListPods(context.WithoutCancel(ctx), c.cs); lerr == nil {
			missing = missingPods(pods, want, c.failedCreates(context.WithoutCancel(ctx)))
		}
		return fmt.Errorf("pods not Running after %s: %s", podTimeout, strings.Join(first(missing, 5), "; "))
	}
	total := 0
	for _, n := range want.pods {
		total += n
	}
	c.printf("  %d pods Running, placed by kube-scheduler", total)
	if len(bound) > 0 {
		sort.Strings(bound)
		c.printf("; bound to Fargate nodes: %s", strings.Join(bound, ", "))
	}
	c.printf(" (%s)\n", since(t))
	return nil
}

// bindFargate binds each pending pod for the fargate-scheduler to a free
// Fargate node of its workload, and returns "pod → node" for each.
func (c *client) bindFargate(ctx context.Context, pods []inventory.Pod, want expected) ([]string, error) {
	busy := map[string]bool{}
	for _, p := range pods {
		if p.Pod.Spec.NodeName != "" && p.Pod.DeletionTimestamp == nil {
			busy[p.Pod.Spec.NodeName] = true
		}
	}
	var out []string
	for _, p := range pods {
		pod := p.Pod
		if pod.Spec.SchedulerName != FargateScheduler || pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil {
			continue
		}
		k := liveKey(p)
		node := ""
		for _, n := range want.fargate[k] {
			if !busy[n] {
				node = n
				break
			}
		}
		if node == "" {
			return nil, fmt.Errorf("pod %s/%s of %s waits for the fargate-scheduler, but the twin made no free Fargate node for it (the twin runs %d such pods)", pod.Namespace, pod.Name, k, len(want.fargate[k]))
		}
		binding := &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: node},
		}
		err := c.cs.CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{})
		switch {
		case apierrors.IsConflict(err), apierrors.IsNotFound(err):
			continue // bound or deleted meanwhile: the next poll sees it
		case err != nil:
			return nil, fmt.Errorf("binding pod %s/%s to Fargate node %s: %v", pod.Namespace, pod.Name, node, apiReason(err))
		}
		busy[node] = true
		out = append(out, pod.Namespace+"/"+pod.Name+" → "+node)
	}
	return out, nil
}

// missingPods says, per workload short of Running pods, what its pods are
// waiting for: the scheduler's reason for a pending pod, the phase of a
// bound one, or — when no pod exists — why its controller could not create
// one (failed, from failedCreates; may be nil).
func missingPods(pods []inventory.Pod, want expected, failed map[workloadKey]string) []string {
	running := map[workloadKey]int{}
	why := map[workloadKey]string{}
	for _, p := range pods {
		k := liveKey(p)
		if _, ok := want.pods[k]; !ok || p.Pod.DeletionTimestamp != nil {
			continue
		}
		if p.Pod.Status.Phase == corev1.PodRunning {
			running[k]++
			continue
		}
		if why[k] == "" {
			why[k] = podWaiting(p.Pod)
		}
	}
	var out []string
	for _, k := range sortedWorkloads(want.pods) {
		n := want.pods[k]
		if running[k] >= n {
			continue
		}
		msg := fmt.Sprintf("%s has %d of %d pods Running", k, running[k], n)
		switch {
		case why[k] != "":
			msg += ": " + why[k]
		case failed[k] != "":
			msg += ": " + failed[k]
		default:
			msg += fmt.Sprintf(" and no pod waiting (see kubectl -n %s describe %s %s)", k.namespace, strings.ToLower(k.kind), k.name)
		}
		out = append(out, msg)
	}
	return out
}

func podWaiting(p *corev1.Pod) string {
	if p.Spec.NodeName == "" {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Message != "" {
				return fmt.Sprintf("pod %s is Pending: %s", p.Name, c.Message)
			}
		}
		return fmt.Sprintf("pod %s is not scheduled yet (scheduler %s)", p.Name, p.Spec.SchedulerName)
	}
	return fmt.Sprintf("pod %s is %s on %s", p.Name, p.Status.Phase, p.Spec.NodeName)
}

func sortedWorkloads(m map[workloadKey]int) []workloadKey {
	out := make([]workloadKey, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// failedCreates is, per workload, the last FailedCreate warning its
// controller recorded (a Deployment's through its ReplicaSets, a CronJob's
// through its Jobs): why a workload has no pods at all, such as a
// ServiceAccount or a namespace quota the pods need. Nil if events cannot
// be read: the message then only says that no pod exists.
func (c *client) failedCreates(ctx context.Context) map[workloadKey]string {
	l, err := c.cs.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "type=Warning,reason=FailedCreate"})
	if err != nil {
		return nil
	}
	sort.SliceStable(l.Items, func(i, j int) bool { return eventTime(&l.Items[i]).Before(eventTime(&l.Items[j])) })
	out := map[workloadKey]string{}
	for _, e := range l.Items {
		o := e.InvolvedObject
		msg := fmt.Sprintf("%s %s: %s", strings.ToLower(o.Kind), o.Name, e.Message)
		out[workloadKey{o.Kind, o.Namespace, o.Name}] = msg
		// A Deployment's ReplicaSet is named DEPLOYMENT-HASH, a CronJob's
		// Job CRONJOB-TIME.
		if parent, ok := intermediate[o.Kind]; ok {
			if i := strings.LastIndex(o.Name, "-"); i > 0 {
				out[workloadKey{parent, o.Namespace, o.Name[:i]}] = msg
			}
		}
	}
	return out
}

// intermediate maps the controllers that create pods for another workload
// to that workload's kind.
var intermediate = map[string]string{"ReplicaSet": "Deployment", "Job": "CronJob"}

func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	}
	return e.FirstTimestamp.Time
}
