// Package rollout says how few of a workload's pods stay Ready while its own
// controller rolls it — `kubectl rollout restart`, which an EKS upgrade runs
// on Fargate workloads to move them to the new kubelet (semantics.md §E), or
// any change of the pod template.
//
// A rollout is not an eviction: the Deployment and StatefulSet controllers
// delete old pods directly, bounded only by their own update strategy, and
// no PodDisruptionBudget is consulted (the Eviction API is, §D.1; the
// workload controllers call the pods' delete, not the eviction
// subresource). The numbers here are upstream's, from k8s.io/kubernetes
// v1.37: pkg/controller/deployment (util/deployment_util.go
// ResolveFenceposts, MaxUnavailable, MinAvailable; rolling.go, recreate.go),
// pkg/controller/statefulset (stateful_set_control.go
// updateStatefulSetAfterInvariantEstablished, stateful_set_utils.go
// getStatefulSetMaxUnavailable), with the API server's defaults
// (pkg/apis/apps/v1/defaults.go) applied to what a manifest leaves out.
package rollout

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// Rollout is what a workload's controller does to its pods when their
// template changes.
type Rollout struct {
	// Rolls is false when a restart replaces no pod (Why says why): a
	// StatefulSet with updateStrategy OnDelete, or whose partition is at or
	// above its replicas; a paused Deployment; no replicas.
	Rolls bool
	Why   string
	// Replicas is spec.replicas (1 when omitted).
	Replicas int32
	// Recreate: every old pod goes before a new one starts (Deployment
	// strategy Recreate, StatefulSet updateStrategy Recreate).
	Recreate bool
	// MaxUnavailable is the most pods the controller takes down at once,
	// resolved from MaxUnavailableValue as upstream resolves it.
	// MaxUnavailableValue is the value as the API server stores it (its
	// default filled in); for a StatefulSet whose controller ignores the
	// field (MaxUnavailableIgnored), the value written.
	MaxUnavailable        int32
	MaxUnavailableValue   intstr.IntOrString
	MaxUnavailableIgnored bool
	// MaxSurge is how many pods above Replicas a Deployment may run,
	// resolved from MaxSurgeValue; 0 for a StatefulSet, which cannot surge.
	MaxSurge      int32
	MaxSurgeValue intstr.IntOrString
	// Partition is a StatefulSet's rollingUpdate.partition: the pods of
	// lower ordinals are not updated.
	Partition int32
	// MinReady is the fewest pods the controller keeps Ready (available,
	// which implies Ready) while it rolls: Replicas less the most it takes
	// down at once, never below 0.
	MinReady int32
}

// Deployment is the rollout of a Deployment with this spec.
//
//   - RollingUpdate (the default type): maxUnavailable and maxSurge default
//     to 25% (SetDefaults_Deployment); ResolveFenceposts scales maxSurge
//     rounding up and maxUnavailable rounding down, and makes maxUnavailable
//     1 when both come to 0; MaxUnavailable caps it at the replicas. The
//     controller keeps MinAvailable = replicas − maxUnavailable pods
//     available (rolling.go reconcileOldReplicaSets scales the old
//     ReplicaSets down only past that floor), so MinReady is that.
//   - Recreate: recreate.go scales every old ReplicaSet to 0 and waits for
//     their pods to be gone before it scales the new one up: MinReady 0.
//   - spec.paused: kubectl rollout restart refuses a paused Deployment
//     ("can't restart paused deployment (run rollout resume first)",
//     k8s.io/kubectl pkg/polymorphichelpers/objectrestarter.go), and the
//     controller rolls out no template change while it is paused.
func Deployment(spec *appsv1.DeploymentSpec) (Rollout, error) {
	r := Rollout{Replicas: replicasOf(spec.Replicas)}
	switch {
	case spec.Paused:
		r.Why = "paused"
		return r, nil
	case r.Replicas <= 0:
		r.Why = "no replicas"
		return r, nil
	}
	r.Rolls = true
	switch spec.Strategy.Type {
	case appsv1.RecreateDeploymentStrategyType:
		r.Recreate, r.MaxUnavailable = true, r.Replicas
		return r, nil
	case appsv1.RollingUpdateDeploymentStrategyType, "":
	default:
		return Rollout{}, fmt.Errorf("spec.strategy.type %q is neither RollingUpdate nor Recreate", spec.Strategy.Type)
	}
	r.MaxUnavailableValue, r.MaxSurgeValue = intstr.FromString("25%"), intstr.FromString("25%")
	if ru := spec.Strategy.RollingUpdate; ru != nil {
		if ru.MaxUnavailable != nil {
			r.MaxUnavailableValue = *ru.MaxUnavailable
		}
		if ru.MaxSurge != nil {
			r.MaxSurgeValue = *ru.MaxSurge
		}
	}
	surge, unavailable, err := ResolveFenceposts(&r.MaxSurgeValue, &r.MaxUnavailableValue, r.Replicas)
	if err != nil {
		return Rollout{}, err
	}
	r.MaxSurge, r.MaxUnavailable = surge, min(unavailable, r.Replicas)
	r.MinReady = r.Replicas - r.MaxUnavailable
	return r, nil
}

