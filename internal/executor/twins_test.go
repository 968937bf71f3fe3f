package executor

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeport/twinport"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/fargate"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/twintest"
)

// The twins the executor's tests run on, and the workloads on them.

// webTwin is a twin port with one node running web, two Ready replicas.
func webTwin(t *testing.T) *twinport.Port {
	t.Helper()
	c := kube.New(sim.New(t0, 1), kube.Options{})
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("10")}
	if err := c.AddNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Allocatable: alloc, Capacity: alloc,
		NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.30.4-eks-a737599"}}}, true); err != nil {
		t.Fatal(err)
	}
	lbls := map[string]string{"app": "web"}
	two := int32(2)
	if err := c.Apply(&appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: lbls},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbls},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}}}},
	}); err != nil {
		t.Fatal(err)
	}
	p := twinport.New(c, twinport.Options{})
	settled := kubeport.PodsSettled{}.Condition(p)
	if err := p.Wait(context.Background(), time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := p.ListPods(ctx, kubeport.PodQuery{})
		if err != nil || len(pods) != 2 {
			return false, err
		}
		return settled(ctx)
	}); err != nil {
		t.Fatal(err)
	}
	return p
}

const corednsImage = "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/coredns:"

func coredns(tag string) *appsv1.Deployment {
	lbls := map[string]string{"k8s-app": "kube-dns"}
	two := int32(2)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "coredns"},
		Spec: appsv1.DeploymentSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: lbls},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbls},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "coredns", Image: corednsImage + tag}}}}},
	}
}

// fargateTwin is a twin whose Fargate profile fp selects namespace assets,
// with its kubelet at 1.30; apps are applied there and run before the
// executor starts.
func fargateTwin(t *testing.T, rec *restartRecorder, apps ...metav1.Object) (*Executor, func(string)) {
	t.Helper()
	base := twintest.New(t0, 1, "us-west-2a", "us-west-2b")
	eng, kc := base.Eng, base.Kube
	kubelet := "v1.30.14-eks-f69f56f"
	f := fargate.New(eng, kc, base.Cloud, fargate.Options{Kubelet: func() string { return kubelet }})
	if err := f.AddProfile(fargate.Profile{Name: "fp", Selectors: []fargate.Selector{{Namespace: "assets"}}}); err != nil {
		t.Fatal(err)
	}
	if err := kc.Apply(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "assets"}}); err != nil {
		t.Fatal(err)
	}
	for _, o := range apps {
		if err := kc.Apply(o); err != nil {
			t.Fatal(err)
		}
	}
	eng.RunUntil(t0.Add(5 * time.Minute))
	p := twinport.New(kc, twinport.Options{})
	rec.port, rec.start = p, p.Now()
	return &Executor{Cluster: "demo", Ports: Ports{Kube: p}, Observer: rec, Deadline: p.Now().Add(time.Hour)}, func(v string) { kubelet = v }
}

func assetsApp(kind, name string, replicas int32) metav1.Object {
	lbls := map[string]string{"app": name}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbls},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "assets:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("512Mi")}}}}}}
	meta := metav1.ObjectMeta{Namespace: "assets", Name: name}
	sel := &metav1.LabelSelector{MatchLabels: lbls}
	switch kind {
	case "StatefulSet":
		return &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Selector: sel, Template: tmpl, ServiceName: name}}
	case "Pod":
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "assets", Name: name, Labels: lbls}, Spec: tmpl.Spec}
	}
	return &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: sel, Template: tmpl}}
}
