package karpenter

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	podutil "sigs.k8s.io/karpenter/pkg/utils/pod"

	"github.com/ladder-eks/ladder/internal/drain"
	"github.com/ladder-eks/ladder/internal/sim"
)

// batcher is the provisioner's batching window: it waits until no new
// pending pod has appeared for BatchIdle, or BatchMax after the first one.
type batcher struct {
	k       *Karpenter
	started time.Time
	timer   *sim.Event
}

func (b *batcher) pending() bool { return b.timer != nil }

func (b *batcher) trigger() {
	k := b.k
	now := k.eng.Now()
	if b.timer == nil {
		b.started = now
	} else {
		b.timer.Cancel()
	}
	at := now.Add(k.opts.Timings.BatchIdle)
	if limit := b.started.Add(k.opts.Timings.BatchMax); at.After(limit) {
		at = limit
	}
	b.timer = k.eng.At(at, func() {
		b.timer = nil
		k.provision()
	})
}

// provision is the provisioner's reconcile: pending, provisionable pods
// (unscheduled, not DaemonSet pods) are packed onto in-flight capacity and
// new NodeClaims.
func (k *Karpenter) provision() {
	var pods []*corev1.Pod
	for _, p := range k.kube.PendingPods() {
		// GetPendingPods + IsProvisionable (pkg/utils/pod/scheduling.go):
		// only pods kube-scheduler marked Unschedulable — not a Fargate
		// pod, which another scheduler places — and no DaemonSet pods.
		if !podutil.IsProvisionable(p) || p.DeletionTimestamp != nil {
			continue
		}
		pods = append(pods, p)
	}
	if len(pods) == 0 || len(k.pools) == 0 {
		return
	}
	capacity := k.existingCapacity(nil)
	nodes := make([]simNode, len(capacity))
	for i, n := range capacity {
		nodes[i] = *n
	}
	sortCapacity(nodes)
	res := k.pack(pods, nodes)
	if len(res.claims) > 0 {
		k.log(Event{Code: "ProvisionablePods", Message: "found provisionable pod(s)", Fields: []string{podList(pods)}})
		n := 0
		for _, c := range res.claims {
			n += len(c.pods)
		}
		k.log(Event{Code: "ComputedNodeClaims", Message: "computed new nodeclaim(s) to fit pod(s)", Fields: []string{fmt.Sprintf("nodeclaims=%d", len(res.claims)), fmt.Sprintf("pods=%d", n)}})
		for _, c := range res.claims {
			k.createNodeClaim(c)
		}
	}
	for _, p := range sortedPods(res.failed) {
		k.log(Event{Type: "Warning", Code: "FailedScheduling", Message: fmt.Sprintf("could not schedule pod %s/%s: %s", p.Namespace, p.Name, res.failed[p])})
		k.unschedulable[p.Namespace+"/"+p.Name] = res.failed[p]
	}
}

// Unschedulable returns Karpenter's last reason for not provisioning for a
// pod, or "".
func (k *Karpenter) Unschedulable(namespace, name string) string {
	return k.unschedulable[namespace+"/"+name]
}

func sortedPods(m map[*corev1.Pod]string) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sortPods(out)
	return out
}

// sortPods orders pods by namespace, then name.
func sortPods(pods []*corev1.Pod) {
	sort.Slice(pods, func(i, j int) bool {
		if pods[i].Namespace != pods[j].Namespace {
			return pods[i].Namespace < pods[j].Namespace
		}
		return pods[i].Name < pods[j].Name
	})
}

func podList(pods []*corev1.Pod) string {
	s := "pods="
	for i, p := range pods {
		if i == 5 {
			s += fmt.Sprintf(" and %d other(s)", len(pods)-5)
			break
		}
		if i > 0 {
			s += ", "
		}
		s += p.Namespace + "/" + p.Name
	}
	return s
}

func isDaemonSetPod(p *corev1.Pod) bool { return drain.IsDaemonSetPod(p) }
