package labserve

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeport/live"
	"github.com/ladder-eks/ladder/internal/twin/asg"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// Self-managed groups on the lab: the Auto Scaling twin launches and
// terminates instances through the worker pool (this body's AddNode and
// RemoveNode), and the Node Termination Handler it plays taints and drains
// a terminating instance's node here. NTH drains with kubectl's drain
// library (pkg/node/node.go), so the lab's drain is that library itself
// (live.Port.Drain), through the real Eviction API.

var _ asg.Kube = (*Kube)(nil)

// AddTaint adds a taint to the node unless it has one with the same key
// and effect.
func (k *Kube) AddTaint(node string, t corev1.Taint) error {
	return k.UpdateNode(node, func(n *corev1.Node) {
		for _, have := range n.Spec.Taints {
			if have.Key == t.Key && have.Effect == t.Effect {
				return
			}
		}
		n.Spec.Taints = append(n.Spec.Taints, t)
	})
}

// Drain runs kubectl's drain of node in the background and tells done,
// under the endpoints' lock, how it ended. opts.Timeout is virtual time:
// the wall clock gets it divided by the time scale.
func (k *Kube) Drain(node string, opts kube.DrainOptions, done func(error)) error {
	p := live.New(k.cs, live.Options{})
	if _, err := p.GetNode(k.ctx, node); err != nil {
		return err
	}
	o := kubeport.DrainOptions{Force: opts.Force, IgnoreDaemonSets: opts.IgnoreAllDaemonSets, DeleteEmptyDirData: opts.DeleteEmptyDirData,
		SkipWaitForDeleteTimeoutSeconds: opts.SkipWaitForDeleteTimeoutSeconds, Timeout: k.wall(opts.Timeout)}
	go func() {
		err := p.Drain(k.ctx, node, o)
		if k.ctx.Err() != nil {
			return // the endpoints are shutting down
		}
		k.locked(func() { done(err) })
	}()
	return nil
}

// Killed is nil: on the lab a terminated node's pods are deleted by the
// pod garbage collector, which records nothing for the twin's report.
func (k *Kube) Killed() []kube.KilledPod { return nil }

// wall is the wall time a virtual duration takes.
func (k *Kube) wall(d time.Duration) time.Duration {
	if k.timeScale <= 0 {
		return d
	}
	return time.Duration(float64(d) / k.timeScale)
}

// locked runs fn holding the endpoints' lock, once Run has set it.
func (k *Kube) locked(fn func()) {
	if k.lock == nil {
		fn()
		return
	}
	k.lock(fn)
}
