package workload

import (
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// The apps/v1 defaults and the spec rules of each workload kind.

// SetDeploymentDefaults is pkg/apis/apps/v1 defaults.go
// SetDefaults_Deployment: one replica, RollingUpdate with maxUnavailable
// and maxSurge 25%, revisionHistoryLimit 10, progressDeadlineSeconds 600.
func SetDeploymentDefaults(d *appsv1.Deployment) {
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = ptr.To[int32](1)
	}
	s := &d.Spec.Strategy
	if s.Type == "" {
		s.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if s.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if s.RollingUpdate == nil {
			s.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		if s.RollingUpdate.MaxUnavailable == nil {
			s.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("25%"))
		}
		if s.RollingUpdate.MaxSurge == nil {
			s.RollingUpdate.MaxSurge = ptr.To(intstr.FromString("25%"))
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = ptr.To[int32](600)
	}
}

// validateDeploymentSpec is the part of pkg/apis/apps/validation
// ValidateDeploymentSpec the twin reads: the strategy
// (ValidateDeploymentStrategy, ValidateRollingUpdateDeployment),
// minReadySeconds, revisionHistoryLimit and progressDeadlineSeconds.
func validateDeploymentSpec(spec *appsv1.DeploymentSpec) field.ErrorList {
	fld := field.NewPath("spec")
	var errs field.ErrorList
	s := spec.Strategy
	switch s.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if s.RollingUpdate != nil {
			errs = append(errs, field.Forbidden(fld.Child("strategy", "rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'"))
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		ru, path := s.RollingUpdate, fld.Child("strategy", "rollingUpdate")
		errs = append(errs, validatePositiveIntOrPercent(*ru.MaxUnavailable, path.Child("maxUnavailable"))...)
		errs = append(errs, validatePositiveIntOrPercent(*ru.MaxSurge, path.Child("maxSurge"))...)
		if intOrPercentValue(*ru.MaxUnavailable) == 0 && intOrPercentValue(*ru.MaxSurge) == 0 {
			errs = append(errs, field.Invalid(path.Child("maxUnavailable"), *ru.MaxUnavailable, "may not be 0 when `maxSurge` is 0"))
		}
		errs = append(errs, notMoreThan100Percent(*ru.MaxUnavailable, path.Child("maxUnavailable"))...)
	default:
		errs = append(errs, field.NotSupported(fld.Child("strategy", "type"), s.Type, []string{string(appsv1.RecreateDeploymentStrategyType), string(appsv1.RollingUpdateDeploymentStrategyType)}))
	}
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), fld.Child("minReadySeconds"))...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*spec.RevisionHistoryLimit), fld.Child("revisionHistoryLimit"))...)
	if p := *spec.ProgressDeadlineSeconds; p <= spec.MinReadySeconds {
		errs = append(errs, field.Invalid(fld.Child("progressDeadlineSeconds"), p, "must be greater than minReadySeconds"))
	}
	return errs
}

