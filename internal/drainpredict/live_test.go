package drainpredict

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/ladder-eks/ladder/internal/twinbuild"
)

func liveTestNode(name, zone string) *corev1.Node {
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("29")}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelTopologyZone: zone, "eks.amazonaws.com/nodegroup": "blue"},
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
}

// liveTestCluster: two managed nodes; orders (one replica, a PDB of
// minAvailable 1) runs on the second; web (two replicas, no budget) on
// both; a bare pod on the first.
func liveTestCluster() *LiveCluster {
	labels := map[string]string{"app": "orders"}
	one := int32(1)
	two := int32(2)
	tmpl := func(l map[string]string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}}
	}
	ctl := true
	pod := func(name, node, ownerKind, owner string, l map[string]string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Labels: l}, Spec: tmpl(l).Spec, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		p.Spec.NodeName = node
		if owner != "" {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: ownerKind, Name: owner, Controller: &ctl}}
		}
		return p
	}
	rs := func(name, deploy string) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: deploy, Controller: &ctl}}}}
	}
	web := map[string]string{"app": "web"}
	done := pod("done", "ip-10-0-1-1", "", "", nil)
	done.Status.Phase = corev1.PodSucceeded
	return &LiveCluster{
		Start: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), Region: "us-west-2", Zones: []string{"us-west-2a", "us-west-2b"},
		Nodes: []LiveNode{
			{Node: liveTestNode("ip-10-0-1-1", "us-west-2a"), Group: twinbuild.GroupRef{Name: "blue", Type: "managed"}},
			{Node: liveTestNode("ip-10-0-2-1", "us-west-2b"), Group: twinbuild.GroupRef{Name: "blue", Type: "managed"}},
		},
		Objects: []metav1.Object{
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders"},
				Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl(labels)}},
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
				Spec: appsv1.DeploymentSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: web}, Template: tmpl(web)}},
			rs("orders-5d9f", "orders"), rs("web-7c4b", "web"),
			&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders-pdb"},
				Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &intstr.IntOrString{IntVal: 1}, Selector: &metav1.LabelSelector{MatchLabels: labels}}},
			pod("orders-5d9f-abcde", "ip-10-0-2-1", "ReplicaSet", "orders-5d9f", labels),
			pod("web-7c4b-aaaaa", "ip-10-0-1-1", "ReplicaSet", "web-7c4b", web),
			pod("web-7c4b-bbbbb", "ip-10-0-2-1", "ReplicaSet", "web-7c4b", web),
			pod("debug", "ip-10-0-1-1", "", "", map[string]string{"run": "debug"}),
			done,
		},
	}
}

// TestLiveTwinPlacesPods: each live pod's twin is on the live pod's node.
func TestLiveTwinPlacesPods(t *testing.T) {
	tw, err := liveTwin(liveTestCluster())
	if err != nil {
		t.Fatal(err)
	}
	k := tw.k
	if len(tw.refused) != 0 {
		t.Errorf("refused: %v", tw.refused)
	}
	got := map[string][]string{}
	for _, p := range k.Pods() {
		if !podutils.IsPodReady(p) {
			t.Errorf("%s/%s not Ready", p.Namespace, p.Name)
		}
		name := p.Name
		if i := strings.Index(name, "-"); i > 0 {
			name = name[:i]
		}
		got[p.Spec.NodeName] = append(got[p.Spec.NodeName], name)
	}
	if a, b := strings.Join(got["ip-10-0-1-1"], ","), strings.Join(got["ip-10-0-2-1"], ","); !sameSet(a, "debug,web") || !sameSet(b, "orders,web") {
		t.Errorf("ip-10-0-1-1: %s (want debug,web); ip-10-0-2-1: %s (want orders,web)", a, b)
	}
}

