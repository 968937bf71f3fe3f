package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/ladder-eks/ladder/internal/drain"
	"github.com/ladder-eks/ladder/internal/eviction"
	"github.com/ladder-eks/ladder/internal/sim"
)

// kubectl drain's timing (semantics.md §D.3): a 429 is retried every 5 s
// (EvictErrorRetryDelay); after an eviction, the pod's deletion is polled
// every second.
const (
	evictErrorRetryDelay = 5 * time.Second
	drainPollInterval    = 1 * time.Second
)

// DrainOptions are the kubectl drain flags the twin honours.
type DrainOptions struct {
	drain.Options
	// Timeout is --timeout: the whole drain fails after it (0 = no limit).
	Timeout time.Duration
}

// DrainBlock is a pod whose eviction a drain had to retry.
type DrainBlock struct {
	Node, Pod, PDB string
	Since, Until   time.Time // Until is zero while still blocked
	Outcome        string    // evicted, blocked, failed
	Message        string
}

// Drain is kubectl drain NODE: cordon, keep the pods kubectl's filters
// delete (internal/drain: DaemonSet, mirror, local-storage and unreplicated
// pods), then run k8s.io/kubectl/pkg/drain's evictPods (semantics.md §D.3):
// every pod at once, each on its own loop — check the global --timeout,
// evict, retry a 429 every 5 s, fail that pod on any other error such as
// the 500 for a pod with two PDBs — then wait for each evicted pod to be
// gone (or replaced under the same name, by UID) polling every second. The
// drain ends when every pod's loop has; done runs once, with nil or the
// pods' errors aggregated as utilerrors.NewAggregate does, in the order the
// pods finished.
func (c *Cluster) Drain(node string, opts DrainOptions, done func(error)) error {
	ns, ok := c.nodes[node]
	if !ok {
		return fmt.Errorf("nodes %q not found", node)
	}
	if err := c.Cordon(node); err != nil {
		return err
	}
	c.log(Event{Type: "Normal", Reason: "NodeCordoned", Message: "node/" + node + " cordoned", Node: node})
	var pods []corev1.Pod
	for _, ps := range ns.pods.list() {
		pods = append(pods, *ps.pod)
	}
	list, errs := drain.PodsForDeletion(pods, opts.Options, c.DaemonSetExists, c.eng.Now())
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return fmt.Errorf("node/%s: %s", node, strings.Join(msgs, "; "))
	}
	if w := list.Warnings(); w != "" {
		c.log(Event{Type: "Warning", Reason: "DrainWarning", Message: "Warning: " + w, Node: node})
	}
	d := &drainRun{c: c, node: node, opts: opts, done: done, blocks: map[string]*DrainBlock{}}
	if opts.Timeout > 0 {
		d.deadline = c.eng.Now().Add(opts.Timeout)
	}
	targets := list.Pods()
	d.pending = len(targets)
	if d.pending == 0 {
		d.complete()
		return nil
	}
	for _, p := range targets {
		d.evict(&drainPod{namespace: p.Namespace, name: p.Name, uid: p.UID})
	}
	return nil
}

// drainRun is one drain in progress; drainPod is one pod's loop in it.
type drainRun struct {
	c        *Cluster
	node     string
	opts     DrainOptions
	deadline time.Time // zero without --timeout
	done     func(error)
	pending  int // pods whose loop has not ended
	errs     []error
	blocks   map[string]*DrainBlock
}

type drainPod struct {
	namespace, name string
	uid             types.UID
	done            bool       // this pod's loop has ended
	deadline        *sim.Event // the global timeout of its wait for deletion
}

func (d *drainRun) timedOut() bool {
	return !d.deadline.IsZero() && !d.c.eng.Now().Before(d.deadline)
}