// ResolveFenceposts is upstream deployment/util ResolveFenceposts: maxSurge
// scaled to desired rounding up, maxUnavailable rounding down, a missing
// value 0, and maxUnavailable 1 when both resolve to 0 ("on the theory
// that surge might not work due to quota").
func ResolveFenceposts(maxSurge, maxUnavailable *intstr.IntOrString, desired int32) (surge, unavailable int32, err error) {
	s, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(maxSurge, intstr.FromInt32(0)), int(desired), true)
	if err != nil {
		return 0, 0, err
	}
	u, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(maxUnavailable, intstr.FromInt32(0)), int(desired), false)
	if err != nil {
		return 0, 0, err
	}
	if s == 0 && u == 0 {
		u = 1
	}
	return int32(s), int32(u), nil
}

// MaxUnavailableStatefulSet is the first Kubernetes minor whose
// kube-controller-manager honours a StatefulSet's
// rollingUpdate.maxUnavailable by default: the MaxUnavailableStatefulSet
// feature gate is alpha from 1.24, beta off from 1.35, beta on from 1.37
// (pkg/features/kube_features.go). EKS runs the default gates. Before, the
// controller replaces one pod at a time whatever the field says.
var MaxUnavailableStatefulSet = kubeversion.Minor{Major: 1, Minor: 37}

// StatefulSet is the rollout of a StatefulSet with this spec by the
// kube-controller-manager of minor controller (the zero Minor: the newest,
// which honours maxUnavailable).
//
//   - RollingUpdate (the default type): the controller deletes, from the
//     highest ordinal down to the partition, at most maxUnavailable pods
//     that are not yet updated, less the pods already unavailable
//     (updateStatefulSetAfterInvariantEstablished); maxUnavailable defaults
//     to 1, a percentage rounds down and the result is at least 1
//     (getStatefulSetMaxUnavailable). Without the MaxUnavailableStatefulSet
//     gate it deletes one pod and waits for it to be Ready again. It never
//     creates a pod before the old one of the same ordinal is gone, so it
//     cannot surge. The pods below rollingUpdate.partition are not
//     updated: at most Replicas − Partition go down.
//   - OnDelete: the controller replaces no pod on its own; a restart or a
//     template change waits for someone to delete the pods. Rolls false.
//   - Recreate (alpha, StatefulSetRecreateStrategy): every old pod is
//     deleted and gone before new ones are created. MinReady 0.
func StatefulSet(spec *appsv1.StatefulSetSpec, controller kubeversion.Minor) (Rollout, error) {
	r := Rollout{Replicas: replicasOf(spec.Replicas)}
	if r.Replicas <= 0 {
		r.Why = "no replicas"
		return r, nil
	}
	switch spec.UpdateStrategy.Type {
	case appsv1.OnDeleteStatefulSetStrategyType:
		r.Why = "updateStrategy OnDelete"
		return r, nil
	case appsv1.RecreateStatefulSetStrategyType:
		r.Rolls, r.Recreate, r.MaxUnavailable = true, true, r.Replicas
		return r, nil
	case appsv1.RollingUpdateStatefulSetStrategyType, "":
	default:
		return Rollout{}, fmt.Errorf("spec.updateStrategy.type %q is neither RollingUpdate, OnDelete nor Recreate", spec.UpdateStrategy.Type)
	}
	r.MaxUnavailable, r.MaxUnavailableValue = 1, intstr.FromInt32(1)
	if ru := spec.UpdateStrategy.RollingUpdate; ru != nil {
		if ru.Partition != nil {
			r.Partition = *ru.Partition
		}
		if ru.MaxUnavailable != nil {
			r.MaxUnavailableValue = *ru.MaxUnavailable
		}
		if controller.IsZero() || !controller.Less(MaxUnavailableStatefulSet) {
			n, err := StatefulSetMaxUnavailable(&r.MaxUnavailableValue, r.Replicas)
			if err != nil {
				return Rollout{}, err
			}
			r.MaxUnavailable = n
		} else {
			r.MaxUnavailableIgnored = ru.MaxUnavailable != nil
		}
	}
	if r.Partition >= r.Replicas {
		r.Why = fmt.Sprintf("partition %d at or above its %d replicas", r.Partition, r.Replicas)
		return r, nil
	}
	r.Rolls = true
	r.MinReady = r.Replicas - min(r.MaxUnavailable, r.Replicas-r.Partition)
	return r, nil
}

// StatefulSetMaxUnavailable is upstream stateful_set_control.go
// getStatefulSetMaxUnavailable: rollingUpdate.maxUnavailable scaled to the
// replicas, a percentage rounding down, 1 when omitted, and at least 1.
func StatefulSetMaxUnavailable(v *intstr.IntOrString, replicas int32) (int32, error) {
	n, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(v, intstr.FromInt32(1)), int(replicas), false)
	if err != nil {
		return 0, err
	}
	return int32(max(n, 1)), nil
}

// replicasOf is spec.replicas, 1 when omitted (the API server's default).
func replicasOf(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}