func sameSet(a, b string) bool {
	x, y := strings.Split(a, ","), strings.Split(b, ",")
	if len(x) != len(y) {
		return false
	}
	seen := map[string]int{}
	for _, s := range x {
		seen[s]++
	}
	for _, s := range y {
		seen[s]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// TestLive: draining the node with orders is refused until
// EKS's 15 minutes; the other node drains (web's pod and the bare pod go);
// with one node per group, the node orders holds up is the one drained.
func TestLive(t *testing.T) {
	ps, _, err := Live(liveTestCluster(), PerGroup)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + describePredictions(ps))
	if len(ps) != 2 {
		t.Fatalf("%d predictions, want 2", len(ps))
	}
	a, b := ps[0], ps[1]
	if !a.Finished || len(a.Blocks) != 0 || a.Evicted != 2 {
		t.Errorf("%s: %+v, want finished, 2 pods evicted", a.Node, a)
	}
	if b.Finished || b.Duration != 15*time.Minute || len(b.Blocks) != 1 {
		t.Fatalf("%s: %+v, want blocked until 15m", b.Node, b)
	}
	if bl := b.Blocks[0]; bl.Pod != "shop/orders-5d9f-abcde" || !strings.Contains(b.Error, `"orders-5d9f-abcde"`) {
		t.Errorf("block of %s, error %q: want the live pod shop/orders-5d9f-abcde", bl.Pod, b.Error)
	}
	if bl := b.Blocks[0]; bl.PDB != "shop/orders-pdb" || bl.Outcome != "blocked" || bl.Workload.Name != "orders" || bl.For != 15*time.Minute {
		t.Errorf("block %+v, want orders held by shop/orders-pdb for 15m", bl)
	}
	again, _, err := Live(liveTestCluster(), 1)
	if err != nil {
		t.Fatal(err)
	}
	// One node per group: the one whose drain orders' budget refuses now,
	// though it is second by name.
	if len(again) != 1 || again[0].Node != "ip-10-0-2-1" || describePredictions(again) != describePredictions(ps[1:]) {
		t.Errorf("perGroup 1: %s, want ip-10-0-2-1 only, as before", describePredictions(again))
	}
}

// TestLiveTwinKinds: a StatefulSet's pods keep their node, a DaemonSet
// runs one pod a node, a Deployment the twin refuses (its selector does not
// select its template) is reported and its pod kept as a bare pod, and a
// Fargate node is in the twin but never drained.
func TestLiveTwinKinds(t *testing.T) {
	lc := liveTestCluster()
	ctl := true
	one, two := int32(1), int32(2)
	db := map[string]string{"app": "db"}
	agent := map[string]string{"app": "agent"}
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "c:1"}}}
	owned := func(name, node, kind, owner string, l map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Labels: l,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: owner, Controller: &ctl}}},
			Spec: *spec.DeepCopy(), Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	podOn := func(p *corev1.Pod, node string) *corev1.Pod { p.Spec.NodeName = node; return p }
	fargate := liveTestNode("fargate-ip-10-0-9-9", "us-west-2a")
	fargate.Labels["eks.amazonaws.com/compute-type"] = "fargate"
	fargate.Spec.Taints = []corev1.Taint{{Key: "eks.amazonaws.com/compute-type", Value: "fargate", Effect: corev1.TaintEffectNoSchedule}}
	lc.Nodes = append(lc.Nodes, LiveNode{Node: fargate, Group: twinbuild.GroupRef{Name: "fp-default", Type: "fargate"}})
	lc.Objects = append(lc.Objects,
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"},
			Spec: appsv1.StatefulSetSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: db},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: db}, Spec: spec}}},
		podOn(owned("db-0", "", "StatefulSet", "db", db), "ip-10-0-2-1"),
		podOn(owned("db-1", "", "StatefulSet", "db", db), "ip-10-0-1-1"),
		&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "agent"},
			Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: agent},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: agent}, Spec: spec}}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "broken"},
			Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "broken"}}, Spec: spec}}},
		&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "broken-1a2b",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "broken", Controller: &ctl}}}},
		podOn(owned("broken-1a2b-zzzzz", "", "ReplicaSet", "broken-1a2b", map[string]string{"app": "broken"}), "ip-10-0-2-1"),
	)
	tw, err := liveTwin(lc)
	if err != nil {
		t.Fatal(err)
	}
	if len(tw.refused) != 1 || !strings.HasPrefix(tw.refused[0], "Deployment shop/broken: ") {
		t.Errorf("refused %q, want Deployment shop/broken", tw.refused)
	}
	where := map[string]string{}
	agents := map[string]int{}
	for _, p := range tw.k.Pods() {
		if p.Namespace == "kube-system" {
			agents[p.Spec.NodeName]++
			continue
		}
		where[p.Name] = p.Spec.NodeName
	}
	if where["db-0"] != "ip-10-0-2-1" || where["db-1"] != "ip-10-0-1-1" || where["broken-1a2b-zzzzz"] != "ip-10-0-2-1" {
		t.Errorf("pods: %v", where)
	}
	if agents["ip-10-0-1-1"] != 1 || agents["ip-10-0-2-1"] != 1 || len(agents) != 2 {
		t.Errorf("DaemonSet pods by node: %v, want one on each EC2 node", agents)
	}
	ps, refused, err := Live(lc, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + describePredictions(ps))
	if len(ps) != 2 || len(refused) != 1 {
		t.Errorf("%d predictions (want 2: no Fargate node), refused %v", len(ps), refused)
	}
}

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

// TestLiveLarge: a cluster of 1,000 nodes in 10 groups is
// predicted with PerGroup nodes per group (30 drains), not 1,000;
// BenchmarkLive1000Nodes times it.
func TestLiveLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 31 twins of 1,000 nodes")
	}
	ps, refused, err := Live(bigLiveCluster(1000, 300), PerGroup)
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

// BenchmarkLive1000Nodes: 1,000 nodes, 3,000 pods, 30 drains
// (about 2 s on this 2-core VM; 10,000 pods about 6 s).
func BenchmarkLive1000Nodes(b *testing.B) {
	lc := bigLiveCluster(1000, 300)
	b.ResetTimer()
	for range b.N {
		if _, _, err := Live(lc, PerGroup); err != nil {
			b.Fatal(err)
		}
	}
}
