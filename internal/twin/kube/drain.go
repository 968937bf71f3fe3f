package kube

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

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
// pods), evict each through the Eviction API — retrying a 429 every 5 s,
// failing a pod on any other error such as the 500 for a pod with two PDBs —
// and wait until they are gone. done runs once, with nil on success.
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
	d := &drainRun{c: c, node: node, remaining: map[string]bool{}, done: done, blocks: map[string]*DrainBlock{}}
	for _, p := range list.Pods() {
		d.remaining[key(p.Namespace, p.Name)] = true
	}
	if opts.Timeout > 0 {
		d.deadline = c.eng.Now().Add(opts.Timeout)
		d.timer = c.eng.At(d.deadline, func() { d.finish(fmt.Errorf("drain did not complete within %s", opts.Timeout)) })
	}
	for _, p := range list.Pods() {
		d.evict(p.Namespace, p.Name)
	}
	d.check()
	return nil
}

type drainRun struct {
	c         *Cluster
	node      string
	remaining map[string]bool
	deadline  time.Time
	timer     *sim.Event
	done      func(error)
	finished  bool
	blocks    map[string]*DrainBlock
}

func (d *drainRun) evict(namespace, name string) {
	if d.finished {
		return
	}
	c := d.c
	k := key(namespace, name)
	// A pod already terminating was deleted without this eviction; the
	// Eviction API still answers 200 for it (it ignores PDBs then).
	terminating := false
	if p := c.Pod(namespace, name); p != nil && p.DeletionTimestamp != nil {
		terminating = true
	}
	err := c.Evict(namespace, name)
	switch {
	case apierrors.IsNotFound(err), err == nil && terminating:
		// Gone without this eviction: deleted by someone else, or with
		// its node. kubectl counts it as drained.
		if b := d.blocks[k]; b != nil {
			b.Until, b.Outcome = c.eng.Now(), "deleted"
		}
		d.check()
	case err == nil:
		if b := d.blocks[k]; b != nil {
			b.Until, b.Outcome = c.eng.Now(), "evicted"
		}
		c.log(Event{Type: "Normal", Reason: "Evicted", Message: fmt.Sprintf("evicting pod %s/%s", namespace, name), Node: d.node, Object: k})
		d.check()
	case eviction.IsPDBBlock(err):
		if d.blocks[k] == nil {
			b := &DrainBlock{Node: d.node, Pod: k, PDB: pdbList(c.PDBsForPod(namespace, name)), Since: c.eng.Now(), Outcome: "blocked", Message: eviction.BlockingMessage(err)}
			d.blocks[k] = b
			c.drainBlocks = append(c.drainBlocks, b)
		}
		c.log(Event{Type: "Warning", Reason: "EvictionBlocked",
			Message: fmt.Sprintf("error when evicting pods/%q -n %q (will retry after 5s): %s", name, namespace, err.Error()), Node: d.node, Object: k})
		c.eng.After(evictErrorRetryDelay, func() { d.evict(namespace, name) })
	default:
		if b := d.blocks[k]; b != nil {
			b.Until, b.Outcome = c.eng.Now(), "failed"
		} else {
			c.drainBlocks = append(c.drainBlocks, &DrainBlock{Node: d.node, Pod: k, PDB: pdbList(c.PDBsForPod(namespace, name)),
				Since: c.eng.Now(), Until: c.eng.Now(), Outcome: "failed", Message: err.Error()})
		}
		d.finish(fmt.Errorf("error when evicting pods/%q -n %q: %v", name, namespace, err))
	}
}

// check finishes the drain once every pod to evict is gone, polling every
// second as kubectl waits for deletion.
func (d *drainRun) check() {
	if d.finished {
		return
	}
	for k := range d.remaining {
		if _, alive := d.c.pods[k]; !alive {
			delete(d.remaining, k)
		}
	}
	if len(d.remaining) == 0 {
		d.c.log(Event{Type: "Normal", Reason: "NodeDrained", Message: "node/" + d.node + " drained", Node: d.node})
		d.finish(nil)
		return
	}
	d.c.eng.After(drainPollInterval, d.check)
}

func (d *drainRun) finish(err error) {
	if d.finished {
		return
	}
	d.finished = true
	if d.timer != nil {
		d.timer.Cancel()
	}
	for _, b := range d.blocks {
		if b.Until.IsZero() && err != nil {
			b.Until = d.c.eng.Now()
		}
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
