package insights

import (
	"cmp"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/manifest"
)

// A repository holds tens of thousands of Deployments, and a decoded
// Deployment costs kilobytes: the upstream struct alone is 1.2 KB before
// its maps, containers and probes. Manifests are decoded with the upstream
// types — strict decoding, defaults and field errors as the API server's —
// and then a workload, a HorizontalPodAutoscaler or a
// PodDisruptionBudget keeps, as its Typed, only the summary below: what
// the checks read of it. Objects from a scenario or a live cluster keep
// their upstream types; newWorkload and newPDB summarise both the same
// way, so the checks see one thing. A check that needs another field adds
// it here.

// PodTemplate is what the checks read of a workload's pod template, or of
// a bare Pod.
type PodTemplate struct {
	Labels LabelSet
	// DoNotDisrupt is the karpenter.sh/do-not-disrupt: "true" annotation.
	DoNotDisrupt bool
	// Spread is true when the pods spread: topologySpreadConstraints, or
	// a podAntiAffinity term (required or preferred).
	Spread bool
	// Containers are its containers (not init containers), in order.
	Containers []ContainerSummary
	// NodePools are the NodePools the pods choose by the
	// karpenter.sh/nodepool nodeSelector or a required node affinity "In"
	// term; PoolsChosen is false when they do not choose (any NodePool).
	NodePools   []string
	PoolsChosen bool
}

// ContainerSummary is what the checks read of a container.
type ContainerSummary struct {
	Name           string
	ReadinessProbe bool
}

// workloadSummary is the Typed of a workload decoded from a manifest
// (Deployment, StatefulSet, ReplicaSet, DaemonSet, Pod).
type workloadSummary struct {
	// replicas: spec.replicas (1 when omitted), 0 for a DaemonSet, 1 for a
	// Pod.
	replicas int32
	// selector is spec.selector.matchLabels.
	selector LabelSet
	// owned: a ReplicaSet or Pod with ownerReferences, run by a controller
	// that is the workload.
	owned bool
	pod   PodTemplate
	// rollout is a Deployment's or StatefulSet's update strategy, nil when
	// none is written (the API server's defaults) and the Deployment is not
	// paused.
	rollout *rolloutSpec
}

// rolloutSpec is what rollout-below-pdb-floor reads of a Deployment
// (strategy, paused) or a StatefulSet (updateStrategy) beyond its
// replicas: the input of internal/rules/rollout.
type rolloutSpec struct {
	strategy       appsv1.DeploymentStrategy
	paused         bool
	updateStrategy appsv1.StatefulSetUpdateStrategy
}

// deploymentRollout and statefulSetRollout keep a rolloutSpec only when the
// manifest writes something, so the many Deployments that do not cost no
// more.
func deploymentRollout(spec *appsv1.DeploymentSpec) *rolloutSpec {
	if spec.Strategy == (appsv1.DeploymentStrategy{}) && !spec.Paused {
		return nil
	}
	return &rolloutSpec{strategy: spec.Strategy, paused: spec.Paused}
}

func statefulSetRollout(spec *appsv1.StatefulSetSpec) *rolloutSpec {
	if spec.UpdateStrategy == (appsv1.StatefulSetUpdateStrategy{}) {
		return nil
	}
	return &rolloutSpec{updateStrategy: spec.UpdateStrategy}
}

// hpaSummary is the Typed of a HorizontalPodAutoscaler decoded from a
// manifest.
type hpaSummary struct {
	target     string // "Kind/name" of spec.scaleTargetRef
	minR, maxR int32  // minReplicas (1 when omitted) and maxReplicas as written
}

// pdbSummary is the Typed of a PodDisruptionBudget decoded from a
// manifest: its spec as policy/v1, the version the API server enforces —
// for one written in policy/v1beta1, converted as kube-apiserver converts
// it (manifest.PDBFromV1beta1: its empty selector selects no pod).
type pdbSummary struct {
	spec policyv1.PodDisruptionBudgetSpec
}

// summarize returns what a decoded object keeps: the summary of a
// workload, HorizontalPodAutoscaler or PodDisruptionBudget, else typed
// itself.
func summarize(typed any) any {
	if w := summarizeWorkload(typed); w != nil {
		return w
	}
	if h := summarizeHPA(typed); h != nil {
		return h
	}
	if p := summarizePDB(typed); p != nil {
		return p
	}
	return typed
}

func summarizePDB(typed any) *pdbSummary {
	switch t := typed.(type) {
	case *pdbSummary:
		return t
	case *policyv1.PodDisruptionBudget:
		return &pdbSummary{spec: t.Spec}
	case *policyv1beta1.PodDisruptionBudget:
		return &pdbSummary{spec: manifest.PDBFromV1beta1(t).Spec}
	}
	return nil
}

