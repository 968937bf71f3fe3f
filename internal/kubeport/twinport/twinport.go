// Package twinport implements the Kubernetes port (internal/kubeport) on
// the twin's in-memory cluster, *kube.Cluster.
//
// The twin runs in virtual time on a sim.Engine, and nothing moves unless
// someone runs that engine. The port's blocking calls do: Wait runs the
// engine in steps of PollInterval of virtual time, checking its condition
// between steps, and Drain runs it until the twin's drain reports back. So
// call Wait and Drain from outside the engine, as a client outside the
// cluster would; code that already runs inside a sim event must not block
// (the port refuses a Wait or Drain started from inside its own Wait or
// Drain).
//
// Reads return deep copies, as a real client gets fresh objects, so callers
// may keep or change them.
package twinport

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/drain"
	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/karpenter"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// Options tune how the port drives the twin's clock.
type Options struct {
	// PollInterval is the virtual time Wait lets pass between two checks
	// of its condition (default 1 s, kubectl's own polling period).
	PollInterval time.Duration
	// DrainLimit bounds a Drain without Timeout: kubectl would wait
	// forever for a pod a PDB protects, the twin gives up after this much
	// virtual time (default 1 h) so that no call hangs.
	DrainLimit time.Duration
	// Karpenter is the Karpenter twin whose NodePools, EC2NodeClasses and
	// NodeClaims the port serves; nil is a cluster without Karpenter's CRDs.
	Karpenter *karpenter.Karpenter
	// Applied reads an object the twin keeps as it was applied and serves
	// no read of — a Namespace, StorageClass or PersistentVolume — by
	// kind, namespace and name: the object last applied, nil for none.
	// Patch starts from it; without Applied those kinds are NotFound.
	Applied func(kind, namespace, name string) metav1.Object
}

// Port is kubeport.Port on a twin cluster. It is not safe for concurrent
// use, like the cluster itself.
type Port struct {
	c       *kube.Cluster
	opts    Options
	running bool // inside Wait or Drain, which run the engine
	// claimMeta holds what patches changed of NodeClaims' metadata
	// (karpenter.go).
	claimMeta map[string]claimMeta
}

var _ kubeport.Port = (*Port)(nil)

// New returns the port of cluster c.
func New(c *kube.Cluster, opts Options) *Port {
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	if opts.DrainLimit <= 0 {
		opts.DrainLimit = time.Hour
	}
	return &Port{c: c, opts: opts}
}

// Cluster is the twin behind the port.
func (p *Port) Cluster() *kube.Cluster { return p.c }

// Now is the twin's virtual time.
func (p *Port) Now() time.Time { return p.c.Engine().Now() }

func nodeNotFound(name string) error { return apierrors.NewNotFound(corev1.Resource("nodes"), name) }

// GetNode implements kubeport.Port.
func (p *Port) GetNode(_ context.Context, name string) (*corev1.Node, error) {
	n := p.c.Node(name)
	if n == nil {
		return nil, nodeNotFound(name)
	}
	return n.DeepCopy(), nil
}

// ListNodes implements kubeport.Port.
func (p *Port) ListNodes(context.Context) ([]corev1.Node, error) {
	nodes := p.c.Nodes()
	out := make([]corev1.Node, len(nodes))
	for i, n := range nodes {
		n.DeepCopyInto(&out[i])
	}
	kubeport.SortObjects(out)
	return out, nil
}

// GetPod implements kubeport.Port.
func (p *Port) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	pod := p.c.Pod(namespace, name)
	if pod == nil {
		return nil, apierrors.NewNotFound(corev1.Resource("pods"), name)
	}
	return pod.DeepCopy(), nil
}

// ListPods implements kubeport.Port.
func (p *Port) ListPods(_ context.Context, q kubeport.PodQuery) ([]corev1.Pod, error) {
	var pods []*corev1.Pod
	if q.Node != "" {
		pods = p.c.PodsOnNode(q.Node)
	} else {
		pods = p.c.Pods()
	}
	out := []corev1.Pod{}
	for _, pod := range pods {
		if q.Namespace != "" && pod.Namespace != q.Namespace {
			continue
		}
		if q.Selector != nil && !q.Selector.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, *pod.DeepCopy())
	}
	kubeport.SortObjects(out)
	return out, nil
}