// evict is one turn of kubectl's eviction loop for a pod.
func (d *drainRun) evict(p *drainPod) {
	c := d.c
	k := key(p.namespace, p.name)
	if d.timedOut() {
		if b := d.blocks[k]; b != nil {
			b.Until = c.eng.Now()
		}
		d.podDone(p, fmt.Errorf("error when evicting pods/%q -n %q: global timeout reached: %v", p.name, p.namespace, d.opts.Timeout))
		return
	}
	// A pod already terminating was deleted without this eviction; the
	// Eviction API still answers 200 for it (it ignores PDBs then).
	terminating := false
	if cur := c.Pod(p.namespace, p.name); cur != nil && cur.DeletionTimestamp != nil {
		terminating = true
	}
	err := c.Evict(p.namespace, p.name)
	switch {
	case apierrors.IsNotFound(err):
		// Gone without this eviction: kubectl counts it as drained.
		if b := d.blocks[k]; b != nil {
			b.Until, b.Outcome = c.eng.Now(), "deleted"
		}
		d.podDone(p, nil)
	case err == nil:
		if b := d.blocks[k]; b != nil {
			b.Until, b.Outcome = c.eng.Now(), "evicted"
			if terminating {
				b.Outcome = "deleted"
			}
		}
		if !terminating {
			c.log(Event{Type: "Normal", Reason: "Evicted", Message: fmt.Sprintf("evicting pod %s/%s", p.namespace, p.name), Node: d.node, Object: k})
		}
		if !d.deadline.IsZero() {
			p.deadline = c.eng.At(d.deadline, func() {
				d.podDone(p, fmt.Errorf("error when waiting for pod %q in namespace %q to terminate: %v", p.name, p.namespace, context.DeadlineExceeded))
			})
		}
		d.waitGone(p)
	case eviction.IsPDBBlock(err):
		if d.blocks[k] == nil {
			b := &DrainBlock{Node: d.node, Pod: k, PDB: pdbList(c.PDBsForPod(p.namespace, p.name)), Since: c.eng.Now(), Outcome: "blocked", Message: eviction.BlockingMessage(err)}
			d.blocks[k] = b
			c.drainBlocks = append(c.drainBlocks, b)
		}
		c.log(Event{Type: "Warning", Reason: "EvictionBlocked",
			Message: fmt.Sprintf("error when evicting pods/%q -n %q (will retry after 5s): %s", p.name, p.namespace, err.Error()), Node: d.node, Object: k})
		c.eng.After(evictErrorRetryDelay, func() { d.evict(p) })
	default:
		if b := d.blocks[k]; b != nil {
			b.Until, b.Outcome = c.eng.Now(), "failed"
		} else {
			c.drainBlocks = append(c.drainBlocks, &DrainBlock{Node: d.node, Pod: k, PDB: pdbList(c.PDBsForPod(p.namespace, p.name)),
				Since: c.eng.Now(), Until: c.eng.Now(), Outcome: "failed", Message: err.Error()})
		}
		d.podDone(p, fmt.Errorf("error when evicting pods/%q -n %q: %v", p.name, p.namespace, err))
	}
}

// waitGone is kubectl's waitForDelete for one evicted pod: done once the
// pod is gone or a new pod holds its name, skipped once it has been
// deleting for longer than --skip-wait-for-delete-timeout; polled every
// second until then or the global --timeout.
func (d *drainRun) waitGone(p *drainPod) {
	if p.done {
		return // the wait reached the deadline
	}
	cur := d.c.Pod(p.namespace, p.name)
	skip := cur != nil && d.opts.SkipWaitForDeleteTimeoutSeconds > 0 && cur.DeletionTimestamp != nil &&
		d.c.eng.Now().Sub(cur.DeletionTimestamp.Time) > time.Duration(d.opts.SkipWaitForDeleteTimeoutSeconds)*time.Second
	if cur == nil || cur.UID != p.uid || skip {
		d.podDone(p, nil)
		return
	}
	d.c.eng.After(drainPollInterval, func() { d.waitGone(p) })
}

// podDone ends one pod's loop, once; the last one ends the drain.
func (d *drainRun) podDone(p *drainPod, err error) {
	if p.done {
		return
	}
	p.done = true
	if p.deadline != nil {
		p.deadline.Cancel()
	}
	if err != nil {
		d.errs = append(d.errs, err)
	}
	d.pending--
	if d.pending == 0 {
		d.complete()
	}
}

func (d *drainRun) complete() {
	err := utilerrors.NewAggregate(d.errs)
	for _, b := range d.blocks {
		if b.Until.IsZero() && err != nil {
			b.Until = d.c.eng.Now()
		}
	}
	if err == nil {
		d.c.log(Event{Type: "Normal", Reason: "NodeDrained", Message: "node/" + d.node + " drained", Node: d.node})
	}
	if d.done != nil {
		d.done(err)
	}
}

// DrainBlocks lists the pods drains had to retry, in the order first seen.
func (c *Cluster) DrainBlocks() []DrainBlock {
	out := make([]DrainBlock, len(c.drainBlocks))
	for i, b := range c.drainBlocks {
		out[i] = *b
	}
	return out
}

func pdbList(pdbs []*policyv1.PodDisruptionBudget) string {
	names := make([]string, len(pdbs))
	for i, p := range pdbs {
		names[i] = p.Namespace + "/" + p.Name
	}
	return strings.Join(names, ",")
}
