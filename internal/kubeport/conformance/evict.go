package conformance

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// The Eviction API's rules, semantics.md §D.1. In every case the node is
// cordoned before the first eviction, so an evicted pod's replacement stays
// Pending and the PDB's status holds still while the case reads it.

// web builds the usual fixture: one node, Deployment web with replicas
// Ready pods, then the given PDBs over app=web; it waits until every PDB
// has observed currentHealthy == replicas, then cordons the node. It
// returns the node and the pods sorted by name.
//
// The PDBs are created once the pods are Ready, so that each PDB's own
// creation brings it up to date (see pdbsAfterReadyPods).
func (f *fixture) web(replicas int32, pdbs ...pdbSpec) (string, []corev1.Pod, error) {
	node, err := f.addNode("n0")
	if err != nil {
		return "", nil, err
	}
	if err := f.deployment("web", replicas, node); err != nil {
		return "", nil, err
	}
	pods, err := f.readyPods("web", int(replicas))
	if err != nil {
		return "", nil, err
	}
	for _, p := range pdbs {
		if err := f.pdb(p); err != nil {
			return "", nil, err
		}
	}
	for _, p := range pdbs {
		if err := f.waitPDB(p.name, expectedStatus(p, replicas, replicas)); err != nil {
			return "", nil, err
		}
	}
	if err := f.env.Cordon(f.ctx, node); err != nil {
		return "", nil, fmt.Errorf("cordon %s: %w", node, err)
	}
	return node, pods, nil
}

// expectedStatus is the disruption controller's status (semantics.md
// §D.2) for a PDB over a Deployment of replicas pods, healthy of them Ready,
// for the integer minAvailable or maxUnavailable the suite uses.
func expectedStatus(p pdbSpec, replicas, healthy int32) pdbStatus {
	var desired int32
	if p.minAvailable != nil {
		desired = p.minAvailable.IntVal
	} else {
		desired = max(0, replicas-p.maxUnavailable.IntVal)
	}
	return pdbStatus{CurrentHealthy: healthy, DesiredHealthy: desired, DisruptionsAllowed: max(0, healthy-desired), ExpectedPods: replicas}
}

func evictionCases() []testCase {
	cases := []testCase{
		{"evict/allowed-consumes-budget", evictAllowed},
		{"evict/exhausted-pdb-429", evictExhausted},
		{"evict/two-pdbs-500", evictTwoPDBs},
		{"evict/pending-pod-ignores-pdb", evictPending},
		{"evict/missing-pod-404", evictMissing},
	}
	return append(cases, unreadyCases()...)
}

// evictAllowed: with disruptionsAllowed 1 the eviction is accepted (201),
// the pod is deleted, and the budget is spent: the next eviction is a 429.
func evictAllowed(f *fixture) error {
	pdb := pdbSpec{name: "web", app: "web", minAvailable: intOrStr(2)}
	_, pods, err := f.web(3, pdb)
	if err != nil {
		return err
	}
	if err := f.env.Evict(f.ctx, f.ns, pods[0].Name); err != nil {
		return mismatchf("evict %s with disruptionsAllowed 1: want success, got %v", pods[0].Name, err)
	}
	if err := f.evicted(pods[0].Name); err != nil {
		return err
	}
	// The replacement is Pending on the cordoned node: 3 pods expected, 2
	// healthy, none more may go.
	if err := f.waitPDB("web", pdbStatus{CurrentHealthy: 2, DesiredHealthy: 2, DisruptionsAllowed: 0, ExpectedPods: 3}); err != nil {
		return err
	}
	err = f.env.Evict(f.ctx, f.ns, pods[1].Name)
	if err := pdbViolation("web", 2, 2).check("evict "+pods[1].Name+" after the budget is spent", err); err != nil {
		return err
	}
	return f.untouched(pods[1].Name)
}

