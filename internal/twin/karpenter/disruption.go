package karpenter

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/disruption"
	"github.com/ladder-eks/ladder/internal/eviction"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// The disruption controller (semantics.md §A.4): every 10 s, and again at
// once after a command starts, it tries its methods in order — Emptiness,
// then Drift — and stops at the first that produces a command. Budgets come
// from BuildDisruptionBudgetMapping (§A.1b). Underutilized consolidation is
// not modelled: a rehearsal never consolidates non-empty nodes.

// Disruption classes (§A.4): graceful methods are always blocked by PDBs and
// do-not-disrupt pods; the eventual class (Drift) ignores them when the
// NodeClaim has a terminationGracePeriod.
const (
	gracefulClass = "graceful"
	eventualClass = "eventual"
)

type candidate struct {
	claim *NodeClaim
	pool  *pool
	pods  []*corev1.Pod // reschedulable pods
}

func (k *Karpenter) disrupt() {
	if k.validating || len(k.pools) == 0 {
		return
	}
	for _, method := range []func() bool{k.emptiness, k.drift} {
		if method() {
			k.disrupting.Fire() // singleton.RequeueImmediately
			return
		}
	}
}

// budgetMapping is BuildDisruptionBudgetMapping: per NodePool, the allowed
// disruptions for reason minus the nodes already disrupting. The total
// counts initialized Karpenter nodes without InstanceTerminating; NotReady
// and marked-for-deletion nodes count and are subtracted.
func (k *Karpenter) budgetMapping(reason karpv1.DisruptionReason) map[string]int {
	numNodes, disrupting := map[string]int{}, map[string]int{}
	for _, c := range k.NodeClaims() {
		if c.Initialized.IsZero() || c.terminating {
			continue
		}
		// Initialized is when the twin set karpenter.sh/initialized=true on
		// the node; it never removes it.
		node := k.nodeOf(c)
		if node == nil {
			continue
		}
		numNodes[c.NodePool]++
		if !kube.IsNodeReady(node) || c.markedForDeletion || c.deleting {
			disrupting[c.NodePool]++
		}
	}
	out := map[string]int{}
	for name, p := range k.pools {
		allowed, err := disruption.AllowedByReason(p.obj, k.eng.Now(), numNodes[name])
		if err != nil {
			k.noteBudgetBlock(name, reason, fmt.Sprintf("NodePool %s has an invalid budget (%v): Karpenter fails closed and disrupts nothing", name, err))
		}
		a := allowed[reason]
		if numNodes[name] != 0 && a == 0 && err == nil {
			k.noteBudgetBlock(name, reason, fmt.Sprintf("NodePool %s's budgets allow 0 %s disruptions now", name, reason))
		}
		out[name] = disruption.Available(a, disrupting[name])
	}
	return out
}

func (k *Karpenter) noteBudgetBlock(pool string, reason karpv1.DisruptionReason, msg string) {
	key := pool + "/" + string(reason)
	if k.budgetBlocks[key] == msg {
		return
	}
	k.budgetBlocks[key] = msg
	k.log(Event{Type: "Warning", Code: "DisruptionBlocked", Message: msg, NodePool: pool, Reason: lower(reason)})
}

// BudgetBlocks lists NodePools whose budgets stopped a disruption reason.
func (k *Karpenter) BudgetBlocks() []string {
	out := make([]string, 0, len(k.budgetBlocks))
	for _, key := range sortedNames(k.budgetBlocks) {
		out = append(out, k.budgetBlocks[key])
	}
	return out
}