// SetStatefulSetDefaults is pkg/apis/apps/v1 defaults.go
// SetDefaults_StatefulSet: OrderedReady, RollingUpdate with partition 0 and
// maxUnavailable 1, one replica, revisionHistoryLimit 10.
func SetStatefulSetDefaults(s *appsv1.StatefulSet) {
	if s.Spec.PodManagementPolicy == "" {
		s.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	u := &s.Spec.UpdateStrategy
	if u.Type == "" {
		u.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if u.RollingUpdate == nil {
			u.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	if u.Type == appsv1.RollingUpdateStatefulSetStrategyType && u.RollingUpdate != nil {
		if u.RollingUpdate.Partition == nil {
			u.RollingUpdate.Partition = ptr.To[int32](0)
		}
		if u.RollingUpdate.MaxUnavailable == nil {
			u.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		}
	}
	if s.Spec.Replicas == nil {
		s.Spec.Replicas = ptr.To[int32](1)
	}
	if s.Spec.RevisionHistoryLimit == nil {
		s.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
}

// validateStatefulSetSpec is the part of pkg/apis/apps/validation
// ValidateStatefulSetSpec the twin reads: podManagementPolicy,
// updateStrategy (validateRollingUpdateStatefulSet) and minReadySeconds.
func validateStatefulSetSpec(spec *appsv1.StatefulSetSpec) field.ErrorList {
	fld := field.NewPath("spec")
	var errs field.ErrorList
	switch spec.PodManagementPolicy {
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		errs = append(errs, field.Invalid(fld.Child("podManagementPolicy"), spec.PodManagementPolicy,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement)))
	}
	u := spec.UpdateStrategy
	switch u.Type {
	case appsv1.OnDeleteStatefulSetStrategyType:
		if u.RollingUpdate != nil {
			errs = append(errs, field.Invalid(fld.Child("updateStrategy", "rollingUpdate"), u.RollingUpdate,
				fmt.Sprintf("only allowed for updateStrategy '%s'", appsv1.RollingUpdateStatefulSetStrategyType)))
		}
	case appsv1.RollingUpdateStatefulSetStrategyType:
		if ru := u.RollingUpdate; ru != nil {
			path := fld.Child("updateStrategy", "rollingUpdate")
			if ru.Partition != nil && *ru.Partition < 0 {
				errs = append(errs, field.Invalid(path.Child("partition"), *ru.Partition, "must be greater than or equal to 0"))
			}
			if ru.MaxUnavailable != nil {
				errs = append(errs, validatePositiveIntOrPercent(*ru.MaxUnavailable, path.Child("maxUnavailable"))...)
				if intOrPercentValue(*ru.MaxUnavailable) == 0 {
					errs = append(errs, field.Invalid(path.Child("maxUnavailable"), *ru.MaxUnavailable, "cannot be 0"))
				}
				errs = append(errs, notMoreThan100Percent(*ru.MaxUnavailable, path.Child("maxUnavailable"))...)
			}
		}
	default:
		errs = append(errs, field.Invalid(fld.Child("updateStrategy"), u,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType)))
	}
	if spec.MinReadySeconds < 0 {
		errs = append(errs, field.Invalid(fld.Child("minReadySeconds"), spec.MinReadySeconds, "must be greater than or equal to 0"))
	}
	return errs
}

// validateStatefulSetUpdate is pkg/apis/apps/validation
// ValidateStatefulSetUpdate: only some spec fields may change.
func validateStatefulSetUpdate(spec, old *appsv1.StatefulSetSpec) field.ErrorList {
	clone := spec.DeepCopy()
	clone.Replicas = old.Replicas
	clone.Template = old.Template
	clone.UpdateStrategy = old.UpdateStrategy
	clone.MinReadySeconds = old.MinReadySeconds
	clone.Ordinals = old.Ordinals
	clone.RevisionHistoryLimit = old.RevisionHistoryLimit
	clone.PersistentVolumeClaimRetentionPolicy = old.PersistentVolumeClaimRetentionPolicy
	if !apiequality.Semantic.DeepEqual(clone, old) {
		return field.ErrorList{field.Forbidden(field.NewPath("spec"), "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")}
	}
	return nil
}

// SetDaemonSetDefaults is pkg/apis/apps/v1 defaults.go
// SetDefaults_DaemonSet: RollingUpdate with maxUnavailable 1 and maxSurge
// 0, revisionHistoryLimit 10.
func SetDaemonSetDefaults(d *appsv1.DaemonSet) {
	u := &d.Spec.UpdateStrategy
	if u.Type == "" {
		u.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if u.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if u.RollingUpdate == nil {
			u.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if u.RollingUpdate.MaxUnavailable == nil {
			u.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		}
		if u.RollingUpdate.MaxSurge == nil {
			u.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(0))
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
}

// validateDaemonSetSpec is the part of pkg/apis/apps/validation
// ValidateDaemonSetSpec the twin reads: the update strategy
// (ValidateDaemonSetUpdateStrategy, ValidateRollingUpdateDaemonSet: exactly
// one of maxUnavailable and maxSurge non-zero) and minReadySeconds.
func validateDaemonSetSpec(spec *appsv1.DaemonSetSpec) field.ErrorList {
	fld := field.NewPath("spec")
	var errs field.ErrorList
	u := spec.UpdateStrategy
	switch u.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
	case appsv1.RollingUpdateDaemonSetStrategyType:
		ru, path := u.RollingUpdate, fld.Child("updateStrategy", "rollingUpdate")
		errs = append(errs, validatePositiveIntOrPercent(*ru.MaxUnavailable, path.Child("maxUnavailable"))...)
		errs = append(errs, validatePositiveIntOrPercent(*ru.MaxSurge, path.Child("maxSurge"))...)
		errs = append(errs, notMoreThan100Percent(*ru.MaxUnavailable, path.Child("maxUnavailable"))...)
		errs = append(errs, notMoreThan100Percent(*ru.MaxSurge, path.Child("maxSurge"))...)
		hasUnavailable, hasSurge := intOrPercentValue(*ru.MaxUnavailable) != 0, intOrPercentValue(*ru.MaxSurge) != 0
		switch {
		case hasUnavailable && hasSurge:
			errs = append(errs, field.Invalid(path.Child("maxSurge"), *ru.MaxSurge, "may not be set when maxUnavailable is non-zero"))
		case !hasUnavailable && !hasSurge:
			errs = append(errs, field.Required(path.Child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
		}
	default:
		errs = append(errs, field.NotSupported(fld.Child("updateStrategy", "type"), u.Type,
			[]string{string(appsv1.RollingUpdateDaemonSetStrategyType), string(appsv1.OnDeleteDaemonSetStrategyType)}))
	}
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), fld.Child("minReadySeconds"))...)
	return errs
}

// Validation helpers of pkg/apis/apps/validation.

// validatePositiveIntOrPercent is ValidatePositiveIntOrPercent.
func validatePositiveIntOrPercent(v intstr.IntOrString, path *field.Path) field.ErrorList {
	switch v.Type {
	case intstr.String:
		var errs field.ErrorList
		for _, msg := range validation.IsValidPercent(v.StrVal) {
			errs = append(errs, field.Invalid(path, v, msg))
		}
		return errs
	case intstr.Int:
		return apivalidation.ValidateNonnegativeField(int64(v.IntValue()), path)
	}
	return field.ErrorList{field.Invalid(path, v, "must be an integer or percentage (e.g '5%')")}
}

// percentValue is getPercentValue.
func percentValue(v intstr.IntOrString) (int, bool) {
	if v.Type != intstr.String || len(validation.IsValidPercent(v.StrVal)) != 0 {
		return 0, false
	}
	n, _ := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	return n, true
}

// intOrPercentValue is getIntOrPercentValue.
func intOrPercentValue(v intstr.IntOrString) int {
	if n, ok := percentValue(v); ok {
		return n
	}
	return v.IntValue()
}

// notMoreThan100Percent is IsNotMoreThan100Percent.
func notMoreThan100Percent(v intstr.IntOrString, path *field.Path) field.ErrorList {
	if n, ok := percentValue(v); ok && n > 100 {
		return field.ErrorList{field.Invalid(path, v, "must not be greater than 100%")}
	}
	return nil
}
