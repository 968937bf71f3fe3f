package kube

import (
	"slices"
	"time"
)

// A PDB breach is a pod taken down without the Eviction API at an instant
// when a PodDisruptionBudget selecting it allowed no disruption: its
// status.disruptionsAllowed, as the disruption controller computes it
// (semantics.md §D.2, internal/eviction), was 0, so POST pods/NAME/eviction
// would have answered 429 (checkAndDecrement, §D.1). It does not matter who
// took the pod down — a DELETE (Karpenter's terminationGracePeriod, a forced
// managed node group update, a client's DELETE pods/NAME) or its node
// going away with it still running (a node group deleted after its drain
// timed out, an instance refresh without a lifecycle hook or whose hook timed
// out): the application lost a pod its budget could not spare.
//
// Only a healthy pod counts — Ready and not already terminating — since only
// those are in status.currentHealthy: taking down an unready or terminating
// pod costs the budget nothing. A DaemonSet's pod counts like any other: a
// drain leaves it (kubectl drain --ignore-daemonsets, §D.3) and it dies with
// its node, which a budget selecting it feels all the same.

// Breach mechanisms.
const (
	// BreachDeleted: the pod was deleted (DELETE pods/NAME) without the
	// Eviction API.
	BreachDeleted = "deleted"
	// BreachNodeRemoved: the pod's node went away with the pod running on
	// it; the pod garbage collector removed it.
	BreachNodeRemoved = "node-removed"
)

// PDBBreach is one pod taken down while a PDB selecting it allowed no
// disruption.
type PDBBreach struct {
	At        time.Time
	Namespace string
	Name      string
	Node      string
	// PDBs are the namespace/name of each PDB that selected the pod and
	// allowed no disruption then, sorted.
	PDBs []string
	// Mechanism is BreachDeleted or BreachNodeRemoved; By says who, in the
	// words of the caller (e.g. "DeleteNodegroup blue-mng").
	Mechanism string
	By        string
}

// PDBBreaches lists the breaches since StartTracking, in the order they
// happened.
func (c *Cluster) PDBBreaches() []PDBBreach { return c.breaches }

// OnPDBBreach registers fn to run at the instant of each breach, after it
// is recorded: a rehearsal notes the step it happened in.
func (c *Cluster) OnPDBBreach(fn func(PDBBreach)) { c.breachHooks = append(c.breachHooks, fn) }

// breach records a pod taken without the Eviction API while the PDBs
// exhausted (namespace/name, sorted here) allowed no disruption, and a PDB
// violation of the pod's workload (takeDown decides, pdbhistory.go). A pod
// is taken down once (a terminating pod is skipped), so it is counted once.
func (c *Cluster) breach(ps *podState, exhausted []string, mechanism, by string) {
	slices.Sort(exhausted)
	node := ""
	if ps.node != nil {
		node = ps.node.node.Name
	}
	b := PDBBreach{At: c.eng.Now(), Namespace: ps.pod.Namespace, Name: ps.pod.Name, Node: node,
		PDBs: exhausted, Mechanism: mechanism, By: by}
	c.breaches = append(c.breaches, b)
	if ps.owner != nil {
		ps.owner.avail.violations++
	}
	for _, h := range c.breachHooks {
		h(b)
	}
}
