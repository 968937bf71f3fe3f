package insights

import (
	"fmt"
	"slices"
	"strings"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

func init() { Register(doNotDisrupt{}) }

// doNotDisrupt finds pods that keep Karpenter from ever replacing their
// node: the karpenter.sh/do-not-disrupt: "true" annotation on a pod
// template (DaemonSets included: Karpenter honours it on their pods too),
// when the NodePools that may run it have no terminationGracePeriod, which
// is what lets drift go ahead anyway; and on a NodePool's node template,
// which blocks every node of the pool whatever its terminationGracePeriod.
// ERROR when every NodePool that may run the pods lacks
// terminationGracePeriod; WARNING when only some do, or when the manifests
// hold no NodePool to tell.
type doNotDisrupt struct{}

func (doNotDisrupt) Info() Info {
	return Info{
		ID:    "do-not-disrupt",
		Title: "Pods or nodes that block Karpenter drift forever",
		Help: "A pod annotated karpenter.sh/do-not-disrupt: \"true\" keeps Karpenter from draining its node, so drift after the control-plane upgrade never replaces it, " +
			"unless the NodePool sets spec.template.spec.terminationGracePeriod. The annotation on a NodePool's template blocks every node regardless. " +
			"ERROR when every NodePool that may run the pods lacks terminationGracePeriod (or for the NodePool annotation); WARNING when some do, or none is in the input.",
		Needs: NeedsObjects,
	}
}

func (doNotDisrupt) Run(in *Input) []Finding {
	var out []Finding
	pools := map[string]*karpv1.NodePool{}
	var poolNames []string
	for _, o := range in.Kind("NodePool") {
		np, ok := o.Typed.(*karpv1.NodePool)
		if !ok {
			continue
		}
		pools[np.Name] = np
		poolNames = append(poolNames, np.Name)
		if np.Spec.Template.Annotations[karpv1.DoNotDisruptAnnotationKey] == "true" {
			out = append(out, o.Finding(Error, "spec.template.metadata.annotations",
				fmt.Sprintf("%s puts %s: \"true\" on every node it launches: Karpenter never disrupts them, so drift after the control-plane upgrade never replaces them (terminationGracePeriod does not help)", o, karpv1.DoNotDisruptAnnotationKey),
				fmt.Sprintf("Remove %s from spec.template.metadata.annotations; protect individual pods instead, with a terminationGracePeriod on the NodePool.", karpv1.DoNotDisruptAnnotationKey)))
		}
	}
	sortStrings(poolNames)
	for _, w := range in.Workloads() {
		if !w.Pod.DoNotDisrupt || (!w.IsDaemonSet() && w.Replicas == 0) {
			continue
		}
		o := w.Object
		field := w.Field("metadata.annotations")
		candidates := candidatePools(w.Pod, poolNames)
		if len(candidates) == 0 {
			out = append(out, o.Finding(Warning, field,
				fmt.Sprintf("%s's pods are annotated %s: \"true\": on a Karpenter node whose NodePool has no terminationGracePeriod they block its drift forever (no NodePool in the input to tell)", o, karpv1.DoNotDisruptAnnotationKey),
				"Set spec.template.spec.terminationGracePeriod on the NodePools that run these pods (e.g. 24h), or use a duration value (e.g. \"4h\") so the protection ends."))
			continue
		}
		var lacking []string
		for _, name := range candidates {
			if np := pools[name]; np != nil && np.Spec.Template.Spec.TerminationGracePeriod == nil {
				lacking = append(lacking, name)
			}
		}
		if len(lacking) == 0 {
			continue
		}
		sev := Error
		msg := fmt.Sprintf("%s's pods are annotated %s: \"true\" and may run on NodePool %s, which has no terminationGracePeriod: Karpenter never drains their nodes, so drift after the control-plane upgrade never replaces them",
			o, karpv1.DoNotDisruptAnnotationKey, strings.Join(lacking, ", "))
		if len(lacking) < len(candidates) {
			sev = Warning
			msg = fmt.Sprintf("%s's pods are annotated %s: \"true\"; on NodePool %s, which has no terminationGracePeriod, they block drift of their node forever",
				o, karpv1.DoNotDisruptAnnotationKey, strings.Join(lacking, ", "))
		}
		out = append(out, o.Finding(sev, field, msg,
			fmt.Sprintf("Set spec.template.spec.terminationGracePeriod on NodePool %s (e.g. 24h: drift then drains the node after that long), or use a duration value (e.g. \"4h\") so the protection ends.", strings.Join(lacking, ", "))))
	}
	return out
}

// candidatePools lists the NodePools (of names) a pod may land on, by its
// karpenter.sh/nodepool nodeSelector or required node affinity; all of
// them when it does not choose.
func candidatePools(pod *PodTemplate, names []string) []string {
	var out []string
	for _, n := range names {
		if !pod.PoolsChosen || slices.Contains(pod.NodePools, n) {
			out = append(out, n)
		}
	}
	return out
}
