package insights

import "fmt"

func init() { Register(pdbMissing{}) }

// pdbMissing finds workloads with several replicas and no
// PodDisruptionBudget: nothing stops a drain from evicting every replica
// at once. WARNING (a risk, not a block).
//
// A budget of either served version counts (policy/v1 and v1beta1, the
// latter with its own empty-selector rule), and the budget it recommends
// never selects pods another budget already selects: two budgets on one pod
// make every eviction of it fail with 500 (semantics.md §D.1).
type pdbMissing struct{}

func (pdbMissing) Info() Info {
	return Info{
		ID:    "pdb-missing",
		Title: "Workloads with several replicas and no PodDisruptionBudget",
		Help: "Without a PodDisruptionBudget, draining a node evicts every replica on it at once, and node group updates may drain several nodes together: " +
			"the workload can go down during the upgrade. WARNING. The recommended selector never overlaps pods another budget selects.",
		Needs: NeedsObjects,
	}
}

func (pdbMissing) Run(in *Input) []Finding {
	var out []Finding
	var covered *coveredPods
	for _, w := range in.Workloads() {
		if w.IsDaemonSet() || w.IsBarePod() || w.Replicas < 2 || len(in.PDBsFor(w)) > 0 {
			continue
		}
		if covered == nil {
			covered = newCoveredPods(in)
		}
		o := w.Object
		msg := fmt.Sprintf("%s runs %s and no PodDisruptionBudget selects its pods: a drain may evict them all at once", o, w.ReplicasText())
		sel := selectorLabels(w)
		clash := covered.selectedBy(o.Namespace, sel)
		if clash != nil && len(w.Pod.Labels) > len(sel) && covered.selectedBy(o.Namespace, w.Pod.Labels) == nil {
			// The workload's selector also matches pods a budget covers;
			// all its template labels do not.
			sel, clash = w.Pod.Labels, nil
		}
		rec := fmt.Sprintf("Add a policy/v1 PodDisruptionBudget in namespace %s with selector.matchLabels %s and maxUnavailable: 1.",
			nsOrDefault(o.Namespace), matchLabelsYAML(sel))
		if clash != nil {
			rec = fmt.Sprintf("Give the pod template of %s a label of its own, then add a policy/v1 PodDisruptionBudget in namespace %s selecting it with maxUnavailable: 1; "+
				"its labels %s also select the pods of %s, which PodDisruptionBudget %s already selects, and two budgets on one pod make every eviction fail.",
				o, nsOrDefault(o.Namespace), matchLabelsYAML(w.Pod.Labels), clash.Object, clash.pdbs[0].Object.Name)
		}
		out = append(out, o.Finding(Warning, "", msg, rec))
	}
	return out
}

// coveredPods indexes, per namespace and pod label, the workloads whose
// pods some PodDisruptionBudget already selects.
type coveredPods struct {
	byLabel map[string]map[podLabel][]*Workload // namespace → label → workloads
}

type podLabel struct{ key, value string }

func newCoveredPods(in *Input) *coveredPods {
	c := &coveredPods{byLabel: map[string]map[podLabel][]*Workload{}}
	for _, w := range in.Workloads() {
		if len(in.PDBsFor(w)) == 0 {
			continue
		}
		ns := c.byLabel[w.Object.Namespace]
		if ns == nil {
			ns = map[podLabel][]*Workload{}
			c.byLabel[w.Object.Namespace] = ns
		}
		for _, l := range w.Pod.Labels {
			ns[podLabel{l.Key, l.Value}] = append(ns[podLabel{l.Key, l.Value}], w)
		}
	}
	return c
}

// selectedBy returns the first workload (in source order) in namespace ns
// that a budget covers and whose pods matchLabels m would select; nil when
// none. An empty m selects every pod, so it clashes with any covered one.
// The answer does not depend on which of m's labels picks the candidates.
func (c *coveredPods) selectedBy(ns string, m LabelSet) *Workload {
	idx := c.byLabel[ns]
	var first *Workload
	consider := func(w *Workload) {
		for _, l := range m {
			if got, ok := w.Pod.Labels.Lookup(l.Key); !ok || got != l.Value {
				return
			}
		}
		if first == nil || w.order < first.order {
			first = w
		}
	}
	if len(m) == 0 {
		for _, ws := range idx {
			for _, w := range ws {
				consider(w)
			}
		}
		return first
	}
	// Every match carries each of m's labels: one list holds them all.
	for _, w := range idx[podLabel{m[0].Key, m[0].Value}] {
		consider(w)
	}
	return first
}

// selectorLabels are the labels a PDB for the workload should match: the
// workload's own matchLabels when it has them, else the template's labels.
func selectorLabels(w *Workload) LabelSet {
	if len(w.Selector) > 0 {
		return w.Selector
	}
	return w.Pod.Labels
}

func nsOrDefault(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}
