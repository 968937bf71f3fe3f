package rehearse

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// bigLiveCluster: nodes nodes in 10 managed groups, deployments
// Deployments of 10 replicas (a PDB of maxUnavailable 1 on each), spread
// round-robin.
func bigLiveCluster(nodes, deployments int) *LiveCluster {
	lc := &LiveCluster{Start: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), Region: "us-west-2", Zones: []string{"us-west-2a", "us-west-2b", "us-west-2c"}}
	zones := lc.Zones
	for i := range nodes {
		n := liveTestNode(fmt.Sprintf("ip-10-1-%d-%d", i/250, i%250), zones[i%3])
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("58")}
		lc.Nodes = append(lc.Nodes, LiveNode{Node: n, Group: twinbuild.GroupRef{Name: fmt.Sprintf("ng-%d", i%10), Type: "managed"}})
	}
	ctl := true
	ten := int32(10)
	one := intstr.FromInt32(1)
	for d := range deployments {
		name := fmt.Sprintf("app-%d", d)
		l := map[string]string{"app": name}
		spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "c:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}
		lc.Objects = append(lc.Objects,
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
				Spec: appsv1.DeploymentSpec{Replicas: &ten, Selector: &metav1.LabelSelector{MatchLabels: l}, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: spec}}},
			&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name + "-abc",
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: name, Controller: &ctl}}}},
			&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
				Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: &metav1.LabelSelector{MatchLabels: l}}})
		for r := range 10 {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("%s-abc-%05d", name, r), Labels: l,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name + "-abc", Controller: &ctl}}},
				Spec: *spec.DeepCopy(), Status: corev1.PodStatus{Phase: corev1.PodRunning}}
			p.Spec.NodeName = lc.Nodes[(d*10+r*7)%nodes].Node.Name
			lc.Objects = append(lc.Objects, p)
		}
	}
	return lc
}

// TestPredictLiveDrainsLarge: a cluster of 1,000 nodes in 10 groups is
// predicted with DrainsPerGroup nodes per group (30 drains), not 1,000;
// BenchmarkPredictLiveDrains1000Nodes times it.
func TestPredictLiveDrainsLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 31 twins of 1,000 nodes")
	}
	ps, refused, err := PredictLiveDrains(bigLiveCluster(1000, 300), DrainsPerGroup)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 30 || len(refused) != 0 {
		t.Errorf("%d predictions (want 30), refused %v", len(ps), refused)
	}
	for _, p := range ps {
		if !p.Finished {
			t.Errorf("%s: %+v", p.Node, p)
		}
	}
}

// BenchmarkPredictLiveDrains1000Nodes: 1,000 nodes, 3,000 pods, 30 drains
// (about 2 s on this 2-core VM; 10,000 pods about 6 s).
func BenchmarkPredictLiveDrains1000Nodes(b *testing.B) {
	lc := bigLiveCluster(1000, 300)
	b.ResetTimer()
	for range b.N {
		if _, _, err := PredictLiveDrains(lc, DrainsPerGroup); err != nil {
			b.Fatal(err)
		}
	}
}
