package fargate_test

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/ladder-eks/ladder/internal/rules/workload"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/fargate"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/twintest"
)

var t0 = twintest.T0

// kubelet131 is the 1.31 kubelet Fargate's nodes report.
const kubelet130, kubelet131 = twintest.Kubelet130, "v1.31.13-eks-113cf36"

type twin struct {
	eng     *sim.Engine
	kc      *kube.Cluster
	f       *fargate.Fargate
	kubelet string
	events  []fargate.Event
}

func setup(t *testing.T, profiles ...fargate.Profile) *twin {
	t.Helper()
	base := twintest.New(t0, 1)
	tw := &twin{eng: base.Eng, kc: base.Kube, kubelet: kubelet130}
	tw.f = fargate.New(base.Eng, base.Kube, base.Cloud, fargate.Options{Kubelet: func() string { return tw.kubelet }})
	tw.f.OnEvent(func(e fargate.Event) { tw.events = append(tw.events, e) })
	for _, p := range profiles {
		if err := tw.f.AddProfile(p); err != nil {
			t.Fatal(err)
		}
	}
	return tw
}

func deployment(ns, name string, replicas int32, lbls map[string]string) *appsv1.Deployment {
	sel := map[string]string{"app": name}
	for k, v := range lbls {
		sel[k] = v
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "public.ecr.aws/aws-containers/retail-store-sample-assets:1.2.1",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}},
			},
		},
	}
}

