package insights

import "fmt"

func init() { Register(pdbMissing{}) }

// pdbMissing finds workloads with several replicas and no
// PodDisruptionBudget: nothing stops a drain from evicting every replica
// at once. WARNING (a risk, not a block).
type pdbMissing struct{}

func (pdbMissing) Info() Info {
	return Info{
		ID:    "pdb-missing",
		Title: "Workloads with several replicas and no PodDisruptionBudget",
		Help: "Without a PodDisruptionBudget, draining a node evicts every replica on it at once, and node group updates may drain several nodes together: " +
			"the workload can go down during the upgrade. WARNING.",
		Needs: NeedsObjects,
	}
}

func (pdbMissing) Run(in *Input) []Finding {
	var out []Finding
	for _, w := range in.Workloads() {
		if w.IsDaemonSet() || w.IsBarePod() || w.Replicas < 2 || len(in.PDBsFor(w)) > 0 {
			continue
		}
		o := w.Object
		msg := fmt.Sprintf("%s runs %s and no PodDisruptionBudget selects its pods: a drain may evict them all at once", o, w.ReplicasText())
		rec := fmt.Sprintf("Add a policy/v1 PodDisruptionBudget in namespace %s with selector.matchLabels %s and maxUnavailable: 1.",
			nsOrDefault(o.Namespace), matchLabelsYAML(selectorLabels(w)))
		out = append(out, o.Finding(Warning, "", msg, rec))
	}
	return out
}

// selectorLabels are the labels a PDB for the workload should match: the
// workload's own matchLabels when it has them, else the template's labels.
func selectorLabels(w *Workload) map[string]string {
	if sel := workloadSelector(w); sel != nil && len(sel.MatchLabels) > 0 {
		return sel.MatchLabels
	}
	return w.Pod.Labels
}

func nsOrDefault(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}
