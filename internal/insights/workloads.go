package insights

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/rules/rollout"
)

// Workload is something that runs pods from a template — a Deployment,
// StatefulSet, ReplicaSet or DaemonSet — or a bare Pod.
type Workload struct {
	Object *Object
	// Replicas is how many pods it runs at least: spec.replicas (1 when
	// omitted), or the minReplicas of the HorizontalPodAutoscaler that
	// scales it. 0 for DaemonSets, which run one pod per node.
	Replicas int32
	// HPA is the HorizontalPodAutoscaler scaling it, if any.
	HPA *Object
	// MaxReplicas is the HPA's maxReplicas (Replicas without an HPA).
	MaxReplicas int32
	// Pod is what the checks read of the pod template (for a bare Pod, of
	// the pod itself).
	Pod *PodTemplate
	// Selector is spec.selector.matchLabels (nil for a Pod, or none).
	Selector LabelSet
	// PodField is the template's field path ("spec.template"; "" for a Pod).
	PodField string

	pdbs    []*PDB       // the PodDisruptionBudgets selecting its pods
	order   int          // its index in Input.Workloads
	rollout *rolloutSpec // a Deployment's or StatefulSet's update strategy, when written
}

// Rollout is what the workload's own controller does to its pods when
// their template changes (kubectl rollout restart), at Replicas, under the
// kube-controller-manager of minor controller (internal/rules/rollout). ok
// is false for the kinds it does not cover: DaemonSets (how many pods they
// run depends on the nodes), ReplicaSets and Pods (nothing rolls them).
func (w *Workload) Rollout(controller kubeversion.Minor) (r rollout.Rollout, ok bool, err error) {
	rs := w.rollout
	if rs == nil {
		rs = &rolloutSpec{}
	}
	replicas := w.Replicas
	switch w.Object.Kind {
	case "Deployment":
		r, err = rollout.Deployment(&appsv1.DeploymentSpec{Replicas: &replicas, Strategy: rs.strategy, Paused: rs.paused})
	case "StatefulSet":
		r, err = rollout.StatefulSet(&appsv1.StatefulSetSpec{Replicas: &replicas, UpdateStrategy: rs.updateStrategy}, controller)
	default:
		return rollout.Rollout{}, false, nil
	}
	return r, err == nil, err
}

// IsDaemonSet reports whether the workload is a DaemonSet.
func (w *Workload) IsDaemonSet() bool { return w.Object.Kind == "DaemonSet" }

// IsBarePod reports whether the workload is a Pod with no controller.
func (w *Workload) IsBarePod() bool { return w.Object.Kind == "Pod" }

// Field is a path below the pod template: Field("spec.containers[0]") is
// "spec.template.spec.containers[0]" for a Deployment, "spec.containers[0]"
// for a Pod.
func (w *Workload) Field(path string) string {
	if w.PodField == "" {
		return path
	}
	return w.PodField + "." + path
}

// ReplicasText says how many replicas the workload runs, naming the HPA
// when one sets it: "3 replicas", "2 replicas (HPA web minReplicas)".
func (w *Workload) ReplicasText() string {
	s := plural(int(w.Replicas), "replica")
	if w.HPA != nil {
		s += fmt.Sprintf(" (minReplicas of HorizontalPodAutoscaler %s)", w.HPA.Name)
	}
	return s
}

// PDB is a PodDisruptionBudget with its selector parsed. Spec is the
// policy/v1 spec the API server enforces — for one written in
// policy/v1beta1, converted as kube-apiserver converts it
// (manifest.PDBFromV1beta1: its empty selector selects no pod); Object
// keeps the apiVersion it was written in.
type PDB struct {
	Object   *Object
	Spec     *policyv1.PodDisruptionBudgetSpec
	Selector labels.Selector

	workloads  []*Workload // selected, DaemonSets excluded
	daemonSets []*Workload // the DaemonSets selected
}

// Selects reports whether the PDB selects the workload's pods.
func (p *PDB) Selects(w *Workload) bool {
	return p.Object.Namespace == w.Object.Namespace && p.Selector.Matches(w.Pod.Labels)
}

// Workloads returns every workload, in source order. ReplicaSets owned by
// a Deployment are not workloads of their own; manifests rarely have them.
func (in *Input) Workloads() []*Workload {
	in.indexWorkloads()
	return in.workloads
}

// PDBsFor returns the PodDisruptionBudgets that select a workload's pods,
// in source order.
func (in *Input) PDBsFor(w *Workload) []*PDB {
	in.indexWorkloads()
	return w.pdbs
}

// PDBs returns every PodDisruptionBudget that decoded, policy/v1 and
// policy/v1beta1, in source order.
func (in *Input) PDBs() []*PDB {
	in.indexWorkloads()
	return in.pdbList
}

// WorkloadsSelectedBy returns the workloads whose pods a PDB selects, in
// source order: not DaemonSets, whose pods kubectl drain skips
// (DaemonSetsSelectedBy returns those).
func (in *Input) WorkloadsSelectedBy(p *PDB) []*Workload {
	in.indexWorkloads()
	return p.workloads
}

