package rehearse

import (
	"fmt"
	"strings"

	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// A PDB violation is a pod taken down without the Eviction API while a
// PodDisruptionBudget selecting it allowed no disruption — however it went:
// deleted (Karpenter's terminationGracePeriod, a forced managed node group
// update) or with its node (DeleteNodegroup after its 5-minute drain, a
// scale-in after 15 minutes, an instance refresh without a lifecycle hook or
// whose hook timed out). The twin's cluster decides it at that instant from
// the PDB's status (kube.PDBBreach, semantics.md §D.1, §D.2); the rehearsal
// notes the step it happened in. A run that broke a budget did not succeed:
// its status is violated, and so is the step's.

// pdbBreach records one breach with the playbook phase it happened in.
func (r *run) pdbBreach(b kube.PDBBreach) {
	v := report.Violation{
		T: seconds(b.At.Sub(r.eng.Start())), Pod: b.Namespace + "/" + b.Name, Node: b.Node,
		PDB: strings.Join(b.PDBs, ","), Mechanism: b.Mechanism, By: b.By,
	}
	if r.inPhase {
		ph := &r.phases[r.currentPhase]
		ph.PDBViolations++
		v.Hop, v.Step, v.Name = r.hops[ph.Hop].To, ph.Kind, ph.Name
	}
	r.violations = append(r.violations, v)
}

// phaseViolated marks a phase that succeeded while breaking a budget.
func (r *run) phaseViolated(i int) {
	ph := &r.phases[i]
	if ph.Status != report.Succeeded {
		return
	}
	if rolled := r.phaseDrops[i]; len(rolled) > 0 {
		ph.Status = report.Violated
		r.phaseNote(fmt.Sprintf("%d pod(s) taken below their PodDisruptionBudget's floor by their own controller (PodDisruptionBudgets do not guard rollouts): %s",
			len(rolled), strings.Join(rolled, ", ")))
	}
	if ph.PDBViolations == 0 {
		return
	}
	ph.Status = report.Violated
	var pods []string
	for _, v := range r.violations {
		if v.Hop == r.hops[ph.Hop].To && v.Step == ph.Kind && v.Name == ph.Name {
			pods = append(pods, fmt.Sprintf("%s (%s)", v.Pod, v.PDB))
		}
	}
	r.phaseNote(fmt.Sprintf("%d pod(s) taken down while their PodDisruptionBudget allowed no disruption: %s", len(pods), strings.Join(pods, ", ")))
}

// statusWithViolations is the run's status once its violations are known:
// a run that finished but broke a budget, or whose rollouts held one below
// its floor, is violated, not succeeded.
func (r *run) statusWithViolations(status string, rollouts []report.RolloutBelowFloor) string {
	if status == report.Succeeded && (len(r.violations) > 0 || len(rollouts) > 0) {
		return report.Violated
	}
	return status
}

// violated reports whether a pod is among the violations (its killed note
// would say less than its violation does).
func (r *run) violated(namespace, name string) bool {
	for _, v := range r.violations {
		if v.Pod == namespace+"/"+name {
			return true
		}
	}
	return false
}