// orOne is a replica count as written, 1 when omitted (the API server's
// default for spec.replicas and minReplicas).
func orOne(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

func summarizeWorkload(typed any) *workloadSummary {
	switch t := typed.(type) {
	case *workloadSummary:
		return t
	case *appsv1.Deployment:
		return &workloadSummary{replicas: orOne(t.Spec.Replicas), selector: matchLabels(t.Spec.Selector), pod: podTemplate(t.Spec.Template.ObjectMeta, &t.Spec.Template.Spec),
			rollout: deploymentRollout(&t.Spec)}
	case *appsv1.StatefulSet:
		return &workloadSummary{replicas: orOne(t.Spec.Replicas), selector: matchLabels(t.Spec.Selector), pod: podTemplate(t.Spec.Template.ObjectMeta, &t.Spec.Template.Spec),
			rollout: statefulSetRollout(&t.Spec)}
	case *appsv1.ReplicaSet:
		return &workloadSummary{replicas: orOne(t.Spec.Replicas), selector: matchLabels(t.Spec.Selector), owned: len(t.OwnerReferences) > 0,
			pod: podTemplate(t.Spec.Template.ObjectMeta, &t.Spec.Template.Spec)}
	case *appsv1.DaemonSet:
		return &workloadSummary{selector: matchLabels(t.Spec.Selector), pod: podTemplate(t.Spec.Template.ObjectMeta, &t.Spec.Template.Spec)}
	case *corev1.Pod:
		return &workloadSummary{replicas: 1, owned: len(t.OwnerReferences) > 0, pod: podTemplate(t.ObjectMeta, &t.Spec)}
	}
	return nil
}

func matchLabels(sel *metav1.LabelSelector) LabelSet {
	if sel == nil {
		return nil
	}
	return labelSetOf(sel.MatchLabels)
}

// LabelSet is a set of labels sorted by key: a workload's pod labels or
// matchLabels as the checks keep them. A Go map costs some 300 bytes
// however few its entries, and a repository's workloads hold two or three
// maps of one or two labels each; the slice holds only its labels. It is a
// labels.Labels, so a selector matches it as it would a labels.Set.
type LabelSet []Label

// Label is one label of a LabelSet.
type Label struct{ Key, Value string }

// labelSetOf returns the labels of m, sorted by key; nil when m is empty.
func labelSetOf(m map[string]string) LabelSet {
	if len(m) == 0 {
		return nil
	}
	s := make(LabelSet, 0, len(m))
	for k, v := range m {
		s = append(s, Label{k, v})
	}
	slices.SortFunc(s, func(a, b Label) int { return cmp.Compare(a.Key, b.Key) })
	return s
}

// Lookup returns the value of a label and whether the set has it.
func (s LabelSet) Lookup(key string) (string, bool) {
	if i, ok := slices.BinarySearchFunc(s, key, func(l Label, key string) int { return cmp.Compare(l.Key, key) }); ok {
		return s[i].Value, true
	}
	return "", false
}

// Has reports whether the set has a label.
func (s LabelSet) Has(key string) bool {
	_, ok := s.Lookup(key)
	return ok
}

// Get returns the value of a label, "" when the set lacks it.
func (s LabelSet) Get(key string) string {
	v, _ := s.Lookup(key)
	return v
}

func podTemplate(meta metav1.ObjectMeta, spec *corev1.PodSpec) PodTemplate {
	p := PodTemplate{Labels: labelSetOf(meta.Labels), DoNotDisrupt: meta.Annotations[karpv1.DoNotDisruptAnnotationKey] == "true"}
	p.Spread = len(spec.TopologySpreadConstraints) > 0
	if a := spec.Affinity; a != nil && a.PodAntiAffinity != nil &&
		(len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 || len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0) {
		p.Spread = true
	}
	if len(spec.Containers) > 0 {
		p.Containers = make([]ContainerSummary, len(spec.Containers))
		for i, c := range spec.Containers {
			p.Containers[i] = ContainerSummary{Name: c.Name, ReadinessProbe: c.ReadinessProbe != nil}
		}
	}
	if v, ok := spec.NodeSelector[karpv1.NodePoolLabelKey]; ok {
		p.PoolsChosen = true
		p.NodePools = append(p.NodePools, v)
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, r := range term.MatchExpressions {
				if r.Key == karpv1.NodePoolLabelKey && r.Operator == corev1.NodeSelectorOpIn {
					p.PoolsChosen = true
					p.NodePools = append(p.NodePools, r.Values...)
				}
			}
		}
	}
	return p
}

func summarizeHPA(typed any) *hpaSummary {
	switch h := typed.(type) {
	case *hpaSummary:
		return h
	case *autoscalingv2.HorizontalPodAutoscaler:
		return &hpaSummary{target: h.Spec.ScaleTargetRef.Kind + "/" + h.Spec.ScaleTargetRef.Name, minR: orOne(h.Spec.MinReplicas), maxR: h.Spec.MaxReplicas}
	case *autoscalingv1.HorizontalPodAutoscaler:
		return &hpaSummary{target: h.Spec.ScaleTargetRef.Kind + "/" + h.Spec.ScaleTargetRef.Name, minR: orOne(h.Spec.MinReplicas), maxR: h.Spec.MaxReplicas}
	}
	return nil
}

// dropMetadataMaps drops the labels and annotations of objects read from
// manifests: the checks read a workload's pod template labels and
// selector (its summary) and a PodDisruptionBudget's selector, never an
// object's own metadata maps, and a map costs some 300 bytes however few
// its entries — on a tree of 50,000 labelled Deployments, 15 MB held to
// the end of the run.
func dropMetadataMaps(objs []*Object) {
	for _, o := range objs {
		o.Labels, o.Annotations = nil, nil
	}
}
