package karpenter

import (
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/utils/clock"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	podutil "sigs.k8s.io/karpenter/pkg/utils/pod"

	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// Pod-level candidate checks, as Karpenter makes them before it computes any
// command (semantics.md §A.4, "Candidate eligibility"): ValidatePodsDisruptable
// in pkg/controllers/state/statenode.go, and the PDB limits of
// pkg/utils/pdb/pdb.go. These read the PDBs' status as the disruption
// controller last wrote it: disruptionsAllowed == 0 blocks, whatever the pod.
// This is not the Eviction API's rule (internal/eviction), which the drain
// meets later: Karpenter does not ask the API server whether an eviction
// would pass.

// podsBlock reports whether a pod on the node blocks its disruption, and
// records why. All pods bound to the node count, DaemonSet pods included:
// first an active karpenter.sh/do-not-disrupt on any active pod, then, for
// every pod Karpenter would evict, a PDB with no disruptions allowed or more
// than one PDB.
func (k *Karpenter) podsBlock(c *NodeClaim) bool {
	clk := k.clock()
	for p := range k.kube.NodePods(c.Node) {
		if pod := p.Pod(); !podutil.IsDisruptable(pod, clk, nil) {
			k.noteCandidateBlocked(c, pod.Namespace+"/"+pod.Name, "",
				fmt.Sprintf("pod has %q annotation (Pod=%s/%s)", DoNotDisrupt, pod.Namespace, pod.Name))
			return true
		}
	}
	for p := range k.kube.NodePods(c.Node) {
		if keys, ok := k.canEvict(p, clk); !ok {
			msg := "pdb prevents pod evictions"
			if len(keys) > 1 {
				msg = "eviction does not support multiple PDBs"
			}
			pod := p.Pod()
			k.noteCandidateBlocked(c, pod.Namespace+"/"+pod.Name, strings.Join(keys, ","),
				fmt.Sprintf("%s (PodDisruptionBudget=[%s])", msg, strings.Join(keys, " ")))
			return true
		}
	}
	return false
}

// canEvict is pdb.Limits.isEvictable with the zeroDisruptions blocker. Pods
// Karpenter would not evict (terminal or terminating, tolerating
// karpenter.sh/disrupted:NoSchedule, owned by the Node) never block; a pod
// under two PDBs always does; an unready pod passes an AlwaysAllow PDB.
func (k *Karpenter) canEvict(p kube.PodOnNode, clk clock.Clock) (pdbs []string, ok bool) {
	pod := p.Pod()
	if !isEvictable(pod, clk) {
		return nil, true
	}
	if n := p.PDBs(); n > 1 {
		for i := range n {
			pdb := p.PDB(i)
			pdbs = append(pdbs, pdb.Namespace+"/"+pdb.Name)
		}
		return pdbs, false
	}
	if p.PDBs() == 1 {
		pdb := p.PDB(0)
		if alwaysAllow(pdb) && podReadyFalse(pod) {
			return nil, true
		}
		if pdb.Status.DisruptionsAllowed == 0 {
			return []string{pdb.Namespace + "/" + pdb.Name}, false
		}
	}
	return nil, true
}

// isEvictable is podutil.IsEvictable (pkg/utils/pod/scheduling.go) with the
// toleration test written out: upstream builds an error for every pod that
// does not tolerate the taint, and this runs for every pod of every
// candidate in every pass.
func isEvictable(p *corev1.Pod, clk clock.Clock) bool {
	return podutil.IsActive(p) && !toleratesDisrupted(p) && !podutil.IsOwnedByNode(p) && !podutil.IsDoNotDisruptActive(p, clk, nil)
}

// toleratesDisrupted is podutil.ToleratesDisruptedNoScheduleTaint.
func toleratesDisrupted(p *corev1.Pod) bool {
	for i := range p.Spec.Tolerations {
		if p.Spec.Tolerations[i].ToleratesTaint(logr.Discard(), &karpv1.DisruptedNoScheduleTaint, true) {
			return true
		}
	}
	return false
}

func alwaysAllow(pdb *policyv1.PodDisruptionBudget) bool {
	return pdb.Spec.UnhealthyPodEvictionPolicy != nil && *pdb.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow
}

// podReadyFalse is Karpenter's test for an unhealthy pod: a Ready condition
// with status False (no Ready condition at all is not unhealthy).
func podReadyFalse(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionFalse {
			return true
		}
	}
	return false
}

// clock hands Karpenter's own helpers (pkg/utils/pod), which take a
// k8s.io/utils/clock.Clock but only read the time, the twin's virtual clock.
func (k *Karpenter) clock() clock.Clock { return readClock{k.eng.Clock()} }

// readClock is a clock.Clock whose timers are never used: in the twin, time
// advances only through the sim engine.
type readClock struct{ clock.PassiveClock }

func (readClock) After(time.Duration) <-chan time.Time { panic("virtual clock: use the sim engine") }
func (readClock) NewTimer(time.Duration) clock.Timer   { panic("virtual clock: use the sim engine") }
func (readClock) Sleep(time.Duration)                  { panic("virtual clock: use the sim engine") }
func (readClock) Tick(time.Duration) <-chan time.Time  { panic("virtual clock: use the sim engine") }
