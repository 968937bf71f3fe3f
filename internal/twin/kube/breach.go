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
// pod costs the budget nothing. DaemonSet pods do not count: every drain
// leaves them (kubectl drain --ignore-daemonsets, §D.3; EKS and Karpenter
// alike) and they die with every node.

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

// checkBreach runs just before a pod is taken down without the Eviction
// API, while its PDBs still count it: it records a breach, and a PDB
// violation of the pod's workload, when one of them allows no disruption.
// A pod is taken down once (a terminating pod is skipped), so it is counted
// once.
func (c *Cluster) checkBreach(ps *podState, mechanism, by string) {
	if !c.tracking || !ps.ready || ps.deleting || isDaemonSetPod(ps.pod) {
		return
	}
	var exhausted []string
	for _, st := range c.pdbsFor(ps) {
		if c.sync(st).Status.DisruptionsAllowed <= 0 {
			exhausted = append(exhausted, st.pdb.Namespace+"/"+st.pdb.Name)
		}
	}
	if len(exhausted) == 0 {
		return
	}
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