// ListPDBs implements kubeport.Port.
func (p *Port) ListPDBs(_ context.Context, namespace string) ([]policyv1.PodDisruptionBudget, error) {
	pdbs := p.c.PDBs(namespace)
	out := make([]policyv1.PodDisruptionBudget, len(pdbs))
	for i, pdb := range pdbs {
		pdb.DeepCopyInto(&out[i])
	}
	kubeport.SortObjects(out)
	return out, nil
}

// ListDeployments implements kubeport.Port.
func (p *Port) ListDeployments(_ context.Context, namespace string) ([]appsv1.Deployment, error) {
	return values(p.c.Deployments(namespace)), nil
}

// ListStatefulSets implements kubeport.Port.
func (p *Port) ListStatefulSets(_ context.Context, namespace string) ([]appsv1.StatefulSet, error) {
	return values(p.c.StatefulSets(namespace)), nil
}

// ListDaemonSets implements kubeport.Port.
func (p *Port) ListDaemonSets(_ context.Context, namespace string) ([]appsv1.DaemonSet, error) {
	return values(p.c.DaemonSets(namespace)), nil
}

// values turns the twin's fresh copies into the port's slices of values.
func values[T any](ptrs []*T) []T {
	out := make([]T, len(ptrs))
	for i, v := range ptrs {
		out[i] = *v
	}
	return out
}

// Cordon implements kubeport.Port. Like kubectl's CordonHelper, it writes
// nothing when the node is already cordoned.
func (p *Port) Cordon(_ context.Context, node string) error {
	n := p.c.Node(node)
	if n == nil {
		return nodeNotFound(node)
	}
	if n.Spec.Unschedulable {
		return nil
	}
	return p.c.Cordon(node)
}

// Uncordon implements kubeport.Port.
func (p *Port) Uncordon(_ context.Context, node string) error {
	n := p.c.Node(node)
	if n == nil {
		return nodeNotFound(node)
	}
	if !n.Spec.Unschedulable {
		return nil
	}
	return p.c.Uncordon(node)
}

// PatchNode implements kubeport.Port. The patched node is validated as the
// API server validates its metadata and taints, and refused whole with the
// same 422 Invalid error when it does not pass.
func (p *Port) PatchNode(_ context.Context, node string, patch kubeport.NodePatch) (*corev1.Node, error) {
	n := p.c.Node(node)
	if n == nil {
		return nil, nodeNotFound(node)
	}
	want := n.DeepCopy()
	patch.ApplyTo(want)
	if errs := kubeport.ValidateNodePatchResult(want); len(errs) > 0 {
		return nil, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Node").GroupKind(), node, errs)
	}
	if err := p.c.UpdateNode(node, patch.ApplyTo); err != nil {
		return nil, err
	}
	return p.c.Node(node).DeepCopy(), nil
}

// Evict implements kubeport.Port: the twin's Eviction API answers with the
// apiserver's rules (internal/eviction, semantics.md §D.1).
func (p *Port) Evict(_ context.Context, namespace, name string) error {
	return p.c.Evict(namespace, name)
}

// DeletePod implements kubeport.Port. A voluntary DELETE: when it takes a
// healthy pod whose PDB allows no disruption, the twin records a breach. With a
// zero grace period the API server removes the pod before it answers
// (Store.Delete deletes at once when the grace period is 0); the twin
// removes it in an event at the current instant, so the port runs that
// instant before returning (no virtual time passes).
func (p *Port) DeletePod(_ context.Context, namespace, name string, grace *int64) error {
	if grace != nil && *grace < 0 {
		grace = ptr(int64(1)) // the API server's rest.BeforeDelete turns a negative grace period into 1
	}
	if err := p.c.DeletePod(namespace, name, grace, "DELETE pods/"+name+" (no Eviction API)"); err != nil {
		return err
	}
	if grace != nil && *grace == 0 && !p.running {
		p.c.Engine().RunUntil(p.Now())
	}
	return nil
}

