package eviction

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const ns = "default"

var t0 = time.Date(2026, 8, 27, 12, 0, 0, 0, time.UTC)

type podOpt func(*corev1.Pod)

func newPod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, UID: types.UID("uid-" + name),
			Labels: map[string]string{"app": "web"}, ResourceVersion: "7",
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func unready(p *corev1.Pod) {
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
}

func phase(ph corev1.PodPhase) podOpt { return func(p *corev1.Pod) { p.Status.Phase = ph } }

func inNamespace(n string) podOpt { return func(p *corev1.Pod) { p.Namespace = n } }

func withLabels(l map[string]string) podOpt { return func(p *corev1.Pod) { p.Labels = l } }

func deleting(at time.Time) podOpt {
	return func(p *corev1.Pod) { d := metav1.NewTime(at); p.DeletionTimestamp = &d }
}

// ownedBy sets a controllerRef. uid identifies the owner.
func ownedBy(apiVersion, kind, name string) podOpt {
	return func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: apiVersion, Kind: kind, Name: name,
			UID: types.UID("uid-" + name), Controller: new(true),
		}}
	}
}

func rsPod(rs string) podOpt { return ownedBy("apps/v1", "ReplicaSet", rs) }

func pods(n int, prefix string, opts ...podOpt) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, newPod(prefix+"-"+string(rune('a'+i)), opts...))
	}
	return out
}

func concat(groups ...[]*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// scales maps a controllerRef name to (owner UID, replicas). The key is the
// name of the pod's direct controller; uid is the UID whose scale is used
// (a Deployment's UID for its ReplicaSets).
type scaleEntry struct {
	uid      types.UID
	replicas int32
}

func scaleFrom(m map[string]scaleEntry) ScaleFunc {
	return func(pod *corev1.Pod) (types.UID, int32, bool) {
		ref := metav1.GetControllerOf(pod)
		if ref == nil {
			return "", 0, false
		}
		e, ok := m[ref.Name]
		if !ok {
			return "", 0, false
		}
		return e.uid, e.replicas, true
	}
}

type pdbOpt func(*policyv1.PodDisruptionBudget)

func newPDB(name string, opts ...pdbOpt) *policyv1.PodDisruptionBudget {
	p := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Generation: 1},
		Spec: policyv1.PodDisruptionBudgetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
		Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func minAvailable(v intstr.IntOrString) pdbOpt {
	return func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = &v }
}

func maxUnavailable(v intstr.IntOrString) pdbOpt {
	return func(p *policyv1.PodDisruptionBudget) { p.Spec.MaxUnavailable = &v }
}

func selector(s *metav1.LabelSelector) pdbOpt {
	return func(p *policyv1.PodDisruptionBudget) { p.Spec.Selector = s }
}

func generation(g, observed int64) pdbOpt {
	return func(p *policyv1.PodDisruptionBudget) { p.Generation = g; p.Status.ObservedGeneration = observed }
}

// status sets allowed/current/desired/expected.
func status(allowed, current, desired, expected int32) pdbOpt {
	return func(p *policyv1.PodDisruptionBudget) {
		p.Status.DisruptionsAllowed = allowed
		p.Status.CurrentHealthy = current
		p.Status.DesiredHealthy = desired
		p.Status.ExpectedPods = expected
	}
}

func disrupted(m map[string]time.Time) pdbOpt {
	return func(p *policyv1.PodDisruptionBudget) {
		p.Status.DisruptedPods = map[string]metav1.Time{}
		for k, v := range m {
			p.Status.DisruptedPods[k] = metav1.NewTime(v)
		}
	}
}

func unhealthyPolicy(v policyv1.UnhealthyPodEvictionPolicyType) pdbOpt {
	return func(p *policyv1.PodDisruptionBudget) { p.Spec.UnhealthyPodEvictionPolicy = &v }
}

func condition(st metav1.ConditionStatus, reason string, ltt time.Time) pdbOpt {
	return func(p *policyv1.PodDisruptionBudget) {
		p.Status.Conditions = []metav1.Condition{{
			Type: policyv1.DisruptionAllowedCondition, Status: st, Reason: reason,
			ObservedGeneration: p.Status.ObservedGeneration, LastTransitionTime: metav1.NewTime(ltt),
		}}
	}
}