// evictExhausted: disruptionsAllowed 0 gives 429 TooManyRequests with the
// DisruptionBudget cause, no Retry-After, and the pod stays.
func evictExhausted(f *fixture) error {
	_, pods, err := f.web(2, pdbSpec{name: "web", app: "web", minAvailable: intOrStr(2)})
	if err != nil {
		return err
	}
	err = f.env.Evict(f.ctx, f.ns, pods[0].Name)
	if err := pdbViolation("web", 2, 2).check("evict "+pods[0].Name, err); err != nil {
		return err
	}
	return f.untouched(pods[0].Name)
}

// pdbsAfterReadyPods: when a pod changes, kube-controller-manager's
// disruption controller resyncs only ONE of the PDBs that select it —
// getPdbForPod takes the first of the PDB lister's matches, an unordered
// cache list ("matches multiple PodDisruptionBudgets. Chose %q
// arbitrarily", pkg/controller/disruption/disruption.go addPod, updatePod,
// deletePod) — so the status of a pod's other PDBs goes stale until
// something else (their own update, a resync hours later) syncs them. The
// twin resyncs every PDB of the pod. The cases with two PDBs over one pod
// therefore create the PDBs once the pods are Ready and then change
// nothing the PDBs' statuses depend on: each PDB's creation syncs it with
// the final pods, on both implementations.

// evictTwoPDBs: a pod selected by two PDBs gets 500 (not 429), each PDB
// allowing a disruption notwithstanding (semantics.md §F pitfall 7).
func evictTwoPDBs(f *fixture) error {
	a := pdbSpec{name: "web-a", app: "web", maxUnavailable: intOrStr(1)}
	b := pdbSpec{name: "web-b", app: "web", maxUnavailable: intOrStr(1)}
	_, pods, err := f.web(2, a, b)
	if err != nil {
		return err
	}
	err = f.env.Evict(f.ctx, f.ns, pods[0].Name)
	want := wantStatus{Code: 500, Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}
	if err := want.check("evict "+pods[0].Name, err); err != nil {
		return err
	}
	if err := f.untouched(pods[0].Name); err != nil {
		return err
	}
	// Neither budget was spent: the status holds, and no PDB records the
	// pod in disruptedPods, as an accepted eviction does.
	for _, p := range []pdbSpec{a, b} {
		if err := f.waitPDB(p.name, expectedStatus(p, 2, 2)); err != nil {
			return err
		}
	}
	pdbs, err := f.env.ListPDBs(f.ctx, f.ns)
	if err != nil {
		return err
	}
	for _, p := range pdbs {
		if _, ok := p.Status.DisruptedPods[pods[0].Name]; ok {
			return mismatchf("PDB %s records %s in disruptedPods after an eviction refused with 500", p.Name, pods[0].Name)
		}
	}
	return nil
}

// evictPending: a Pending pod is deleted whatever its PDB says
// (canIgnorePDB), even under a budget so short of healthy pods that the
// unready-pod rule would refuse it, while the PDB still refuses a Ready pod.
func evictPending(f *fixture) error {
	node, err := f.addNode("n0")
	if err != nil {
		return err
	}
	if err := f.deployment("web", 1, node); err != nil {
		return err
	}
	// Same labels, but it selects a node that does not exist: Pending.
	spec := podSpec(f.ns + "-nowhere")
	if err := f.barePod("web-pending", map[string]string{"app": "web"}, nil, spec); err != nil {
		return err
	}
	if err := f.pdb(pdbSpec{name: "web", app: "web", minAvailable: intOrStr(2)}); err != nil {
		return err
	}
	// minAvailable as an integer counts every selected pod as expected,
	// the Pending one too (semantics.md §D.2): 1 healthy of 2 needed.
	if err := f.waitPDB("web", pdbStatus{CurrentHealthy: 1, DesiredHealthy: 2, DisruptionsAllowed: 0, ExpectedPods: 2}); err != nil {
		return err
	}
	p, err := f.env.GetPod(f.ctx, f.ns, "web-pending")
	if err != nil {
		return err
	}
	if p.Status.Phase != corev1.PodPending || p.Spec.NodeName != "" {
		return mismatchf("web-pending should be Pending and unbound, is %s on %q", p.Status.Phase, p.Spec.NodeName)
	}
	if err := f.env.Evict(f.ctx, f.ns, "web-pending"); err != nil {
		return mismatchf("evict Pending pod web-pending under an exhausted PDB: want success, got %v", err)
	}
	if err := f.gone("web-pending"); err != nil {
		return err
	}
	pods, err := f.readyPods("web", 1)
	if err != nil {
		return err
	}
	err = f.env.Evict(f.ctx, f.ns, pods[0].Name)
	return pdbViolation("web", 2, 1).check("evict Ready pod "+pods[0].Name, err)
}

