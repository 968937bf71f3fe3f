package insights

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ladder-eks/ladder/internal/eviction"
	"github.com/ladder-eks/ladder/internal/manifest"
)

func init() { Register(pdbBlocksDrain{}) }

// pdbBlocksDrain finds PodDisruptionBudgets that can never allow a
// disruption: maxUnavailable 0 or 0%, minAvailable 100%, or minAvailable at
// least the number of pods it selects (replicas 1 with minAvailable 1), or
// maxUnavailable or a percentage minAvailable over the pods of a DaemonSet,
// which has no scale for the disruption controller to read. Every eviction
// of their pods gets 429, so drains wait forever and EKS managed node group
// updates fail with PodEvictionFailure. ERROR; WARNING when an HPA may
// scale the pods above the budget.
type pdbBlocksDrain struct{}

func (pdbBlocksDrain) Info() Info {
	return Info{
		ID:    "pdb-blocks-drain",
		Title: "PodDisruptionBudgets that never allow an eviction",
		Help: "A PodDisruptionBudget with maxUnavailable 0, minAvailable 100%, or minAvailable at least the replicas it covers never allows a disruption, " +
			"nor does one with maxUnavailable or a percentage minAvailable that selects the pods of a DaemonSet (the disruption controller cannot read a DaemonSet's scale, its sync fails and leaves disruptionsAllowed 0): " +
			"every eviction gets 429 Too Many Requests, kubectl drain and Karpenter wait forever, and an EKS managed node group update fails after 15 minutes " +
			"with PodEvictionFailure. ERROR; WARNING when a HorizontalPodAutoscaler may scale the pods above the budget.",
		Needs: NeedsObjects,
	}
}

func (pdbBlocksDrain) Run(in *Input) []Finding {
	var out []Finding
	for _, p := range in.PDBs() {
		spec := p.Spec
		o := p.Object
		if manifest.SelectsNoPodAsV1beta1(spec.Selector) {
			// An empty selector written in policy/v1beta1 selects no pod
			// (manifest.PDBFromV1beta1): the budget guards nothing.
			continue
		}
		if f, ok := pdbOverNoScale(in, p); ok {
			out = append(out, f)
			continue
		}
		switch {
		case spec.MaxUnavailable != nil:
			if isZero(*spec.MaxUnavailable) {
				out = append(out, o.Finding(Error, "spec.maxUnavailable",
					fmt.Sprintf("%s has maxUnavailable %s: no pod it selects (%s) can ever be evicted, so drains of their nodes never finish",
						o, spec.MaxUnavailable.String(), selectorText(spec.Selector)),
					"Set maxUnavailable: 1 (or a percentage above 0), or delete the budget, so one pod at a time can move."))
			}
		case spec.MinAvailable != nil:
			ws := in.WorkloadsSelectedBy(p)
			minAvail := *spec.MinAvailable
			if minAvail.Type == intstr.String && strings.TrimSpace(minAvail.StrVal) == "100%" {
				out = append(out, o.Finding(Error, "spec.minAvailable",
					fmt.Sprintf("%s has minAvailable 100%%: no pod it selects (%s) can ever be evicted, so drains of their nodes never finish", o, selectorText(spec.Selector)),
					"Use maxUnavailable: 1 instead of minAvailable: 100%."))
				continue
			}
			if len(ws) == 0 {
				continue // the pods come from elsewhere: their number is unknown
			}
			var pods, maxPods int32
			var names []string
			scaled := false
			for _, w := range ws {
				pods += w.Replicas
				maxPods += w.MaxReplicas
				names = append(names, fmt.Sprintf("%s with %s", w.Object.String(), w.ReplicasText()))
				scaled = scaled || w.HPA != nil
			}
			if pods == 0 {
				continue
			}
			need, err := intstr.GetScaledValueFromIntOrPercent(&minAvail, int(pods), true)
			if err != nil || int32(need) < pods {
				continue
			}
			sev := Error
			msg := fmt.Sprintf("%s has minAvailable %s and selects %s (%s): no pod can be evicted, so drains of their nodes never finish",
				o, minAvail.String(), plural(int(pods), "pod"), strings.Join(names, ", "))
			if scaled && maxPods > int32(need) {
				sev = Warning
				msg = fmt.Sprintf("%s has minAvailable %s and selects %s at their minimum scale (%s): at that scale no pod can be evicted and drains wait until the autoscaler adds pods",
					o, minAvail.String(), plural(int(pods), "pod"), strings.Join(names, ", "))
			}
			rec := fmt.Sprintf("Run at least %d replicas, or set minAvailable to %d or less, or use maxUnavailable: 1.", need+1, pods-1)
			if pods == 1 {
				rec = "Run at least 2 replicas, or use maxUnavailable: 1 and accept a short outage while the pod moves."
			}
			out = append(out, o.Finding(sev, "spec.minAvailable", msg, rec))
		}
	}
	return out
}

