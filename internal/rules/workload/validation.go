// Package workload holds the rules kube-apiserver applies before it stores
// the objects the twin reads — a Deployment, StatefulSet or DaemonSet
// (k8s.io/kubernetes pkg/apis/apps/validation and the apps/v1 defaults), a
// PriorityClass (pkg/apis/scheduling/validation) — and the twin's startup
// annotation, as pure functions over the API types. The Kubernetes twin
// (internal/twin/kube) refuses objects with them, and `scenario validate`
// and `ladder check` refuse the same objects with the same field paths and
// messages.
package workload

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The workload rules kube-apiserver applies before it stores a Deployment,
// StatefulSet or DaemonSet (k8s.io/kubernetes pkg/apis/apps/validation),
// limited to the fields the twin reads. They are pure functions over the
// apps/v1 types, so that the twin, `scenario validate` and `check` refuse
// the same objects with the same field paths and messages. The API server
// defaults an object before it validates it; so do these, on a copy.

// ValidateSelector is the selector part of ValidateDeploymentSpec,
// ValidateStatefulSetSpec and ValidateDaemonSetSpec (with
// ValidatePodTemplateSpecForReplicaSet's check of the template): a selector
// is required, valid, not empty, and selects the template's labels. kind is
// the lower-case word the API server's message uses ("deployment").
func ValidateSelector(kind string, sel *metav1.LabelSelector, templateLabels map[string]string) field.ErrorList {
	fld := field.NewPath("spec", "selector")
	if sel == nil {
		return field.ErrorList{field.Required(fld, "")}
	}
	errs := metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, fld)
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(fld, sel, "empty selector is invalid for "+kind))
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return append(errs, field.Invalid(fld, sel, "invalid label selector"))
	}
	if !s.Empty() && !s.Matches(labels.Set(templateLabels)) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "template", "metadata", "labels"), templateLabels, "`selector` does not match template `labels`"))
	}
	return errs
}

// ValidateDeployment is pkg/apis/apps/validation ValidateDeployment's
// rules on the fields the twin reads: replicas, the selector, the strategy,
// minReadySeconds, revisionHistoryLimit and progressDeadlineSeconds.
func ValidateDeployment(d *appsv1.Deployment) field.ErrorList {
	d = d.DeepCopy()
	SetDeploymentDefaults(d)
	return workloadErrors("deployment", d.Spec.Replicas, d.Spec.Selector, d.Spec.Template.Labels, validateDeploymentSpec(&d.Spec))
}

// ValidateStatefulSet is pkg/apis/apps/validation ValidateStatefulSet's
// rules on the fields the twin reads: replicas, the selector,
// podManagementPolicy, updateStrategy and minReadySeconds.
func ValidateStatefulSet(s *appsv1.StatefulSet) field.ErrorList {
	s = s.DeepCopy()
	SetStatefulSetDefaults(s)
	return workloadErrors("statefulset", s.Spec.Replicas, s.Spec.Selector, s.Spec.Template.Labels, validateStatefulSetSpec(&s.Spec))
}

// ValidateStatefulSetUpdate is pkg/apis/apps/validation
// ValidateStatefulSetUpdate: applied over old, s may change only replicas,
// ordinals, the template, updateStrategy, revisionHistoryLimit,
// persistentVolumeClaimRetentionPolicy and minReadySeconds.
func ValidateStatefulSetUpdate(s, old *appsv1.StatefulSet) field.ErrorList {
	s, old = s.DeepCopy(), old.DeepCopy()
	SetStatefulSetDefaults(s)
	SetStatefulSetDefaults(old)
	return validateStatefulSetUpdate(&s.Spec, &old.Spec)
}

// ValidateDaemonSet is pkg/apis/apps/validation ValidateDaemonSet's rules
// on the fields the twin reads: the selector, updateStrategy and
// minReadySeconds.
func ValidateDaemonSet(d *appsv1.DaemonSet) field.ErrorList {
	d = d.DeepCopy()
	SetDaemonSetDefaults(d)
	return workloadErrors("daemonset", nil, d.Spec.Selector, d.Spec.Template.Labels, validateDaemonSetSpec(&d.Spec))
}

// workloadErrors is a workload's errors in the API server's order:
// replicas (ValidateNonnegativeField; a DaemonSet has none), the selector,
// then the rest of its spec.
func workloadErrors(kind string, replicas *int32, sel *metav1.LabelSelector, templateLabels map[string]string, specErrs field.ErrorList) field.ErrorList {
	var errs field.ErrorList
	if replicas != nil {
		errs = apivalidation.ValidateNonnegativeField(int64(*replicas), field.NewPath("spec", "replicas"))
	}
	errs = append(errs, ValidateSelector(kind, sel, templateLabels)...)
	return append(errs, specErrs...)
}

// Fix is how to mend a workload field one of the rules above
// refuses, for the messages of validate and check; "" when the API server's
// message says it.
func Fix(e *field.Error) string {
	f := e.Field
	switch {
	case f == "spec.replicas":
		return "set 0 or more replicas"
	case f == "spec.selector" && e.Type == field.ErrorTypeRequired:
		return "set spec.selector.matchLabels to the template's labels"
	case f == "spec.template.metadata.labels", f == "spec.selector":
		return "make spec.selector select the template's labels"
	case strings.HasSuffix(f, ".maxUnavailable"), strings.HasSuffix(f, ".maxSurge"):
		return "use a non-negative integer or a percentage from 0% to 100%"
	case f == "spec.strategy.rollingUpdate":
		return "remove spec.strategy.rollingUpdate, or set spec.strategy.type to RollingUpdate"
	case f == "spec.updateStrategy.rollingUpdate":
		return fmt.Sprintf("remove spec.updateStrategy.rollingUpdate, or set spec.updateStrategy.type to %s", appsv1.RollingUpdateStatefulSetStrategyType)
	case f == "spec.progressDeadlineSeconds":
		return "make progressDeadlineSeconds greater than minReadySeconds"
	case f == "spec":
		return "delete the StatefulSet and create it again to change these fields"
	}
	return ""
}
