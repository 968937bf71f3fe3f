package executor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ladder-eks/ladder/internal/drain"
	"github.com/ladder-eks/ladder/internal/eviction"
	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/rules/drainwave"
)

// ownDrain are the kubectl drain flags of the drains Ladder carries out
// itself: DaemonSet pods stay (their controller would put them back), and
// a pod's emptyDir data goes with it, as in the drains of EKS and the node
// termination handler (semantics.md §C, §D.3). A pod without a controller
// refuses the drain, naming itself.
var ownDrain = drain.Options{IgnoreAllDaemonSets: true, DeleteEmptyDirData: true}

// drainInWaves cordons nodes, then drains them in waves: each wave is as
// many nodes as the PDBs let go at once without the Eviction API refusing
// an eviction (internal/rules/drainwave), their pods evicted together; the
// next wave is chosen once the wave's nodes are empty and the PDBs' status
// has caught up with the pods rescheduled elsewhere. A node the journal
// holds as drained is not drained again. what names the nodes in events.
// every, when positive, reads the drain's state at most that often (a
// client polling the API); zero reads it after every change.
func (e *Executor) drainInWaves(ctx context.Context, what string, nodes []string, every time.Duration) error {
	k := e.Ports.Kube
	polled := func(g kubeport.Gate) kubeport.Gate {
		if every > 0 {
			return kubeport.Polled{Every: every, Gate: g, Ticks: true}
		}
		return g
	}
	for _, n := range nodes {
		if err := k.Cordon(ctx, n); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("cordon node/%s: %w", n, err)
		}
	}
	remaining := slices.DeleteFunc(slices.Clone(nodes), e.drained)
	b := &blocks{e: e, open: map[string]*BlockedEviction{}}
	for wave := 1; len(remaining) > 0; wave++ {
		var plan drainwave.Wave
		var todo []drainwave.Node
		var fits time.Time
		err := e.WaitFor(ctx, polled(kubeport.Until{What: what + ": a drain the PDBs allow", Holds: func(ctx context.Context) (bool, error) {
			var err error
			if todo, err = e.drainable(ctx, remaining); err != nil || len(todo) == 0 {
				return true, err
			}
			pdbs, err := k.ListPDBs(ctx, "")
			if err != nil {
				return false, err
			}
			plan = drainwave.Plan(todo, pointers(pdbs), 0, k.Now())
			if len(plan.Nodes) > 0 {
				// A wave chosen while the last one's pods are still coming
				// back gets only the budget they left: wait for them, up to
				// waveSettle, unless every node fits already.
				if fits.IsZero() {
					fits = k.Now()
				}
				return len(plan.Nodes) == len(todo) || !recovering(pdbs) || !k.Now().Before(fits.Add(waveSettle)), nil
			}
			r, settled := firstRefusal(plan, pdbs)
			if r.Err != nil && r.Err.ErrStatus.Code != http.StatusTooManyRequests {
				// Several PDBs select the pod: the Eviction API refuses it
				// for good, and kubectl drain fails it (semantics.md §D.3).
				b.failed(r.Node, r.Pod, r.PDBs, r.Err)
				return false, fmt.Errorf("drain node/%s: pod %s: PDB %s: %s", r.Node, r.Pod, strings.Join(r.PDBs, ", "), r.Err.ErrStatus.Message)
			}
			if settled {
				// No node fits alone and waiting will not change it: the
				// PDBs' pods are all healthy. Drain the first node as
				// kubectl drain does, its refused evictions retried until
				// the budget lets them through.
				plan.Nodes = []string{r.Node}
				return true, nil
			}
			return false, nil
		}}))
		if IsTimeLimit(err) && len(plan.Waiting) > 0 {
			r := plan.Waiting[0]
			return &DrainBlocked{Node: r.Node, Pod: r.Pod, PDBs: r.PDBs, Message: eviction.BlockingMessage(r.Err), Planned: true,
				detail: fmt.Sprintf("PDB %s: %s", strings.Join(r.PDBs, ", "), r.Err.Error())}
		}
		if err != nil {
			return err
		}
		if len(todo) == 0 {
			break
		}
		id := fmt.Sprintf("wave %d: %s", wave, strings.Join(plan.Nodes, " "))
		e.Observer.Event("Normal", "DrainWave", fmt.Sprintf("%s: %s", what, id))
		refused, err := e.evict(ctx, b, todo, plan.Nodes)
		if err != nil {
			return err
		}
		// A refused eviction (a budget another client spent since the
		// plan, or a node drained alone past its PDB) is made again each
		// time the wave is looked at, as kubectl drain retries a 429.
		err = e.WaitFor(ctx, polled(kubeport.Until{What: what + ": " + id + " drained", Holds: func(ctx context.Context) (bool, error) {
			left, err := e.drainable(ctx, plan.Nodes)
			if err != nil {
				return true, err
			}
			b.gone(ctx, plan.Nodes, left)
			if len(left) == 0 {
				return true, nil
			}
			refused, err = e.evict(ctx, b, left, plan.Nodes)
			return false, err
		}}))
		if IsTimeLimit(err) && refused != nil {
			if pdbs, lerr := k.ListPDBs(ctx, ""); lerr == nil {
				for _, p := range eviction.MatchingPDBs(refused.pod, pointers(pdbs)) {
					refused.PDBs = append(refused.PDBs, p.Namespace+"/"+p.Name)
				}
			}
			return refused
		}
		if err != nil {
			return err
		}
		for _, n := range plan.Nodes {
			if err := e.record(e.stepKey+"/Drain/"+n, Entry{State: Called, ID: id}); err != nil {
				return err
			}
		}
		remaining = slices.DeleteFunc(remaining, func(n string) bool { return slices.Contains(plan.Nodes, n) })
	}
	return nil
}

