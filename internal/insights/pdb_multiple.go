package insights

import (
	"fmt"
	"slices"
	"strings"
)

func init() { Register(pdbMultiple{}) }

// pdbMultiple finds pods selected by more than one PodDisruptionBudget:
// the Eviction API refuses them with 500 ("This pod has more than one
// PodDisruptionBudget, which the eviction subresource does not support"),
// so no drain can move them. ERROR.
type pdbMultiple struct{}

func (pdbMultiple) Info() Info {
	return Info{
		ID:    "pdb-multiple",
		Title: "Pods selected by more than one PodDisruptionBudget",
		Help: "The Eviction API refuses a pod that more than one PodDisruptionBudget selects with 500 Internal Server Error, so drains, " +
			"Karpenter and managed node group updates cannot move it. ERROR.",
		Needs: NeedsObjects,
	}
}

func (pdbMultiple) Run(in *Input) []Finding {
	var out []Finding
	for _, w := range in.Workloads() {
		if w.IsDaemonSet() {
			continue
		}
		// The same PodDisruptionBudget written twice (two files, two
		// overlays) is one object in the cluster: count names.
		var names []string
		for _, p := range in.PDBsFor(w) {
			if !slices.Contains(names, p.Object.Name) {
				names = append(names, p.Object.Name)
			}
		}
		if len(names) < 2 {
			continue
		}
		o := w.Object
		msg := fmt.Sprintf("the pods of %s are selected by %d PodDisruptionBudgets (%s): every eviction fails with 500 and drains of their nodes never finish",
			o, len(names), strings.Join(names, ", "))
		rec := fmt.Sprintf("Keep one PodDisruptionBudget for these pods: narrow the selectors of the others so they no longer match labels %s, or delete them.",
			matchLabelsYAML(w.Pod.Labels))
		out = append(out, o.Finding(Error, w.Field("metadata.labels"), msg, rec))
	}
	return out
}
