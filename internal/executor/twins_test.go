package executor

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/awsport/twinaws"
	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeport/twinport"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/asg"
	twineks "github.com/ladder-eks/ladder/internal/twin/eks"
	"github.com/ladder-eks/ladder/internal/twin/fargate"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/mng"
	"github.com/ladder-eks/ladder/internal/twin/twintest"
	"github.com/ladder-eks/ladder/internal/twin/worker"
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

// refreshTwin is an executor on a twin with one self-managed group,
// workers: four m5.large instances on launch template workers:1 with
// image, running for a day, driven through twinaws's Auto Scaling and
// launch template ports.
func refreshTwin(t *testing.T, rec *recorder, image string, deadline time.Duration) (*Executor, *twinaws.AutoScaling) {
	t.Helper()
	base := twintest.New(t0, 1, "us-west-2a", "us-west-2b")
	eng, kc := base.Eng, base.Kube
	groups := asg.New(eng, kc, worker.New(eng, kc, base.Cloud, worker.Timings{}),
		asg.Options{InstanceTypes: catalog.InstanceTypes(), Zones: []string{"us-west-2a", "us-west-2b"}})
	if err := groups.Create(asg.Spec{Name: "workers", InstanceType: "m5.large", Desired: 4, Min: 4, Max: 8,
		LaunchTemplate: asg.LaunchTemplate{Name: "workers", Version: "1", ImageID: image}}, 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	p := twinport.New(kc, twinport.Options{})
	rec.port, rec.start = p, p.Now()
	api := twinaws.NewAutoScaling(groups)
	return &Executor{Cluster: "demo", Ports: Ports{Kube: p, AutoScaling: api, LaunchTemplates: api}, AMIs: catalogAMIs{},
		Observer: rec, Deadline: p.Now().Add(deadline)}, api
}

// managedTwin is a cluster whose control plane is at 1.31 with two managed
// node groups still at 1.30: custom, on a custom AMI (launch template
// custom, version 1), and blue, in zones a and b with the label
// type=orders and the taint dedicated=orders:NoSchedule, running orders'
// two replicas. The executor drives it through the twins' EKS, EC2 and
// Kubernetes ports.
type managedTwin struct {
	ex     *Executor
	rec    *recorder
	groups *mng.Service
	port   *twinport.Port
	cp     *twineks.ControlPlane
}

func newManagedTwin(t *testing.T) *managedTwin {
	t.Helper()
	base := twintest.New(time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC), 1, mngZones...)
	eng, kc := base.Eng, base.Kube
	cp := twineks.New(eng, "demo", "us-west-2", v131, 0)
	groups := mng.New(eng, kc, worker.New(eng, kc, base.Cloud, worker.Timings{}), mng.Options{
		InstanceTypes: catalog.InstanceTypes(), Zones: mngZones, ControlPlaneVersion: cp.Version,
	})
	for _, spec := range []nodegroup.Spec{
		{Name: "custom", InstanceTypes: []string{"m5.large"}, Desired: 2, Min: 1, Max: 3,
			LaunchTemplate: &nodegroup.LaunchTemplate{Name: "custom", Version: "1", ImageID: ami130}},
		{Name: "blue", InstanceTypes: []string{"m5.large"}, Desired: 2, Min: 1, Max: 3, Zones: mngZones[:2], Version: "1.30",
			Labels: map[string]string{"type": "orders"},
			Taints: []corev1.Taint{{Key: "dedicated", Value: "orders", Effect: corev1.TaintEffectNoSchedule}}},
	} {
		if err := groups.Adopt(spec, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	lbls := map[string]string{"app": "orders"}
	if err := kc.Apply(&appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "orders"},
		Spec: appsv1.DeploymentSpec{Replicas: aws.Int32(2), Selector: &metav1.LabelSelector{MatchLabels: lbls},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbls}, Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"type": "orders"},
				Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "orders", Effect: corev1.TaintEffectNoSchedule}},
				Containers:   []corev1.Container{{Name: "app", Image: "orders"}}}}},
	}); err != nil {
		t.Fatal(err)
	}
	port := twinport.New(kc, twinport.Options{})
	api := twinaws.NewEKS(twinaws.EKSOptions{Engine: eng, Cluster: "demo", Region: "us-west-2", ControlPlane: cp, Nodegroups: groups})
	rec := &recorder{port: port, start: port.Now()}
	tw := &managedTwin{rec: rec, groups: groups, port: port, cp: cp, ex: &Executor{Cluster: "demo",
		Ports: Ports{Kube: port, EKS: api, LaunchTemplates: api.LaunchTemplates(nil)},
		AMIs:  catalogAMIs{}, Observer: rec, Deadline: port.Now().Add(6 * time.Hour)}}
	if err := tw.ex.WaitFor(context.Background(), kubeport.PodsSettled{}); err != nil {
		t.Fatal(err)
	}
	return tw
}