// DrainBlocked is a drain of Ladder's own that the PDBs still refused
// when the step's time ran out: the node, the pod whose eviction the API
// refuses, the PDBs that select it and the API's message. It is a time
// limit (IsTimeLimit), and the step's journal record names the pod and
// PDB from it (groupProgress).
type DrainBlocked struct {
	Node, Pod string
	PDBs      []string
	// Message is the Eviction API's answer with its causes
	// (eviction.BlockingMessage).
	Message string
	// Planned is true when no eviction of the pod was made: the drain
	// waited for the PDBs' status to allow one (the pods they expect are
	// not all healthy), and Message is what the API would answer now.
	Planned bool
	detail  string      // what the error says after the pod
	pod     *corev1.Pod // the refused pod, whose PDBs are looked up once the time is out
}

func (d *DrainBlocked) Error() string {
	return fmt.Sprintf("%v: node/%s: pod %s: %s", ErrTimeLimit, d.Node, d.Pod, d.detail)
}

func (d *DrainBlocked) Unwrap() error { return ErrTimeLimit }

// evict evicts the pods of the nodes of todo that wave names. A 429 is
// left for the caller to try again, and the first is returned as refused
// (its node, pod and the API's message); a pod already gone is evicted.
// b follows the pods a PDB refuses, until they go.
func (e *Executor) evict(ctx context.Context, b *blocks, todo []drainwave.Node, wave []string) (refused *DrainBlocked, err error) {
	for _, n := range todo {
		if !slices.Contains(wave, n.Name) {
			continue
		}
		for _, p := range n.Pods {
			key := p.Namespace + "/" + p.Name
			err := e.Ports.Kube.Evict(ctx, p.Namespace, p.Name)
			switch {
			case err == nil:
				b.end(key, OutcomeEvicted)
			case apierrors.IsNotFound(err):
				b.end(key, OutcomeDeleted)
			case apierrors.IsTooManyRequests(err):
				if eviction.IsPDBBlock(err) {
					b.refused(ctx, n.Name, p, err)
				}
				if refused == nil {
					refused = &DrainBlocked{Node: n.Name, Pod: key, Message: eviction.BlockingMessage(err), detail: evictionMessage(err), pod: p}
				}
			default:
				var status apierrors.APIStatus
				if errors.As(err, &status) {
					// The API answered the eviction with an error
					// kubectl drain does not retry: the drain stops on it.
					b.failed(n.Name, key, b.pdbs(ctx, p), err)
				}
				return nil, fmt.Errorf("evict pod %s/%s on node/%s: %w", p.Namespace, p.Name, n.Name, err)
			}
		}
	}
	return refused, nil
}

