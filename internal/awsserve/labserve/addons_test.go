package labserve

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ladder-eks/ladder/internal/twin/eks"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

func coredns(image string) *appsv1.Deployment {
	two := int32(2)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "coredns", Generation: 1},
		Spec: appsv1.DeploymentSpec{Replicas: &two, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "coredns", Image: image},
			{Name: "sidecar", Image: "registry.k8s.io/pause:3.10"},
		}}}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2},
	}
}

// An UpdateAddon on the lab writes the version's image into the add-on's
// own container on the API server (the sidecar keeps its image), and the
// update is rolled out only when the Deployment's status says so.
func TestApplyAddonWritesTheImageAndWaitsForTheRollout(t *testing.T) {
	const repo = "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/coredns"
	cs := fake.NewSimpleClientset(coredns(repo + ":v1.11.4-eksbuild.40"))
	ctx := context.Background()
	k := NewKube(ctx, cs, kube.Options{})
	rolledOut, err := eks.ApplyAddon(k, "coredns", "v1.12.4-eksbuild.18")
	if err != nil {
		t.Fatal(err)
	}
	d, err := cs.AppsV1().Deployments("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != repo+":v1.12.4-eksbuild.18" {
		t.Errorf("coredns image %s, want the version's tag", got)
	}
	if got := d.Spec.Template.Spec.Containers[1].Image; got != "registry.k8s.io/pause:3.10" {
		t.Errorf("sidecar image %s, want it unchanged", got)
	}
	// The fake has no controller: the API server's generation bump and
	// the Deployment controller's status are written by hand.
	d.Generation = 2
	d.Status.UpdatedReplicas = 0
	if _, err := cs.AppsV1().Deployments("kube-system").Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if rolledOut() {
		t.Fatal("rolled out before the controller observed the new template")
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 2, AvailableReplicas: 3}
	if _, err := cs.AppsV1().Deployments("kube-system").UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if rolledOut() {
		t.Fatal("rolled out while an old replica is pending termination")
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2}
	if _, err := cs.AppsV1().Deployments("kube-system").UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !rolledOut() {
		t.Error("not rolled out with every replica updated and available")
	}
}

// An add-on whose workload the lab lacks is refused, naming it.
func TestApplyAddonWithoutItsWorkload(t *testing.T) {
	k := NewKube(context.Background(), fake.NewSimpleClientset(), kube.Options{})
	_, err := eks.ApplyAddon(k, "coredns", "v1.12.4-eksbuild.18")
	if err == nil || err.Error() != `add-on coredns: deployments.apps "coredns" not found` {
		t.Errorf("ApplyAddon = %v, want the missing Deployment named", err)
	}
}
