package insights

import "fmt"

func init() { Register(noSpread{}) }

// noSpread finds workloads with several replicas and neither
// topologySpreadConstraints nor pod anti-affinity: the scheduler may put
// every replica on one node or in one zone, and that node's drain (or that
// zone's) takes them all. WARNING.
type noSpread struct{}

func (noSpread) Info() Info {
	return Info{
		ID:    "no-spread",
		Title: "Replicas without topology spread or anti-affinity",
		Help: "Without topologySpreadConstraints or podAntiAffinity, replicas may share a node: one drain then evicts several at once, " +
			"and a PodDisruptionBudget makes the drain wait for each. WARNING.",
		Needs: NeedsObjects,
	}
}

func (noSpread) Run(in *Input) []Finding {
	var out []Finding
	for _, w := range in.Workloads() {
		if w.IsDaemonSet() || w.IsBarePod() || w.Replicas < 2 {
			continue
		}
		if w.Pod.Spread {
			continue
		}
		o := w.Object
		out = append(out, o.Finding(Warning, w.Field("spec"),
			fmt.Sprintf("%s runs %s with no topologySpreadConstraints or podAntiAffinity: they may share one node, whose drain evicts them together", o, w.ReplicasText()),
			fmt.Sprintf("Add topologySpreadConstraints with maxSkew: 1 on topology.kubernetes.io/zone and kubernetes.io/hostname (whenUnsatisfiable: ScheduleAnyway), labelSelector matchLabels %s.",
				matchLabelsYAML(selectorLabels(w)))))
	}
	return out
}