func (tw *twin) apply(t *testing.T, objs ...metav1.Object) {
	t.Helper()
	for _, o := range objs {
		if ns := o.GetNamespace(); ns != "" {
			if err := tw.kc.Apply(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.kc.Apply(o); err != nil {
			t.Fatal(err)
		}
	}
}

func (tw *twin) podsOf(ns, app string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range tw.kc.Pods() {
		if p.Namespace == ns && p.Labels["app"] == app && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

var assetsProfile = fargate.Profile{Name: "fp-profile", Selectors: []fargate.Selector{{Namespace: "assets"}}}

// TestOneNodePerPod: pods a profile selects get the Fargate scheduler and
// the profile's label at admission, wait the provisioning time (45 s), and
// each runs on its own fargate- node carrying the compute-type label and
// taint, sized for the pod, with the control plane's kubelet (§E: "Each
// Fargate pod is its own node"). Pods of other namespaces are left to
// kube-scheduler.
func TestOneNodePerPod(t *testing.T) {
	tw := setup(t, assetsProfile)
	tw.apply(t, deployment("assets", "assets", 2, nil), deployment("ui", "ui", 1, nil))
	tw.eng.Run(t0.Add(44*time.Second), nil)
	for _, p := range tw.podsOf("assets", "assets") {
		if p.Spec.SchedulerName != fargate.SchedulerName || p.Labels[fargate.LabelFargateProfile] != "fp-profile" {
			t.Fatalf("pod %s: schedulerName %q, profile label %q", p.Name, p.Spec.SchedulerName, p.Labels[fargate.LabelFargateProfile])
		}
		if p.Spec.NodeName != "" {
			t.Fatalf("pod %s bound to %s before the 45 s provisioning time", p.Name, p.Spec.NodeName)
		}
	}
	if ui := tw.podsOf("ui", "ui"); len(ui) != 1 || ui[0].Spec.SchedulerName == fargate.SchedulerName {
		t.Fatalf("the ui pod is not in the profile's namespace but was handed to Fargate")
	}
	tw.eng.Run(t0.Add(45*time.Second), nil)
	seen := map[string]bool{}
	for _, p := range tw.podsOf("assets", "assets") {
		n := tw.kc.Node(p.Spec.NodeName)
		if n == nil || !strings.HasPrefix(n.Name, "fargate-ip-") {
			t.Fatalf("pod %s on node %q, want its own fargate-ip-… node", p.Name, p.Spec.NodeName)
		}
		if seen[n.Name] {
			t.Fatalf("two pods on %s", n.Name)
		}
		seen[n.Name] = true
		if n.Labels[fargate.LabelComputeType] != "fargate" || len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != fargate.LabelComputeType {
			t.Fatalf("node %s: labels %v taints %v", n.Name, n.Labels, n.Spec.Taints)
		}
		if n.Status.NodeInfo.KubeletVersion != kubelet130 {
			t.Fatalf("node %s kubelet %s, want %s", n.Name, n.Status.NodeInfo.KubeletVersion, kubelet130)
		}
		if got := n.Status.Allocatable.Pods().Value(); got != 1 {
			t.Fatalf("node %s holds %d pods, want 1", n.Name, got)
		}
		if p, ok := tw.f.ProfileOf(n.Name); !ok || p != "fp-profile" {
			t.Fatalf("ProfileOf(%s) = %q, %v", n.Name, p, ok)
		}
	}
	if st := tw.f.Stats("fp-profile"); len(seen) != 2 || st.Launched != 2 {
		t.Fatalf("%d nodes, %d launched; want 2", len(seen), st.Launched)
	}
}

// TestSelectorLabels: a selector with labels selects only pods carrying
// all of them.
func TestSelectorLabels(t *testing.T) {
	tw := setup(t, fargate.Profile{Name: "p", Selectors: []fargate.Selector{{Namespace: "apps", Labels: map[string]string{"compute": "fargate"}}}})
	tw.apply(t, deployment("apps", "on", 1, map[string]string{"compute": "fargate"}), deployment("apps", "off", 1, nil))
	tw.eng.Run(t0.Add(time.Minute), nil)
	if on := tw.podsOf("apps", "on"); len(on) != 1 || on[0].Spec.SchedulerName != fargate.SchedulerName {
		t.Fatalf("the labelled pod was not handed to Fargate")
	}
	if off := tw.podsOf("apps", "off"); len(off) != 1 || off[0].Spec.SchedulerName == fargate.SchedulerName {
		t.Fatalf("a pod without the selector's labels was handed to Fargate")
	}
}

// TestRestartBringsNewKubelet: after the control plane moves to 1.31 the
// running Fargate pods keep their 1.30 kubelet ("Existing Fargate Pods
// aren't changed", §E); kubectl rollout restart replaces each pod, whose
// new node has the 1.31 kubelet, and the old pod's node goes with it.
func TestRestartBringsNewKubelet(t *testing.T) {
	tw := setup(t, assetsProfile)
	tw.apply(t, deployment("assets", "assets", 2, nil))
	tw.eng.Run(t0.Add(time.Minute), nil)
	before := map[string]bool{}
	for _, p := range tw.podsOf("assets", "assets") {
		before[p.Spec.NodeName] = true
	}
	tw.kubelet = kubelet131 // the control plane is updated
	tw.eng.Run(t0.Add(time.Hour), nil)
	for n := range before {
		if node := tw.kc.Node(n); node == nil || node.Status.NodeInfo.KubeletVersion != kubelet130 {
			t.Fatalf("running Fargate node %s changed without a restart", n)
		}
	}
	if err := tw.kc.RolloutRestart("Deployment", "assets", "assets"); err != nil {
		t.Fatal(err)
	}
	done := false
	tw.eng.Run(t0.Add(2*time.Hour), func() bool {
		done, _, _ = tw.kc.RolloutStatus("Deployment", "assets", "assets")
		return done && tw.kc.Quiet()
	})
	if !done {
		t.Fatal("the restart did not finish")
	}
	pods := tw.podsOf("assets", "assets")
	if len(pods) != 2 {
		t.Fatalf("%d pods after the restart, want 2", len(pods))
	}
	for _, p := range pods {
		n := tw.kc.Node(p.Spec.NodeName)
		if n == nil || before[n.Name] || n.Status.NodeInfo.KubeletVersion != kubelet131 {
			t.Fatalf("pod %s on %v after the restart, want a new node with kubelet %s", p.Name, p.Spec.NodeName, kubelet131)
		}
	}
	for n := range before {
		if tw.kc.Node(n) != nil {
			t.Fatalf("node %s outlived its pod", n)
		}
	}
	fargateNodes := 0
	for _, n := range tw.kc.Nodes() {
		if n.Labels[fargate.LabelComputeType] == "fargate" {
			fargateNodes++
		}
	}
	if fargateNodes != 2 {
		t.Fatalf("%d Fargate nodes, want one per pod (2)", fargateNodes)
	}
	if st := tw.f.Stats("fp-profile"); st.Launched != 4 || st.Removed != 2 {
		t.Fatalf("stats %+v, want 4 launched (2 + 2 by the restart) and 2 removed", st)
	}
}

// TestDaemonSetsSkipFargate: the fargate taint keeps DaemonSet pods off
// Fargate nodes, as on EKS.
func TestDaemonSetsSkipFargate(t *testing.T) {
	tw := setup(t, assetsProfile)
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-proxy"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-proxy"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"k8s-app": "kube-proxy"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "kube-proxy", Image: "kube-proxy"}}},
			},
		},
	}
	tw.apply(t, ds, deployment("assets", "assets", 1, nil))
	tw.eng.Run(t0.Add(time.Minute), nil)
	for _, p := range tw.kc.Pods() {
		if p.Namespace == "kube-system" {
			t.Fatalf("DaemonSet pod %s created for %s", p.Name, p.Spec.NodeName)
		}
	}
}

