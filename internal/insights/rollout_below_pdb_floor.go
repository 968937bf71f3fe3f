package insights

import (
	"fmt"
	"strings"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ladder-eks/ladder/internal/eviction"
	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/rules/rollout"
)

func init() { Register(rolloutBelowPDBFloor{}) }

// rolloutBelowPDBFloor finds Deployments and StatefulSets whose own rolling
// update takes the pods a PodDisruptionBudget selects below its floor.
// PodDisruptionBudgets guard evictions only (semantics.md §D.1): a rollout
// — kubectl rollout restart, which an EKS upgrade runs on Fargate
// workloads to move them to the new kubelet (§E), or any template change —
// has the Deployment or StatefulSet controller delete old pods within its
// own maxUnavailable, whatever the budget says. The fewest Ready pods a
// rollout keeps is internal/rules/rollout's; the budget's floor is its
// desiredHealthy as the disruption controller computes it over every
// workload it selects (eviction.DesiredHealthy, §D.2), the others at full
// count while one rolls. WARNING.
type rolloutBelowPDBFloor struct{}

func (rolloutBelowPDBFloor) Info() Info {
	return Info{
		ID:    "rollout-below-pdb-floor",
		Title: "Rollouts that take pods below their PodDisruptionBudget's floor",
		Help: "PodDisruptionBudgets do not guard rollouts: kubectl rollout restart — which an EKS upgrade runs on Fargate workloads to move them to the new kubelet — " +
			"or a template change has the Deployment or StatefulSet controller delete old pods within its own maxUnavailable, whatever the budget says. " +
			"A workload whose rolling update keeps fewer Ready pods than a budget selecting them wants (Deployment: replicas − maxUnavailable, " +
			"Recreate: 0; StatefulSet, which cannot surge: replicas − maxUnavailable, 1 by default) is reported. WARNING.",
		Needs: NeedsObjects,
	}
}

func (rolloutBelowPDBFloor) Run(in *Input) []Finding {
	var out []Finding
	for _, p := range in.PDBs() {
		if manifest.SelectsNoPodAsV1beta1(p.Spec.Selector) {
			continue // guards nothing
		}
		if len(in.DaemonSetsSelectedBy(p)) > 0 {
			// With maxUnavailable or a percentage the budget never allows a
			// disruption (pdb-blocks-drain); with an integer minAvailable
			// the DaemonSet's pods count toward it, one per node: their
			// number is unknown here.
			continue
		}
		ws := in.WorkloadsSelectedBy(p)
		selected, scale := podsAndScale(ws)
		floor, ok := pdbFloor(p, selected, scale)
		if !ok || floor <= 0 || selected < floor {
			// No floor, or one the pods never reach: pdb-blocks-drain's.
			continue
		}
		for _, w := range ws {
			r, ok, _ := w.Rollout(in.Target)
			if !ok || !r.Rolls {
				continue
			}
			others := selected - w.Replicas
			if r.MinReady+others >= floor {
				continue
			}
			out = append(out, rolloutFinding(in, p, w, ws, r, floor, selected))
		}
	}
	return out
}

// podsAndScale is what the disruption controller counts of the workloads a
// budget selects at their (minimum) replicas: the pods, and the sum of
// their controllers' scale — bare Pods have none (unmanaged, skipped by
// getExpectedScale).
func podsAndScale(ws []*Workload) (selected, scale int32) {
	for _, w := range ws {
		selected += w.Replicas
		if !w.IsBarePod() {
			scale += w.Replicas
		}
	}
	return selected, scale
}

// pdbFloor is the budget's desiredHealthy over those pods.
func pdbFloor(p *PDB, selected, scale int32) (int32, bool) {
	floor, err := eviction.DesiredHealthy(&policyv1.PodDisruptionBudget{Spec: *p.Spec}, selected, scale)
	return floor, err == nil
}

