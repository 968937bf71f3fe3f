package karpenter

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/ladder-eks/ladder/internal/drain"
)

// A candidate is a NodeClaim a method may disrupt, with the pods that would
// need a new home (disruption/types.go Candidate).
type candidate struct {
	claim *NodeClaim
	pool  *pool
	pods  []*corev1.Pod // reschedulable pods
}

// eligibleAmong lists the NodeClaims of claims (name-ordered) that pass the
// node-level candidate checks (types.go NewCandidate, statenode.go
// ValidateNodeDisruptable) and the method's own test, in name order.
// Pod-level blockers are checked later, only for the candidates a method
// reaches (candidate).
func (k *Karpenter) eligibleAmong(claims []*NodeClaim, should func(*NodeClaim) bool) []*NodeClaim {
	var out []*NodeClaim
	for _, c := range claims {
		if c.command != nil || c.deleting || c.markedForDeletion || c.Initialized.IsZero() || !should(c) {
			continue
		}
		node := k.nodeOf(c)
		if node == nil || k.pools[c.NodePool] == nil {
			continue
		}
		if node.Annotations[DoNotDisrupt] == "true" {
			k.noteCandidateBlocked(c, "", "", fmt.Sprintf("node has %q annotation", DoNotDisrupt))
			continue
		}
		out = append(out, c)
	}
	return out
}

// candidate checks a NodeClaim's pods (ValidatePodsDisruptable) and returns
// it as a candidate, or nil when a pod blocks it. Graceful methods are
// always blocked by PDBs and do-not-disrupt pods; the eventual class (Drift)
// is not when the NodeClaim has a terminationGracePeriod (semantics.md §A.4).
func (k *Karpenter) candidate(c *NodeClaim, class string) *candidate {
	if (class == gracefulClass || c.TerminationGracePeriod == nil) && k.podsBlock(c) {
		return nil
	}
	k.clearCandidateBlocks(c)
	return &candidate{claim: c, pool: k.pools[c.NodePool], pods: k.reschedulablePods(c.Node)}
}

// reschedulablePods are the pods that would need a new home: not
// terminating, not DaemonSet or mirror pods, not terminal.
func (k *Karpenter) reschedulablePods(node string) []*corev1.Pod {
	return drain.Select(k.kube.PodsOnNode(node), drain.SkipTerminating, drain.SkipDaemonSet, drain.SkipMirror, drain.SkipTerminal)
}

func (k *Karpenter) noteCandidateBlocked(c *NodeClaim, pod, pdb, msg string) {
	key := c.Node + "|" + pod
	b, ok := k.blocked[key]
	if !ok {
		b = &Blocked{Node: c.Node, Pod: pod, PDB: pdb, Since: k.eng.Now(), Outcome: "disruption-blocked", Message: msg}
		k.addBlocked(key, b)
		k.log(Event{Type: "Warning", Code: "DisruptionBlocked", Message: "cannot disrupt nodeclaim: " + msg, NodePool: c.NodePool, NodeClaim: c.Name, Node: c.Node})
	}
	b.Until, b.Outcome, b.Message = time.Time{}, "disruption-blocked", msg
}

// clearCandidateBlocks closes candidate-level blocks once the node is a
// candidate again.
func (k *Karpenter) clearCandidateBlocks(c *NodeClaim) {
	for _, b := range k.blockedByNode[c.Node] {
		if b.Outcome == "disruption-blocked" && b.Until.IsZero() {
			b.Until = k.eng.Now()
			b.Outcome = "unblocked"
		}
	}
}

func pdbNames(pdbs []*policyv1.PodDisruptionBudget) string {
	s := ""
	for i, p := range pdbs {
		if i > 0 {
			s += ","
		}
		s += p.Namespace + "/" + p.Name
	}
	return s
}