// TestBootstrap: pods of a cluster that has been running a while start on
// nodes created at the given time, without the provisioning wait.
func TestBootstrap(t *testing.T) {
	tw := setup(t, assetsProfile)
	tw.apply(t, deployment("assets", "assets", 3, nil))
	tw.eng.Run(t0, nil) // the controllers create the pods
	created := t0.Add(-24 * time.Hour)
	if err := tw.f.Bootstrap(created); err != nil {
		t.Fatal(err)
	}
	pods := tw.podsOf("assets", "assets")
	if len(pods) != 3 {
		t.Fatalf("%d pods, want 3", len(pods))
	}
	for _, p := range pods {
		n := tw.kc.Node(p.Spec.NodeName)
		if n == nil || !n.CreationTimestamp.Time.Equal(created) {
			t.Fatalf("pod %s not bound to a node created at %s", p.Name, created)
		}
	}
	// The provisioning timers of the bootstrapped pods do nothing, and
	// bootstrapped micro-VMs are not counted as launched during the run.
	tw.eng.Run(t0.Add(time.Minute), nil)
	if st := tw.f.Stats("fp-profile"); st.Launched != 0 || len(tw.kc.Nodes()) != 3 {
		t.Fatalf("%d launched, %d nodes; want 0 and 3", st.Launched, len(tw.kc.Nodes()))
	}
}

// TestProfileErrors: a profile needs a name and a selector, and names are
// unique.
func TestProfileErrors(t *testing.T) {
	tw := setup(t, assetsProfile)
	for _, p := range []fargate.Profile{{Name: "x"}, {Selectors: assetsProfile.Selectors}, assetsProfile} {
		if err := tw.f.AddProfile(p); err == nil {
			t.Errorf("AddProfile(%+v) accepted", p)
		}
	}
}

