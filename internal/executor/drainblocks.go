package executor

import (
	"context"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ladder-eks/ladder/internal/eviction"
	"github.com/ladder-eks/ladder/internal/rules/drainwave"
)

// The outcomes of a BlockedEviction.
const (
	OutcomeBlocked     = "blocked"      // still refused
	OutcomeEvicted     = "evicted"      // the PDB later allowed it
	OutcomeDeleted     = "deleted"      // the pod went without this eviction (deleted by something else)
	OutcomeNodeRemoved = "node-removed" // the pod's node went away with it
	OutcomeFailed      = "failed"       // the API answered with an error a drain does not retry, and the drain stopped on it
)

// BlockedEviction is a pod whose eviction a drain of Ladder's own
// (drainInWaves: a blue/green group's blue nodes, the old nodes of
// --strategy ladder) saw refused, from Since until Until (zero while it
// still is): its node, the pod (namespace/name), the PDBs that select it
// (namespace/name), how it ended (Outcome*) and the Eviction API's answer
// with its causes (eviction.BlockingMessage). Times are the Kubernetes
// port's clock.
type BlockedEviction struct {
	Node, Pod    string
	PDBs         []string
	Since, Until time.Time
	Outcome      string
	Message      string
}

// A BlockObserver is an Observer that also hears of the pods that hold up
// Ladder's own drains, for a report's blocked pods: of each, once when the
// Eviction API first refuses it for a PodDisruptionBudget (a 429, Until
// zero, Outcome blocked), and once when it ends (Until and Outcome set);
// the pod and node name the span told before. A pod whose eviction fails
// the drain at once — the 500 for a pod under two PDBs (semantics.md
// §D.1), which the wave plan knows without an eviction — is told once,
// ended (failed, Since = Until). A span still open when a step ends was
// still blocked then: the drain stopped (its time limit, another pod's
// failure) with the pod in place.
type BlockObserver interface {
	EvictionBlocked(b BlockedEviction)
}

// blocks follows, through one drainInWaves, the pods whose eviction a PDB
// refuses, and tells the observer, if it is a BlockObserver, when each
// starts and ends.
type blocks struct {
	e    *Executor
	open map[string]*BlockedEviction // by pod, namespace/name
}

func (b *blocks) tell(x BlockedEviction) {
	if o, ok := b.e.Observer.(BlockObserver); ok {
		x.PDBs = slices.Clone(x.PDBs)
		o.EvictionBlocked(x)
	}
}

// refused opens pod's span on node at its first 429, naming the PDBs that
// select it.
func (b *blocks) refused(ctx context.Context, node string, pod *corev1.Pod, err error) {
	key := pod.Namespace + "/" + pod.Name
	if _, ok := b.open[key]; ok {
		return
	}
	x := &BlockedEviction{Node: node, Pod: key, PDBs: b.pdbs(ctx, pod), Since: b.e.Ports.Kube.Now(),
		Outcome: OutcomeBlocked, Message: eviction.BlockingMessage(err)}
	b.open[key] = x
	b.tell(*x)
}

// end closes pod's span, if it is open, with outcome.
func (b *blocks) end(pod, outcome string) {
	x, ok := b.open[pod]
	if !ok {
		return
	}
	delete(b.open, pod)
	x.Until, x.Outcome = b.e.Ports.Kube.Now(), outcome
	b.tell(*x)
}

// failed records an eviction the API refuses for good, err its answer:
// the pod's open span ends failed (its message the refusal it was retried
// on, as kubectl's), or a span that ends as it starts is told.
func (b *blocks) failed(node, pod string, pdbs []string, err error) {
	if _, ok := b.open[pod]; ok {
		b.end(pod, OutcomeFailed)
		return
	}
	now := b.e.Ports.Kube.Now()
	b.tell(BlockedEviction{Node: node, Pod: pod, PDBs: pdbs, Since: now, Until: now, Outcome: OutcomeFailed, Message: eviction.BlockingMessage(err)})
}

// gone ends the spans of the pods of nodes that the drain no longer has
// to evict (todo, drainable's answer for nodes) though no eviction of
// Ladder's let them go: deleted by something else, or gone with their
// node.
func (b *blocks) gone(ctx context.Context, nodes []string, todo []drainwave.Node) {
	if len(b.open) == 0 {
		return
	}
	left := map[string]bool{}
	for _, n := range todo {
		for _, p := range n.Pods {
			left[p.Namespace+"/"+p.Name] = true
		}
	}
	for _, pod := range slices.Sorted(maps.Keys(b.open)) {
		x := b.open[pod]
		if left[pod] || !slices.Contains(nodes, x.Node) {
			continue
		}
		outcome := OutcomeDeleted
		if _, err := b.e.Ports.Kube.GetNode(ctx, x.Node); apierrors.IsNotFound(err) {
			outcome = OutcomeNodeRemoved
		}
		b.end(pod, outcome)
	}
}

// pdbs names the PDBs that select pod, namespace/name; none when they
// cannot be listed (the span is still worth telling).
func (b *blocks) pdbs(ctx context.Context, pod *corev1.Pod) []string {
	list, err := b.e.Ports.Kube.ListPDBs(ctx, pod.Namespace)
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range eviction.MatchingPDBs(pod, pointers(list)) {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}
