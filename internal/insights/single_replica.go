package insights

import "fmt"

func init() { Register(singleReplica{}) }

// singleReplica finds workloads that run one pod, and bare Pods: every node
// replacement takes them down until the new pod is Ready, and nothing
// recreates a bare Pod at all. WARNING.
type singleReplica struct{}

func (singleReplica) Info() Info {
	return Info{
		ID:    "single-replica",
		Title: "Workloads that run a single pod",
		Help: "A workload with one replica is down from the eviction of its pod until the replacement is Ready, at every node replacement of the upgrade; " +
			"a Pod without a controller is deleted by the drain and never comes back. WARNING.",
		Needs: NeedsObjects,
	}
}

func (singleReplica) Run(in *Input) []Finding {
	var out []Finding
	for _, w := range in.Workloads() {
		o := w.Object
		switch {
		case w.IsBarePod():
			out = append(out, o.Finding(Warning, "",
				fmt.Sprintf("%s has no controller: the drain of its node deletes it and nothing recreates it", o),
				"Run it from a Deployment (or StatefulSet, or Job) so it is recreated on another node."))
		case !w.IsDaemonSet() && w.Replicas == 1:
			field := "spec.replicas"
			if w.HPA != nil {
				field = ""
			}
			out = append(out, o.Finding(Warning, field,
				fmt.Sprintf("%s runs %s: it is unavailable from each eviction until its new pod is Ready", o, w.ReplicasText()),
				"Run at least 2 replicas, spread across nodes and zones, with a PodDisruptionBudget of maxUnavailable: 1."))
		}
	}
	return out
}