// TestDaemonSetPodsNeverRunOnFargate: with a profile that selects all of
// kube-system (as a CoreDNS-on-Fargate cluster has), the DaemonSets of
// kube-system still run on EC2 nodes only: the webhook leaves their pods
// to the default scheduler, EKS's DaemonSets exclude Fargate by node
// affinity even though they tolerate every taint, and a DaemonSet without
// a toleration for the Fargate taint makes no pod for a Fargate node.
func TestDaemonSetPodsNeverRunOnFargate(t *testing.T) {
	tw := setup(t, fargate.Profile{Name: "kube-system", Selectors: []fargate.Selector{{Namespace: "kube-system"}}})
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("29")}
	ec2Node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-1-1", Labels: map[string]string{corev1.LabelOSStable: "linux"}},
		Status: corev1.NodeStatus{Capacity: alloc, Allocatable: alloc}}
	if err := tw.kc.AddNode(ec2Node, true); err != nil {
		t.Fatal(err)
	}
	daemonSet := func(name string, eksStyle bool) *appsv1.DaemonSet {
		labels := map[string]string{"app": name}
		ds := &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name},
			Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{PriorityClassName: workload.SystemNodeCritical, Containers: []corev1.Container{{Name: "c", Image: "c",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("25m")}}}}}}},
		}
		if eksStyle {
			spec := &ds.Spec.Template.Spec
			spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
			spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: fargate.LabelComputeType, Operator: corev1.NodeSelectorOpNotIn, Values: []string{fargate.ComputeTypeFargate}}}}}}}}
		}
		return ds
	}
	tw.apply(t, daemonSet("aws-node", true), daemonSet("agent", false), deployment("kube-system", "coredns", 2, nil))
	tw.eng.Run(t0.Add(5*time.Minute), nil)

	fargateNodes := 0
	for _, n := range tw.kc.Nodes() {
		if n.Labels[fargate.LabelComputeType] == fargate.ComputeTypeFargate {
			fargateNodes++
		}
	}
	if fargateNodes != 2 || tw.f.Stats("kube-system").Launched != 2 {
		t.Fatalf("%d Fargate nodes, %d launched; want 2, one per coredns pod", fargateNodes, tw.f.Stats("kube-system").Launched)
	}
	for _, name := range []string{"aws-node", "agent"} {
		pods := tw.podsOf("kube-system", name)
		if len(pods) != 1 {
			t.Fatalf("%s: %d pods, want 1 (on the EC2 node only)", name, len(pods))
		}
		if p := pods[0]; p.Spec.SchedulerName == fargate.SchedulerName || p.Spec.NodeName != "ip-10-0-1-1" || !podutils.IsPodReady(p) {
			t.Fatalf("%s pod: scheduler %q node %q ready %v, want default-scheduler on ip-10-0-1-1, Ready", name, p.Spec.SchedulerName, p.Spec.NodeName, podutils.IsPodReady(p))
		}
	}
}

// TestTolerateAllDaemonSetStaysPendingOnFargate: a DaemonSet that tolerates
// every taint and does not exclude Fargate gets a pod for each Fargate
// node, which stays Pending for good (aws/amazon-cloudwatch-agent-operator
// #183) — even of system-node-critical priority it never preempts the one
// pod the micro-VM runs, and no Fargate pod is replaced.
func TestTolerateAllDaemonSetStaysPendingOnFargate(t *testing.T) {
	tw := setup(t, assetsProfile)
	preempted := 0
	tw.kc.OnEvent(func(e kube.Event) {
		if e.Reason == "Preempted" {
			preempted++
		}
	})
	labels := map[string]string{"app": "agent"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "monitoring", Name: "agent"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{PriorityClassName: workload.SystemNodeCritical, Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers: []corev1.Container{{Name: "c", Image: "c",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("25m")}}}}}}},
	}
	tw.apply(t, ds, deployment("assets", "assets", 2, nil))
	tw.eng.Run(t0.Add(time.Hour), nil)
	if st := tw.f.Stats("fp-profile"); preempted != 0 || st.Launched != 2 || st.Removed != 0 {
		t.Fatalf("%d preempted, %d Fargate nodes launched, %d removed; want 0, 2, 0", preempted, st.Launched, st.Removed)
	}
	agents := tw.podsOf("monitoring", "agent")
	if len(agents) != 2 {
		t.Fatalf("%d agent pods, want one per Fargate node", len(agents))
	}
	for _, p := range agents {
		if p.Spec.NodeName != "" || p.Status.Phase != corev1.PodPending {
			t.Fatalf("agent pod %s on %q phase %s, want Pending and unbound", p.Name, p.Spec.NodeName, p.Status.Phase)
		}
	}
}
