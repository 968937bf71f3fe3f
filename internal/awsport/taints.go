package awsport

import (
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	corev1 "k8s.io/api/core/v1"
)

// taintEffects pair EKS's taint effects with Kubernetes'.
var taintEffects = []struct {
	eks  ekstypes.TaintEffect
	kube corev1.TaintEffect
}{
	{ekstypes.TaintEffectNoSchedule, corev1.TaintEffectNoSchedule},
	{ekstypes.TaintEffectNoExecute, corev1.TaintEffectNoExecute},
	{ekstypes.TaintEffectPreferNoSchedule, corev1.TaintEffectPreferNoSchedule},
}

// KubeTaintEffect is an EKS taint effect (NO_SCHEDULE) as Kubernetes
// spells it (NoSchedule).
func KubeTaintEffect(e ekstypes.TaintEffect) corev1.TaintEffect {
	for _, p := range taintEffects {
		if p.eks == e {
			return p.kube
		}
	}
	return corev1.TaintEffectNoSchedule
}

// EKSTaintEffect is a Kubernetes taint effect as EKS spells it.
func EKSTaintEffect(e corev1.TaintEffect) ekstypes.TaintEffect {
	for _, p := range taintEffects {
		if p.kube == e {
			return p.eks
		}
	}
	return ekstypes.TaintEffectNoSchedule
}