// eligible lists the NodeClaims that pass the node-level candidate checks
// (types.go NewCandidate, statenode.go ValidateNodeDisruptable) and the
// method's own test, in name order. Pod-level blockers are checked later,
// only for the candidates a method reaches (podsBlock).
func (k *Karpenter) eligible(should func(*NodeClaim) bool) []*NodeClaim {
	var out []*NodeClaim
	for _, c := range k.NodeClaims() {
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
	pods := k.reschedulablePods(c.Node)
	if (class == gracefulClass || c.TerminationGracePeriod == nil) && k.podsBlock(c, pods) {
		return nil
	}
	k.clearCandidateBlocks(c)
	return &candidate{claim: c, pool: k.pools[c.NodePool], pods: pods}
}

// podsBlock reports whether a pod on the node blocks its disruption: an
// active karpenter.sh/do-not-disrupt annotation, or a PDB that would refuse
// the eviction now (429, or 500 for a pod with several PDBs).
func (k *Karpenter) podsBlock(c *NodeClaim, pods []*corev1.Pod) bool {
	for _, p := range pods {
		if doNotDisrupt(p, k.eng.Now()) {
			k.noteCandidateBlocked(c, p.Namespace+"/"+p.Name, "", fmt.Sprintf("pod %s/%s has %q annotation", p.Namespace, p.Name, DoNotDisrupt))
			return true
		}
		if err := k.kube.DisruptionAllowed(p.Namespace, p.Name); err != nil && (eviction.IsPDBBlock(err) || eviction.IsMultiplePDB(err)) {
			k.noteCandidateBlocked(c, p.Namespace+"/"+p.Name, pdbNames(k.kube.PDBsForPod(p.Namespace, p.Name)), eviction.BlockingMessage(err))
			return true
		}
	}
	return false
}

// doNotDisrupt reports an active karpenter.sh/do-not-disrupt on a pod:
// "true", or a positive duration measured from the pod's start.
func doNotDisrupt(p *corev1.Pod, now time.Time) bool {
	v, ok := p.Annotations[DoNotDisrupt]
	if !ok {
		return false
	}
	if v == "true" {
		return true
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || p.Status.StartTime == nil {
		return false
	}
	return now.Before(p.Status.StartTime.Add(d))
}

// reschedulablePods are the pods that would need a new home: not
// terminal, not terminating, not DaemonSet or mirror pods.
func (k *Karpenter) reschedulablePods(node string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range k.kube.PodsOnNode(node) {
		if p.DeletionTimestamp != nil || isDaemonSetPod(p) || isMirrorPod(p) ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		out = append(out, p)
	}
	return out
}

func isMirrorPod(p *corev1.Pod) bool {
	_, ok := p.Annotations[corev1.MirrorPodAnnotationKey]
	return ok
}

// drift is the Drift method (drift.go): drifted candidates ordered by when
// they drifted, empty ones first; the first within budget whose pods can be
// rescheduled becomes a one-candidate command.
//
// Upstream returns after one command and requeues the controller at once;
// the next pass finds the same candidates minus the one just taken, with one
// more node disrupting. The twin runs those passes in one loop at the same
// virtual instant: each further command sees the budget lowered by the
// commands before it and simulates against the cluster they left.
func (k *Karpenter) drift() bool {
	mapping := k.budgetMapping(karpv1.DisruptionReasonDrifted)
	if !anyAllowed(mapping) {
		return false
	}
	claims := k.eligible(func(c *NodeClaim) bool { return c.Drifted != "" })
	sort.SliceStable(claims, func(i, j int) bool { return claims[i].DriftedSince.Before(claims[j].DriftedSince) })
	var empty, nonEmpty []*NodeClaim
	for _, c := range claims {
		if k.kube.ActivePods(c.Node) == 0 {
			empty = append(empty, c)
		} else {
			nonEmpty = append(nonEmpty, c)
		}
	}
	claims = append(empty, nonEmpty...)
	started := false
	for _, claim := range claims {
		if mapping[claim.NodePool] == 0 {
			continue
		}
		c := k.candidate(claim, eventualClass)
		if c == nil {
			continue
		}
		res := k.simulate(c)
		if !res.allScheduled() {
			for _, p := range sortedPods(res.failed) {
				if !res.pending[p] {
					k.noteCandidateBlocked(c.claim, p.Namespace+"/"+p.Name, "", "pod cannot be rescheduled: "+res.failed[p])
					break
				}
			}
			continue
		}
		k.startCommand(&command{reason: "drifted", candidates: []*candidate{c}, replacements: res.claims, plan: res})
		mapping[claim.NodePool]-- // the candidate is now marked for deletion: one more disrupting
		started = true
	}
	return started
}

func anyAllowed(mapping map[string]int) bool {
	for _, v := range mapping {
		if v > 0 {
			return true
		}
	}
	return false
}

// simulate is SimulateScheduling for one candidate: its pods, the pending
// pods and the pods of deleting nodes, onto every other active node.
//
// Pods of deleting nodes that an earlier command already planned a place
// for are nominated there (see nominations.go): the capacity they will take
// is reserved and they are not packed again, as Karpenter's cluster state
// keeps nominated pods on their target nodes.
func (k *Karpenter) simulate(c *candidate) packResult {
	exclude := map[string]bool{c.claim.Node: true}
	pods := append([]*corev1.Pod(nil), c.pods...)
	pending := map[*corev1.Pod]bool{}
	for _, p := range k.kube.PendingPods() {
		if !isDaemonSetPod(p) {
			pods = append(pods, p)
			pending[p] = true
		}
	}
	for _, other := range k.NodeClaims() {
		if other != c.claim && (other.deleting || other.markedForDeletion) && other.Node != "" {
			exclude[other.Node] = true
			if k.nominatedOn[other.Node] >= k.kube.ActivePods(other.Node) {
				continue // every pod there already has a planned place
			}
			for _, p := range k.reschedulablePods(other.Node) {
				if _, ok := k.nominations[p.Namespace+"/"+p.Name]; !ok {
					pods = append(pods, p)
				}
			}
		}
	}
	res := k.pack(pods, k.existingCapacity(exclude))
	res.pending = pending
	// A decision must not rely on nodes still initializing: a pod placed on
	// one is an error, unless it comes from a node already being deleted
	// (SimulateScheduling's UninitializedNodeError).
	deleting := map[*corev1.Pod]bool{}
	for _, other := range k.NodeClaims() {
		if other != c.claim && (other.deleting || other.markedForDeletion) && other.Node != "" {
			for _, p := range k.reschedulablePods(other.Node) {
				deleting[p] = true
			}
		}
	}
	for name, placed := range res.existing {
		if k.initializedCapacity(name) {
			continue
		}
		for _, p := range placed {
			if !deleting[p] {
				res.failed[p] = fmt.Sprintf("would schedule against uninitialized nodeclaim %s", strings.TrimPrefix(name, "nodeclaim/"))
			}
		}
	}
	return res
}

// initializedCapacity reports whether a simulation place is an initialized
// node (not an in-flight NodeClaim, not a node still initializing).
func (k *Karpenter) initializedCapacity(name string) bool {
	if strings.HasPrefix(name, "nodeclaim/") {
		return false
	}
	if c := k.byNode[name]; c != nil {
		return !c.Initialized.IsZero()
	}
	return true
}

// emptiness is the Emptiness method: nodes with no reschedulable pods whose
// consolidateAfter has elapsed, under consolidationPolicy WhenEmpty or
// WhenEmptyOrUnderutilized, within the Empty budget; the command is
// re-validated after 15 s.
func (k *Karpenter) emptiness() bool {
	now := k.eng.Now()
	claims := k.eligible(func(c *NodeClaim) bool {
		p := k.pools[c.NodePool]
		if p == nil {
			return false
		}
		after := p.obj.Spec.Disruption.ConsolidateAfter.Duration
		if after == nil || k.kube.ActivePods(c.Node) > 0 || p.obj.Spec.Disruption.ConsolidationPolicy == karpv1.ConsolidationPolicy("") {
			return false
		}
		last := k.kube.LastPodEvent(c.Node)
		if c.Initialized.After(last) {
			last = c.Initialized
		}
		return !now.Before(last.Add(*after))
	})
	if len(claims) == 0 {
		return false
	}
	mapping := k.budgetMapping(karpv1.DisruptionReasonEmpty)
	var chosen []*candidate
	for _, claim := range claims {
		if mapping[claim.NodePool] == 0 {
			continue
		}
		if c := k.candidate(claim, gracefulClass); c != nil {
			mapping[claim.NodePool]--
			chosen = append(chosen, c)
		}
	}
	if len(chosen) == 0 {
		return false
	}
	k.validating = true
	k.eng.After(commandValidationDelay, func() {
		k.validating = false
		var valid []*candidate
		mapping := k.budgetMapping(karpv1.DisruptionReasonEmpty)
		for _, c := range chosen {
			if c.claim.deleting || c.claim.markedForDeletion || len(k.reschedulablePods(c.claim.Node)) > 0 || k.kube.Node(c.claim.Node) == nil {
				continue
			}
			if mapping[c.pool.obj.Name] > 0 {
				mapping[c.pool.obj.Name]--
				valid = append(valid, c)
			}
		}
		if len(valid) > 0 {
			k.startCommand(&command{reason: "empty", candidates: valid})
		}
		k.disrupting.Fire()
	})
	return true
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

func lower(r karpv1.DisruptionReason) string {
	switch r {
	case karpv1.DisruptionReasonDrifted:
		return "drifted"
	case karpv1.DisruptionReasonEmpty:
		return "empty"
	case karpv1.DisruptionReasonUnderutilized:
		return "underutilized"
	}
	return string(r)
}