// evictMissing: evicting or deleting a pod that does not exist is a 404.
func evictMissing(f *fixture) error {
	err := f.env.Evict(f.ctx, f.ns, "no-such-pod")
	if err := notFound("pods", "no-such-pod").check("evict no-such-pod", err); err != nil {
		return err
	}
	err = f.env.DeletePod(f.ctx, f.ns, "no-such-pod", nil)
	return notFound("pods", "no-such-pod").check("delete no-such-pod", err)
}

// unreadyCases: a Running pod that is not Ready, under each
// unhealthyPodEvictionPolicy, with the budget healthy (currentHealthy ≥
// desiredHealthy) or not (semantics.md §D.1, §F pitfall 8).
func unreadyCases() []testCase {
	type row struct {
		name    string
		policy  *policyv1.UnhealthyPodEvictionPolicyType
		healthy bool // whether the budget is healthy once the pod is unready
		allowed bool
	}
	rows := []row{
		// IfHealthyBudget (also the default when unset): the unready pod
		// may go without spending the budget only while the budget holds.
		{"evict/unready-ifhealthybudget-budget-healthy", ptr(policyv1.IfHealthyBudget), true, true},
		{"evict/unready-ifhealthybudget-budget-unhealthy", ptr(policyv1.IfHealthyBudget), false, false},
		{"evict/unready-default-policy-budget-unhealthy", nil, false, false},
		// AlwaysAllow: an unready pod may always go.
		{"evict/unready-alwaysallow-budget-healthy", ptr(policyv1.AlwaysAllow), true, true},
		{"evict/unready-alwaysallow-budget-unhealthy", ptr(policyv1.AlwaysAllow), false, true},
	}
	var out []testCase
	for _, r := range rows {
		out = append(out, testCase{r.name, func(f *fixture) error {
			// minAvailable 2: with 3 replicas one unready pod leaves the
			// budget healthy (2 ≥ 2) but allowing nothing; with 2 replicas
			// it leaves it unhealthy (1 < 2).
			replicas := int32(2)
			if r.healthy {
				replicas = 3
			}
			pdb := pdbSpec{name: "web", app: "web", minAvailable: intOrStr(2), policy: r.policy}
			_, pods, err := f.web(replicas, pdb)
			if err != nil {
				return err
			}
			unready, ready := pods[0].Name, pods[1].Name
			if err := f.env.SetPodReady(f.ctx, f.ns, unready, false); err != nil {
				return fmt.Errorf("make %s unready: %w", unready, err)
			}
			if err := f.waitPDB("web", expectedStatus(pdb, replicas, replicas-1)); err != nil {
				return err
			}
			err = f.env.Evict(f.ctx, f.ns, unready)
			if !r.allowed {
				if err := pdbViolation("web", 2, int(replicas-1)).check("evict unready "+unready, err); err != nil {
					return err
				}
				return f.untouched(unready)
			}
			if err != nil {
				return mismatchf("evict unready %s: want success, got %v", unready, err)
			}
			if err := f.evicted(unready); err != nil {
				return err
			}
			// The unready pod went without spending the budget; a Ready
			// pod is still held by it.
			err = f.env.Evict(f.ctx, f.ns, ready)
			if err := pdbViolation("web", 2, int(replicas-1)).check("evict Ready "+ready, err); err != nil {
				return err
			}
			return f.untouched(ready)
		}})
	}
	return out
}