func rolloutFinding(in *Input, p *PDB, w *Workload, ws []*Workload, r rollout.Rollout, floor, selected int32) Finding {
	var others []string
	for _, o := range ws {
		if o != w {
			others = append(others, fmt.Sprintf("%s's %d", o.Object, o.Replicas))
		}
	}
	keeps := fmt.Sprintf("keeps %d Ready, below %s's floor of %d (%s)", r.MinReady, p.Object, floor, budgetText(p.Spec))
	if len(others) > 0 {
		keeps = fmt.Sprintf("keeps %d Ready, so %d of the pods %s selects with %s, below its floor of %d (%s)",
			r.MinReady, r.MinReady+selected-w.Replicas, p.Object, strings.Join(others, ", "), floor, budgetText(p.Spec))
	}
	msg := fmt.Sprintf("kubectl rollout restart of %s (%s) %s: PodDisruptionBudgets do not guard rollouts", w.Object, strategyText(w, r), keeps)
	// The most pods a rollout may take down with the budget still met.
	allowed := selected - floor
	if w.Object.Kind == "Deployment" {
		rec := "Set spec.strategy.rollingUpdate.maxSurge to at least 1 and maxUnavailable to 0, so new pods are Ready before old ones go"
		if r.Recreate {
			rec = "Use strategy type RollingUpdate with rollingUpdate.maxSurge at least 1 and maxUnavailable 0, so new pods are Ready before old ones go"
		}
		if allowed > 0 {
			rec += fmt.Sprintf(" (or maxUnavailable %d at most)", allowed)
		}
		return w.Object.Finding(Warning, "spec.strategy", msg, rec+".")
	}
	// A StatefulSet cannot surge: more replicas, fewer at once, or a lower
	// floor.
	var recs []string
	if n, ok := replicasKeepingFloor(in, p, w, ws); ok {
		s := fmt.Sprintf("run at least %d replicas", n)
		if w.HPA != nil {
			s = fmt.Sprintf("set minReplicas of HorizontalPodAutoscaler %s to at least %d", w.HPA.Name, n)
		}
		recs = append(recs, s)
	}
	if r.Recreate {
		recs = append(recs, "use updateStrategy type RollingUpdate")
	} else if r.MaxUnavailable > 1 && allowed >= 1 {
		recs = append(recs, fmt.Sprintf("set spec.updateStrategy.rollingUpdate.maxUnavailable to %d at most", allowed))
	}
	if keeps := r.MinReady + selected - w.Replicas; keeps > 0 {
		recs = append(recs, fmt.Sprintf("lower %s's floor to %d", p.Object, keeps))
	}
	rec := "Lower the PodDisruptionBudget's floor or accept the outage: a StatefulSet cannot surge, it deletes each pod before it starts the replacement."
	if len(recs) > 0 {
		recs[0] = strings.ToUpper(recs[0][:1]) + recs[0][1:]
		rec = strings.Join(recs, ", or ") + ": a StatefulSet cannot surge, it deletes each pod before it starts the replacement."
	}
	return w.Object.Finding(Warning, "spec.updateStrategy", msg, rec)
}

// replicasKeepingFloor is the fewest replicas of w, above its own, whose
// rollout keeps the budget's floor — recomputed at that scale, the other
// workloads unchanged — if some number up to 1000 more does.
func replicasKeepingFloor(in *Input, p *PDB, w *Workload, ws []*Workload) (int32, bool) {
	selected, scale := podsAndScale(ws)
	bare := w.IsBarePod()
	for n := w.Replicas + 1; n <= w.Replicas+1000; n++ {
		grown := *w
		grown.Replicas = n
		r, ok, _ := grown.Rollout(in.Target)
		if !ok {
			return 0, false
		}
		sel, sc := selected-w.Replicas+n, scale
		if !bare {
			sc = scale - w.Replicas + n
		}
		floor, ok := pdbFloor(p, sel, sc)
		if !ok {
			return 0, false
		}
		if r.MinReady+sel-n >= floor {
			return n, true
		}
	}
	return 0, false
}

// strategyText says how the workload rolls: "8 replicas, maxUnavailable
// 25% → 2", "3 replicas, strategy Recreate", "5 replicas, partition 2,
// maxUnavailable 2".
func strategyText(w *Workload, r rollout.Rollout) string {
	s := w.ReplicasText()
	if r.Recreate {
		if w.Object.Kind == "Deployment" {
			return s + ", strategy Recreate"
		}
		return s + ", updateStrategy Recreate"
	}
	if r.Partition > 0 {
		s += fmt.Sprintf(", partition %d", r.Partition)
	}
	if r.MaxUnavailableIgnored {
		return s + fmt.Sprintf(", maxUnavailable 1: the controller ignores rollingUpdate.maxUnavailable %s before Kubernetes %s",
			r.MaxUnavailableValue.String(), rollout.MaxUnavailableStatefulSet)
	}
	v := r.MaxUnavailableValue
	raw, err := intstr.GetScaledValueFromIntOrPercent(&v, int(r.Replicas), false)
	switch {
	case err != nil:
	case raw == 0 && r.MaxUnavailable == 1 && r.MaxSurge == 0 && w.Object.Kind == "Deployment":
		// ResolveFenceposts: both fenceposts 0 make maxUnavailable 1.
		return s + fmt.Sprintf(", maxUnavailable %s and maxSurge %s both → 0, so 1", v.String(), r.MaxSurgeValue.String())
	case v.Type == intstr.Int && int32(raw) == r.MaxUnavailable:
		return s + fmt.Sprintf(", maxUnavailable %d", raw)
	}
	return s + fmt.Sprintf(", maxUnavailable %s → %d", v.String(), r.MaxUnavailable)
}

// budgetText is the budget as written: "minAvailable 3", "maxUnavailable 1".
func budgetText(spec *policyv1.PodDisruptionBudgetSpec) string {
	if spec.MaxUnavailable != nil {
		return "maxUnavailable " + spec.MaxUnavailable.String()
	}
	if spec.MinAvailable != nil {
		return "minAvailable " + spec.MinAvailable.String()
	}
	return "no budget"
}
