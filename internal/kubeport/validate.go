package kubeport

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateNodePatchResult checks what NodePatch can change on a node — its
// labels, annotations and taints — with the API server's rules
// (pkg/apis/core/validation ValidateObjectMeta and validateNodeTaints, which
// call these same apimachinery validators), so that an implementation
// without an API server refuses what a real one would, with the same
// field paths and messages.
func ValidateNodePatchResult(n *corev1.Node) field.ErrorList {
	meta := field.NewPath("metadata")
	errs := metav1validation.ValidateLabels(n.Labels, meta.Child("labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(n.Annotations, meta.Child("annotations"))...)
	taints := field.NewPath("spec", "taints")
	seen := map[corev1.TaintEffect]map[string]bool{}
	for i, t := range n.Spec.Taints {
		idx := taints.Index(i)
		errs = append(errs, metav1validation.ValidateLabelName(t.Key, idx.Child("key"))...)
		if msgs := validation.IsValidLabelValue(t.Value); len(msgs) != 0 {
			errs = append(errs, field.Invalid(idx.Child("value"), t.Value, strings.Join(msgs, ";")))
		}
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		case "":
			errs = append(errs, field.Required(idx.Child("effect"), ""))
		default:
			errs = append(errs, field.NotSupported(idx.Child("effect"), t.Effect,
				[]corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}))
		}
		if seen[t.Effect][t.Key] {
			dup := field.Duplicate(idx, t)
			dup.Detail = "taints must be unique by key and effect pair"
			errs = append(errs, dup)
			continue
		}
		if seen[t.Effect] == nil {
			seen[t.Effect] = map[string]bool{}
		}
		seen[t.Effect][t.Key] = true
	}
	return errs
}