// DaemonSetsSelectedBy returns the DaemonSets whose pods a PDB selects, in
// source order.
func (in *Input) DaemonSetsSelectedBy(p *PDB) []*Workload {
	in.indexWorkloads()
	return p.daemonSets
}

func newPDB(o *Object) *PDB {
	sum := summarizePDB(o.Typed)
	if sum == nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(sum.spec.Selector)
	if err != nil {
		sel = labels.Nothing()
	}
	return &PDB{Object: o, Spec: &sum.spec, Selector: sel}
}

// indexWorkloads builds the workloads, the PDBs, and who selects whom.
// Matching is per namespace, and a PDB with matchLabels only looks at the
// workloads carrying its first label, so large inputs stay linear-ish.
func (in *Input) indexWorkloads() {
	in.workOnce.Do(func() {
		hpas := map[string]*Object{} // "namespace/Kind/name" of the target
		for _, o := range in.Kind("HorizontalPodAutoscaler") {
			if ref, ok := hpaTarget(o); ok {
				hpas[o.Namespace+"/"+ref] = o
			}
		}
		type label struct{ k, v string }
		type nsIndex struct {
			all     []*Workload
			byLabel map[label][]*Workload // the pod labels
		}
		byNS := map[string]*nsIndex{}
		for _, o := range in.Objects {
			w := newWorkload(o)
			if w == nil {
				continue
			}
			if h := hpas[o.Namespace+"/"+o.Kind+"/"+o.Name]; h != nil && !w.IsDaemonSet() && !w.IsBarePod() {
				minR, maxR := hpaRange(h)
				w.HPA, w.Replicas, w.MaxReplicas = h, minR, maxR
			}
			w.order = len(in.workloads)
			in.workloads = append(in.workloads, w)
			idx := byNS[o.Namespace]
			if idx == nil {
				idx = &nsIndex{byLabel: map[label][]*Workload{}}
				byNS[o.Namespace] = idx
			}
			idx.all = append(idx.all, w)
			for _, l := range w.Pod.Labels {
				idx.byLabel[label{l.Key, l.Value}] = append(idx.byLabel[label{l.Key, l.Value}], w)
			}
		}
		for _, o := range in.Kind("PodDisruptionBudget") {
			p := newPDB(o)
			if p == nil {
				continue
			}
			in.pdbList = append(in.pdbList, p)
			idx := byNS[o.Namespace]
			if idx == nil {
				continue
			}
			candidates := idx.all
			if sel := p.Spec.Selector; sel != nil && len(sel.MatchLabels) > 0 {
				keys := make([]string, 0, len(sel.MatchLabels))
				for k := range sel.MatchLabels {
					keys = append(keys, k)
				}
				sortStrings(keys)
				candidates = idx.byLabel[label{keys[0], sel.MatchLabels[keys[0]]}]
			}
			for _, w := range candidates {
				if p.Selector.Matches(w.Pod.Labels) {
					w.pdbs = append(w.pdbs, p)
					if w.IsDaemonSet() {
						p.daemonSets = append(p.daemonSets, w)
					} else {
						p.workloads = append(p.workloads, w)
					}
				}
			}
		}
	})
}

func newWorkload(o *Object) *Workload {
	sum := summarizeWorkload(o.Typed)
	if sum == nil || sum.owned {
		return nil
	}
	w := &Workload{Object: o, Replicas: sum.replicas, MaxReplicas: sum.replicas, Pod: &sum.pod, Selector: sum.selector, PodField: "spec.template", rollout: sum.rollout}
	if o.Kind == "Pod" {
		w.PodField = ""
	}
	return w
}

func hpaTarget(o *Object) (string, bool) {
	if h := summarizeHPA(o.Typed); h != nil {
		return h.target, true
	}
	return "", false
}

func hpaRange(o *Object) (minR, maxR int32) {
	minR = 1
	if h := summarizeHPA(o.Typed); h != nil {
		minR, maxR = h.minR, h.maxR
	}
	return minR, max(maxR, minR)
}

// plural formats "1 replica", "3 replicas".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// selectorText prints a label selector the way a user writes matchLabels:
// "app=web,tier=front"; "{} (every pod in the namespace)" when empty, and
// "{} (policy/v1beta1: no pod)" for an empty selector written in v1beta1.
func selectorText(sel *metav1.LabelSelector) string {
	if sel == nil {
		return "none"
	}
	if manifest.SelectsNoPodAsV1beta1(sel) {
		return "{} (policy/v1beta1: no pod)"
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return "invalid"
	}
	if s.Empty() {
		return "{} (every pod in the namespace)"
	}
	return s.String()
}

// matchLabelsYAML renders labels as a flow map for a recommendation:
// "{app: web, tier: front}".
func matchLabelsYAML(s LabelSet) string {
	parts := make([]string, len(s))
	for i, l := range s {
		parts[i] = l.Key + ": " + l.Value
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