// Drain implements kubeport.Port. kubectl drain cordons first, then asks
// its filters which pods to evict and refuses the whole drain if any pod is
// refused (semantics.md §D.3). The port runs the same filters
// (internal/drain, differential-tested against k8s.io/kubectl/pkg/drain) to
// return kubectl's own error, then lets the twin's drain evict — retrying
// 429s every 5 s — while it runs the engine until that drain reports.
//
// The twin's drain cannot be cancelled: when ctx ends or DrainLimit passes
// first, Drain returns an error but the twin keeps retrying in later events.
func (p *Port) Drain(ctx context.Context, node string, opts kubeport.DrainOptions) error {
	if p.running {
		return errReentrant("Drain")
	}
	if p.c.Node(node) == nil {
		return nodeNotFound(node)
	}
	filterOpts := drain.Options{
		Force:                           opts.Force,
		IgnoreAllDaemonSets:             opts.IgnoreDaemonSets,
		DeleteEmptyDirData:              opts.DeleteEmptyDirData,
		SkipWaitForDeleteTimeoutSeconds: opts.SkipWaitForDeleteTimeoutSeconds,
	}
	onNode := p.c.PodsOnNode(node) // key order, as the API server lists them
	pods := make([]corev1.Pod, len(onNode))
	for i, pod := range onNode {
		pod.DeepCopyInto(&pods[i])
	}

	var finished bool
	var result error
	done := func(err error) { finished, result = true, err }
	// The twin's drain cordons the node, then asks the filters; when they
	// refuse, it evicts nothing, and the port answers with kubectl's own
	// error from the same filters over the same pods.
	if err := p.c.Drain(node, kube.DrainOptions{Options: filterOpts, Timeout: opts.Timeout}, done); err != nil {
		if _, errs := drain.PodsForDeletion(pods, filterOpts, p.c.DaemonSetExists, p.Now()); len(errs) > 0 {
			return utilerrors.NewAggregate(errs) // what RunNodeDrain returns
		}
		return err
	}
	// With --timeout the twin's drain ends by itself: each pod's loop fails
	// at its next eviction attempt (a 429 retry, 5 s later) or at the
	// deadline of its wait for deletion; DrainLimit bounds it all the same.
	limit := p.opts.DrainLimit
	p.run(p.Now().Add(limit), func() bool { return finished || ctx.Err() != nil })
	switch {
	case finished:
		return result
	case ctx.Err() != nil:
		return fmt.Errorf("drain of node %q: %w", node, ctx.Err())
	default:
		return fmt.Errorf("drain of node %q not finished after %s of virtual time, the twin port's DrainLimit (set DrainOptions.Timeout to bound it yourself): %w", node, limit, kubeport.ErrWaitTimeout)
	}
}

// Wait implements kubeport.Port in virtual time: it checks cond, then lets
// PollInterval of virtual time pass (running every twin event due), until
// cond holds or timeout has passed. A twin with nothing left to do still
// lets time pass, since some of its state (a PDB's disruptedPods entries)
// changes with time alone.
func (p *Port) Wait(ctx context.Context, timeout time.Duration, cond kubeport.Condition) error {
	if p.running {
		return errReentrant("Wait")
	}
	deadline := p.Now().Add(timeout)
	for {
		done, err := cond(ctx)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", kubeport.ErrWaitTimeout, ctx.Err())
		}
		if !p.Now().Before(deadline) {
			return fmt.Errorf("%w after %s of virtual time", kubeport.ErrWaitTimeout, timeout)
		}
		p.runUntil(minTime(p.Now().Add(p.opts.PollInterval), deadline))
	}
}

// run runs the engine until done or the limit, marking the port busy.
func (p *Port) run(limit time.Time, done func() bool) {
	p.running = true
	defer func() { p.running = false }()
	p.c.Engine().Run(limit, done)
}

func (p *Port) runUntil(t time.Time) {
	p.running = true
	defer func() { p.running = false }()
	p.c.Engine().RunUntil(t)
}

