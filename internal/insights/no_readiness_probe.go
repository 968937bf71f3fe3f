package insights

import (
	"fmt"
	"strings"
)

func init() { Register(noReadinessProbe{}) }

// noReadinessProbe finds workloads none of whose containers has a
// readinessProbe: a replacement pod is Ready, and gets traffic and counts
// toward PodDisruptionBudgets, as soon as it starts, before it can serve.
// (One probed container is enough: a pod is Ready only when every container
// is.) WARNING.
type noReadinessProbe struct{}

func (noReadinessProbe) Info() Info {
	return Info{
		ID:    "no-readiness-probe",
		Title: "Containers without a readinessProbe",
		Help: "When none of a pod's containers has a readinessProbe, the pod is Ready as soon as they start: during node replacements Services send it traffic before it can serve, " +
			"and PodDisruptionBudgets count it as healthy, so the next eviction proceeds too early. WARNING. DaemonSets and bare Pods are not checked.",
		Needs: NeedsObjects,
	}
}

func (noReadinessProbe) Run(in *Input) []Finding {
	var out []Finding
	for _, w := range in.Workloads() {
		if w.IsDaemonSet() || w.IsBarePod() || w.Replicas == 0 {
			continue
		}
		var names []string
		probed := false
		for _, c := range w.Pod.Containers {
			names = append(names, c.Name)
			probed = probed || c.ReadinessProbe
		}
		if probed || len(names) == 0 {
			continue // one probed container gates the whole pod's readiness
		}
		o := w.Object
		what := "its container " + names[0] + " has no readinessProbe"
		if len(names) > 1 {
			what = "none of its containers (" + strings.Join(names, ", ") + ") has a readinessProbe"
		}
		out = append(out, o.Finding(Warning, w.Field("spec.containers[0]"),
			fmt.Sprintf("%s: %s, so a replacement pod is Ready — gets traffic and counts toward its PodDisruptionBudget — as soon as it starts, before it can serve", o, what),
			"Add a readinessProbe (httpGet, tcpSocket or exec) to the container that serves, succeeding only when it can."))
	}
	return out
}