// evictionMessage is a refused eviction's message with the causes the API
// gives, which name the PDB ("The disruption budget X needs 2 healthy pods
// and has 2 currently").
func evictionMessage(err error) string {
	msg := err.Error()
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Details != nil {
		for _, c := range status.Status().Details.Causes {
			msg += " " + c.Message
		}
	}
	return msg
}

// waveSettle is how long a wave waits for the PDBs to have every pod
// healthy again before it goes with the budget there is: the disruption
// controller's DeletionTimeout, after which it counts an evicted pod that
// is not gone as healthy again anyway (semantics.md §D.2).
const waveSettle = eviction.DeletionTimeout

// recovering reports whether a PDB has fewer healthy pods than it expects:
// pods evicted are being replaced, and their budget will come back.
func recovering(pdbs []policyv1.PodDisruptionBudget) bool {
	for i := range pdbs {
		if st := pdbs[i].Status; st.CurrentHealthy < st.ExpectedPods {
			return true
		}
	}
	return false
}

// firstRefusal is the first node of a wave-less plan that is refused
// even alone, and whether its PDBs are settled: every pod they expect is
// healthy, so no eviction in flight will give their budget back.
func firstRefusal(plan drainwave.Wave, pdbs []policyv1.PodDisruptionBudget) (drainwave.Refusal, bool) {
	for _, r := range plan.Waiting {
		if !r.Alone || r.Err == nil {
			continue
		}
		for _, name := range r.PDBs {
			for i := range pdbs {
				st := pdbs[i].Status
				if pdbs[i].Namespace+"/"+pdbs[i].Name == name && st.CurrentHealthy < st.ExpectedPods {
					return r, false
				}
			}
		}
		return r, true
	}
	return drainwave.Refusal{}, false
}

// drained reports whether the journal holds node as drained in this step.
func (e *Executor) drained(node string) bool {
	if e.Journal == nil {
		return false
	}
	en, ok := e.Journal.Get(e.stepKey + "/Drain/" + node)
	return ok && en.State == Called
}

// drainable lists, of nodes, those that still have pods a drain evicts,
// with those pods (kubectl drain's filters, ownDrain). A pod the filters
// refuse fails the drain before anything of its node is evicted, as
// kubectl drain does (semantics.md §D.3).
func (e *Executor) drainable(ctx context.Context, nodes []string) ([]drainwave.Node, error) {
	k := e.Ports.Kube
	var out []drainwave.Node
	for _, n := range nodes {
		pods, err := k.ListPods(ctx, kubeport.PodQuery{Node: n})
		if err != nil {
			return nil, err
		}
		// DaemonSet pods are left on the node whether or not their
		// DaemonSet still exists: the node goes away with them.
		list, errs := drain.PodsForDeletion(pods, ownDrain, func(namespace, name string) bool { return true }, k.Now())
		if len(errs) > 0 {
			return nil, fmt.Errorf("drain node/%s: %w", n, errs[0])
		}
		var evict []*corev1.Pod
		for _, p := range list.Pods() {
			if p.DeletionTimestamp.IsZero() {
				evict = append(evict, &p)
			}
		}
		if len(evict) > 0 || len(list.Pods()) > 0 {
			out = append(out, drainwave.Node{Name: n, Pods: evict})
		}
	}
	return out, nil
}

func pointers(pdbs []policyv1.PodDisruptionBudget) []*policyv1.PodDisruptionBudget {
	out := make([]*policyv1.PodDisruptionBudget, len(pdbs))
	for i := range pdbs {
		out[i] = &pdbs[i]
	}
	return out
}