func errReentrant(call string) error {
	return errors.New("twinport: " + call + " called while the port is already running the twin's engine (from a Wait condition or a twin event); return from it and wait outside")
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func ptr[T any](v T) *T { return &v }

// WaitGate implements kubeport.GateWaiter. The twin's state changes only in
// its events, so a gate it can read from its own bookkeeping is checked
// after every event, as a watch would see it, and holds from the very event
// that made it true; the wait ends at that instant. A gate it cannot read
// itself is polled through its Condition, as Wait does. When no event is
// left the gate can never come to hold, and the wait ends at once with a
// timeout.
func (p *Port) WaitGate(ctx context.Context, timeout time.Duration, g kubeport.Gate) error {
	if p.running {
		return errReentrant("WaitGate")
	}
	holds := p.gate(ctx, g)
	if holds == nil {
		if err := p.Wait(ctx, timeout, g.Condition(p)); err != nil {
			return fmt.Errorf("waiting for %s: %w", g, err)
		}
		return nil
	}
	if done, err := holds(); done || err != nil {
		return err
	}
	var condErr error
	deadline := p.Now().Add(timeout)
	p.running = true
	stop := p.c.Engine().Run(deadline, func() bool {
		if ctx.Err() != nil {
			return true
		}
		done, err := holds()
		condErr = err
		return done || err != nil
	})
	p.running = false
	if pg, ok := g.(kubeport.Polled); ok && stop == sim.Idle && condErr == nil && ctx.Err() == nil {
		// Nothing is left to happen, but the last event may have come
		// between two readings: a client polling the gate reads the final
		// state once more, a period later.
		p.runUntil(minTime(p.Now().Add(pg.Every), deadline))
		done, err := holds()
		if done || err != nil {
			return err
		}
	}
	switch {
	case condErr != nil:
		return condErr
	case ctx.Err() != nil:
		return fmt.Errorf("waiting for %s: %w: %w", g, kubeport.ErrWaitTimeout, ctx.Err())
	case stop == sim.Done:
		return nil
	case stop == sim.Idle:
		return fmt.Errorf("waiting for %s: %w: the twin has nothing left to do", g, kubeport.ErrWaitTimeout)
	default:
		return fmt.Errorf("waiting for %s: %w after %s of virtual time", g, kubeport.ErrWaitTimeout, timeout)
	}
}

// gate is how the twin reads a gate after each event: from its own state,
// or by the gate's own cheap condition; nil for a gate it leaves to
// polling.
func (p *Port) gate(ctx context.Context, g kubeport.Gate) func() (bool, error) {
	switch g := g.(type) {
	case kubeport.PodsSettled:
		return func() (bool, error) { return p.c.Quiet(), nil }
	case kubeport.Until:
		return func() (bool, error) { return g.Holds(ctx) }
	case kubeport.NodePoolReplaced:
		k := p.opts.Karpenter
		if k == nil {
			return nil
		}
		return func() (bool, error) {
			return !k.Busy() && !k.AnyDrifted() && kubeport.NodesAt(p.c.Nodes(), karpv1.NodePoolLabelKey, g.NodePool, g.Minor), nil
		}
	case kubeport.NodesAtMinor:
		return func() (bool, error) { return kubeport.NodesAt(p.c.Nodes(), g.Label, g.Value, g.Minor), nil }
	case kubeport.AllOf:
		reads := make([]func() (bool, error), len(g))
		for i, x := range g {
			if reads[i] = p.gate(ctx, x); reads[i] == nil {
				return nil
			}
		}
		return func() (bool, error) {
			for _, read := range reads {
				if done, err := read(); err != nil || !done {
					return false, err
				}
			}
			return true, nil
		}
	case kubeport.Polled:
		read := p.gate(ctx, g.Gate)
		if read == nil {
			return nil
		}
		if g.Ticks {
			return p.ticked(g.Every, read)
		}
		return p.polled(g.Every, read)
	case kubeport.RolloutsComplete:
		// kubectl rollout status walks a DaemonSet's every pod: read at
		// most once per virtual second.
		return p.polled(time.Second, func() (bool, error) {
			for _, w := range g.Workloads {
				if done, _, err := p.c.RolloutStatus(w.Kind, w.Namespace, w.Name); err != nil || !done {
					return false, nil
				}
			}
			return true, nil
		})
	}
	return nil
}

// ticked is polled whose skipped reading is made up at the period's end:
// an event of the engine is set there (one at a time), so that the gate is
// read then even when nothing else happens. The event does nothing else,
// and one left when the wait ends only lets the engine read nothing.
func (p *Port) ticked(period time.Duration, read func() (bool, error)) func() (bool, error) {
	var next time.Time
	var tick *sim.Event
	return func() (bool, error) {
		now := p.Now()
		if now.Before(next) {
			if tick == nil {
				tick = p.c.Engine().At(next, func() { tick = nil })
			}
			return false, nil
		}
		next = now.Add(period)
		return read()
	}
}

// polled reads a gate at most once per period of virtual time, first at
// once, as a client polling the API would; in between it does not hold.
func (p *Port) polled(period time.Duration, read func() (bool, error)) func() (bool, error) {
	var next time.Time
	return func() (bool, error) {
		now := p.Now()
		if now.Before(next) {
			return false, nil
		}
		next = now.Add(period)
		return read()
	}
}
