// Package drainwave decides how many of the nodes Ladder drains itself — the
// blue group of a blue/green migration, the old instances of a self-managed
// group under --strategy ladder — can be drained at once without the
// Eviction API refusing any eviction.
//
// The decision replays, pod by pod, what the eviction subresource answers
// (semantics.md §D.1) against the PDBs' status as the disruption controller
// last wrote it (§D.2): each eviction that passes checkAndDecrement uses one
// of the PDB's disruptionsAllowed, so a wave fits when, for every PDB, the
// budget-consuming evictions of its nodes stay within that number. Pods the
// handler lets through without the budget (terminal, pending or deleting
// pods; unready pods under an AlwaysAllow PDB or a PDB at its healthy floor,
// §F pitfall 8) take none; a pod under two PDBs is always refused with a
// 500 (§F pitfall 7), so its node never fits.
//
// Evicting healthy pods within the budget leaves currentHealthy at or above
// desiredHealthy (disruptionsAllowed = currentHealthy − desiredHealthy), so
// the unhealthy-pod fast path a PDB offers when the wave starts still holds
// once the wave's other evictions are in.
package drainwave

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ladder-eks/ladder/internal/eviction"
)

// Node is a node to drain and the pods its drain evicts: kubectl drain's
// filters (semantics.md §D.3) already applied, so DaemonSet and mirror pods
// are not among them.
type Node struct {
	Name string
	Pods []*corev1.Pod
}

// Refusal is the first eviction the Eviction API would refuse on a node left
// out of the wave. Pod is empty for a node left out only because the wave
// already holds max nodes.
type Refusal struct {
	Node string
	// Pod is the refused pod, namespace/name; PDBs the PDBs that select it.
	Pod  string
	PDBs []string
	// Err is the Eviction API's answer: a 429 when the budget is spent, a
	// 500 when the pod has several PDBs.
	Err *apierrors.StatusError
	// Alone is true when the node is refused even drained alone: it waits
	// for the PDB's status to change (pods rescheduled and Ready again), or
	// for good (several PDBs, a budget of zero). False: it fits alone and
	// only waits for the wave's other nodes.
	Alone bool
}

// Wave is the nodes to drain at once now, in the caller's order, and why
// each other node waits.
type Wave struct {
	Nodes   []string
	Waiting []Refusal
}

// Plan chooses the wave: nodes are taken first fit in the order given (the
// caller's order, e.g. oldest first), each kept when all of its evictions
// pass after those of the nodes already in the wave. max bounds the wave
// (the surge the caller has room for); max <= 0 leaves it to the PDBs.
// pdbs are the PDBs of the nodes' namespaces with their current status; now
// stamps the disruptedPods entries the replay writes and does not otherwise
// matter. Plan does not change its arguments.
func Plan(nodes []Node, pdbs []*policyv1.PodDisruptionBudget, max int, now time.Time) Wave {
	var w Wave
	spent := budgets{}
	for _, n := range nodes {
		if max > 0 && len(w.Nodes) == max {
			w.Waiting = append(w.Waiting, Refusal{Node: n.Name})
			continue
		}
		next, refusal := evictAll(n, pdbs, spent, now)
		if refusal == nil {
			spent = next
			w.Nodes = append(w.Nodes, n.Name)
			continue
		}
		if len(spent) > 0 {
			_, alone := evictAll(n, pdbs, budgets{}, now)
			refusal.Alone = alone != nil
		} else {
			refusal.Alone = true
		}
		w.Waiting = append(w.Waiting, *refusal)
	}
	return w
}

// budgets maps a PDB as given to its status after the wave's evictions so
// far; a PDB not in the map is untouched.
type budgets map[*policyv1.PodDisruptionBudget]*policyv1.PodDisruptionBudget

// evictAll replays the evictions of n's pods over spent. It returns the
// budgets once they are in, or the first refusal; spent is not changed.
func evictAll(n Node, pdbs []*policyv1.PodDisruptionBudget, spent budgets, now time.Time) (budgets, *Refusal) {
	next := make(budgets, len(spent))
	for k, v := range spent {
		next[k] = v
	}
	for _, pod := range n.Pods {
		matched := eviction.MatchingPDBs(pod, pdbs)
		current := make([]*policyv1.PodDisruptionBudget, len(matched))
		for i, pdb := range matched {
			current[i] = pdb
			if s, ok := next[pdb]; ok {
				current[i] = s
			}
		}
		res := eviction.Evict(eviction.Request{Pod: pod, PDBs: current, Selected: true, Now: now})
		if res.Err != nil {
			r := &Refusal{Node: n.Name, Pod: pod.Namespace + "/" + pod.Name, Err: res.Err}
			for _, pdb := range matched {
				r.PDBs = append(r.PDBs, pdb.Namespace+"/"+pdb.Name)
			}
			return nil, r
		}
		if res.UpdatedPDB != nil {
			next[matched[0]] = res.UpdatedPDB
		}
	}
	return next, nil
}