// pdbOverNoScale is the finding on a budget whose desiredHealthy needs the
// scale of its pods' controllers (maxUnavailable, a percentage
// minAvailable: eviction.NeedsScale) when it selects the pods of a
// DaemonSet, which has none: upstream getExpectedScale fails with
// getScaleController's error ("daemonsets.apps does not implement the
// scale subresource", eviction.ScaleError; k8s.io/kubernetes
// pkg/controller/disruption/disruption.go), and failSafe leaves
// disruptionsAllowed 0 with DisruptionAllowed=False reason SyncFailed
// (semantics.md §D.2). Every eviction of a pod the budget selects — the
// DaemonSet's, which Karpenter evicts when it terminates a node, and any
// other workload's — is then refused with 429 (§D.1 checkAndDecrement),
// whatever the budget's value. An integer minAvailable counts the selected
// pods instead of reading a scale, so it is not affected.
func pdbOverNoScale(in *Input, p *PDB) (Finding, bool) {
	if !eviction.NeedsScale(p.Spec) {
		return Finding{}, false
	}
	var noScale []string
	var scaleErr error
	for _, w := range in.DaemonSetsSelectedBy(p) {
		if err := eviction.ScaleError(w.Object.APIVersion, w.Object.Kind); err != nil {
			noScale = append(noScale, w.Object.String())
			if scaleErr == nil {
				scaleErr = err
			}
		}
	}
	if len(noScale) == 0 {
		return Finding{}, false
	}
	field, form, budget := "spec.maxUnavailable", "maxUnavailable", "maxUnavailable "+p.Spec.MaxUnavailable.String()
	if p.Spec.MaxUnavailable == nil {
		field, form, budget = "spec.minAvailable", "a percentage minAvailable", "minAvailable "+p.Spec.MinAvailable.String()
	}
	selects := "the pods of " + strings.Join(noScale, ", ")
	if len(noScale) > 1 {
		selects = "the pods of DaemonSets " + strings.Join(trimKind(noScale, "DaemonSet "), ", ")
	}
	var others []string
	for _, w := range in.WorkloadsSelectedBy(p) {
		others = append(others, w.Object.String())
	}
	if len(others) > 0 {
		selects += " and of " + strings.Join(others, ", ")
	}
	o := p.Object
	return o.Finding(Error, field,
		fmt.Sprintf("%s has %s and selects %s: for %s the disruption controller reads the scale of the pods' controllers and a DaemonSet has none (%q), "+
			"so its sync fails, leaving disruptionsAllowed 0 (DisruptionAllowed=False, reason SyncFailed), and every eviction of a pod it selects gets 429: drains of their nodes never finish",
			o, budget, selects, form, scaleErr.Error()),
		"Use an integer minAvailable — the only form the disruption controller computes without a scale — or select only pods of Deployments/StatefulSets/ReplicaSets."), true
}

// trimKind removes a "Kind " prefix from object names.
func trimKind(names []string, prefix string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.TrimPrefix(n, prefix)
	}
	return out
}

// isZero reports whether an int-or-percent is 0 or "0%".
func isZero(v intstr.IntOrString) bool {
	if v.Type == intstr.Int {
		return v.IntVal == 0
	}
	s := strings.TrimSpace(v.StrVal)
	return s == "0%" || s == "0"
}
