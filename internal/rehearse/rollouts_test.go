package rehearse

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/report"
)

// TestFargateRestartBelowTheFloor: the workshop's Fargate step restarts the
// workloads of namespace assets (kubectl rollout restart). A one-replica
// StatefulSet there under minAvailable 1 has no Ready pod from the deletion
// of the old pod until the new one runs: PDBs do not guard rollouts, so no
// violation — but the span below the floor is reported, and the run and
// the Fargate step are violated. Before, the run said succeeded.
func TestFargateRestartBelowTheFloor(t *testing.T) {
	sc := loadBuiltin(t, "workshop")
	labels := map[string]string{"app": "assets-cache"}
	one := int32(1)
	sts := &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "assets-cache", Namespace: "assets"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: &one, ServiceName: "assets-cache",
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "cache", Image: "redis:7",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")}}}}},
			},
		},
	}
	minOne := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: "assets-cache", Namespace: "assets"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minOne, Selector: &metav1.LabelSelector{MatchLabels: labels}},
	}
	sc.Objects = append(sc.Objects,
		manifest.Object{GVK: appsv1.SchemeGroupVersion.WithKind("StatefulSet"), Object: sts},
		manifest.Object{GVK: policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"), Object: pdb})
	rep, err := Run(sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != report.Violated || len(rep.Violations) != 0 {
		t.Fatalf("status %s, violations %+v: want violated by a rollout alone", rep.Status, rep.Violations)
	}
	var span *report.RolloutBelowFloor
	for i := range rep.RolloutsBelowFloor {
		if rep.RolloutsBelowFloor[i].PDB == "assets/assets-cache" {
			span = &rep.RolloutsBelowFloor[i]
		}
	}
	if span == nil {
		t.Fatalf("rolloutsBelowFloor %+v: want assets/assets-cache", rep.RolloutsBelowFloor)
	}
	if span.Workload != "StatefulSet/assets/assets-cache" || span.Cause != report.CauseRollout || span.Pods != 1 ||
		span.MinHealthy != 0 || span.Desired != 1 || span.Seconds <= 0 || span.Ongoing || span.Step == "" {
		t.Errorf("span %+v, want the StatefulSet's rollout at 0 of 1 for a while, in a step", *span)
	}
	violatedStep := false
	for _, ph := range rep.Phases {
		if ph.Status == report.Violated {
			violatedStep = ph.Kind == span.Step && ph.Name == span.Name && strings.Contains(ph.Message, "assets/assets-cache")
		}
	}
	if !violatedStep {
		t.Errorf("no violated step naming assets/assets-cache: %+v", rep.Phases)
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "rollout of StatefulSet/assets/assets-cache held PodDisruptionBudget assets/assets-cache below its floor of 1") {
		t.Errorf("the text report does not say it:\n%s", text.String()[:min(2000, text.Len())])
	}
}
