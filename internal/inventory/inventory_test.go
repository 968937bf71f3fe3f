package inventory

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/twin/worker"
)

// node builds a node as kubectl get node -o yaml shows one: the labels its
// launcher set, Ready, and the kubelet's version.
func node(name, kubelet string, labels map[string]string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			//lint:ignore SA1019 EKS nodes still report it; the inventory reads it where no kube-proxy pod runs
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: kubelet, KubeProxyVersion: kubelet},
		},
	}
}

func ec2Labels(zone, instanceType string, extra ...string) map[string]string {
	l := map[string]string{
		corev1.LabelTopologyZone:       zone,
		corev1.LabelTopologyRegion:     "us-west-2",
		corev1.LabelInstanceTypeStable: instanceType,
		corev1.LabelArchStable:         "amd64",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		l[extra[i]] = extra[i+1]
	}
	return l
}

func pod(namespace, name, node string, w Workload) Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if node == "" {
		p.Status.Phase = corev1.PodPending
	}
	return Pod{Pod: p, Workload: w}
}

func kubeProxyPod(node, tag string) Pod {
	p := pod("kube-system", "kube-proxy-"+node, node, Workload{"kube-system", "DaemonSet", "kube-proxy"})
	p.Pod.Spec.Containers = []corev1.Container{{Name: "kube-proxy", Image: "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/kube-proxy:" + tag}}
	return p
}

const (
	v130 = "v1.30.14-eks-f69f56f"
	v131 = "v1.31.14-eks-ecaa3a6"
	ami  = "ami-0f676a166352f02ab" // amazon-eks-node-al2023-x86_64-standard-1.30-v20260220
)

// A cluster mid-upgrade with one group of every type: the managed group
// initial half-way to 1.31, a custom-AMI group on its launch template, an
// eksctl self-managed group, a node nobody labelled, a Karpenter NodePool
// with a spot and an on-demand node, and a Fargate profile.
func everyTypeCluster() Input {
	orders := Workload{"orders", "Deployment", "orders"}
	checkout := Workload{"checkout", "Deployment", "checkout"}
	in := Input{
		Nodes: []*corev1.Node{
			node("ip-10-0-1-1.us-west-2.compute.internal", v130, ec2Labels("us-west-2a", "m5.large",
				LabelNodegroup, "initial", LabelNodegroupImage, ami, LabelMNGCapacityType, "ON_DEMAND")),
			node("ip-10-0-2-1.us-west-2.compute.internal", v131, ec2Labels("us-west-2b", "m5.large",
				LabelNodegroup, "initial", LabelNodegroupImage, "ami-0131", LabelMNGCapacityType, "ON_DEMAND")),
			node("ip-10-0-3-1.us-west-2.compute.internal", v130, ec2Labels("us-west-2a", "m5.large",
				LabelNodegroup, "custom-Y", LabelNodegroupImage, ami, LabelMNGCapacityType, "SPOT",
				LabelLaunchTemplateID, "lt-0abc", LabelLaunchTemplateVers, "3")),
			node("ip-10-0-4-1.us-west-2.compute.internal", v130, ec2Labels("us-west-2b", "m5.large",
				LabelEksctlNodegroup, "default-selfmng", "node.kubernetes.io/lifecycle", "self-managed")),
			node("ip-10-0-5-1.us-west-2.compute.internal", v130, ec2Labels("us-west-2c", "t3.large")),
			node("ip-10-0-6-1.us-west-2.compute.internal", v130, ec2Labels("us-west-2a", "m6i.large",
				LabelNodePool, "default", LabelCapacityType, "spot", "karpenter.sh/initialized", "true")),
			node("ip-10-0-6-2.us-west-2.compute.internal", v131, ec2Labels("us-west-2b", "c6i.large",
				LabelNodePool, "default", LabelCapacityType, "on-demand", "karpenter.sh/initialized", "true")),
			node("fargate-ip-10-0-7-1.us-west-2.compute.internal", v130, map[string]string{
				corev1.LabelTopologyZone: "us-west-2c", LabelComputeType: "fargate", LabelFargateProfile: "fp-profile"}),
		},
		Images: map[string]string{"ip-10-0-6-1.us-west-2.compute.internal": "ami-karpenter"},
	}
	in.Nodes[4].Annotations = map[string]string{ImageAnnotation: "ami-selfmanaged"}
	in.Nodes[7].Status.Conditions[0].Status = corev1.ConditionFalse
	for _, n := range in.Nodes[:7] {
		in.Pods = append(in.Pods, kubeProxyPod(n.Name, "v1.30.14-minimal-eksbuild.28"))
	}
	in.Pods[1] = kubeProxyPod(in.Nodes[1].Name, "v1.31.14-minimal-eksbuild.20")
	in.Pods = append(in.Pods,
		pod("orders", "orders-1", in.Nodes[0].Name, orders),
		pod("orders", "orders-2", in.Nodes[1].Name, orders),
		pod("orders", "orders-3", "", orders),
		pod("checkout", "checkout-1", in.Nodes[5].Name, checkout),
		pod("assets", "assets-1", in.Nodes[7].Name, Workload{"assets", "Deployment", "assets"}),
		pod("default", "debug", in.Nodes[4].Name, Workload{"default", "Pod", "debug"}),
	)
	done := pod("batch", "job-1", in.Nodes[0].Name, Workload{"batch", "Job", "job"})
	done.Pod.Status.Phase = corev1.PodSucceeded
	in.Pods = append(in.Pods, done)
	return in
}

func TestBuildEveryType(t *testing.T) {
	inv := Build(Source{Kind: "cluster", Name: "test"}, everyTypeCluster())
	type row struct {
		name     string
		typ      Type
		nodes    int
		ready    int
		selector string
		kubelets map[string]int
		proxies  map[string]int
		amis     map[string]int
		zones    map[string]int
		capacity map[string]int
	}
	want := []row{
		{"initial", Managed, 2, 2, "eks.amazonaws.com/nodegroup=initial",
			map[string]int{v130: 1, v131: 1}, map[string]int{"v1.30.14-minimal-eksbuild.28": 1, "v1.31.14-minimal-eksbuild.20": 1},
			map[string]int{ami: 1, "ami-0131": 1}, map[string]int{"us-west-2a": 1, "us-west-2b": 1}, map[string]int{"on-demand": 2}},
		{"custom-Y", CustomAMI, 1, 1, "eks.amazonaws.com/nodegroup=custom-Y",
			map[string]int{v130: 1}, map[string]int{"v1.30.14-minimal-eksbuild.28": 1},
			map[string]int{ami: 1}, map[string]int{"us-west-2a": 1}, map[string]int{"spot": 1}},
		{"(no group label)", SelfManaged, 1, 1, "!eks.amazonaws.com/nodegroup,!karpenter.sh/nodepool,!eks.amazonaws.com/compute-type,!alpha.eksctl.io/nodegroup-name",
			map[string]int{v130: 1}, map[string]int{"v1.30.14-minimal-eksbuild.28": 1},
			map[string]int{"ami-selfmanaged": 1}, map[string]int{"us-west-2c": 1}, map[string]int{}},
		{"default-selfmng", SelfManaged, 1, 1, "alpha.eksctl.io/nodegroup-name=default-selfmng",
			map[string]int{v130: 1}, map[string]int{"v1.30.14-minimal-eksbuild.28": 1},
			map[string]int{}, map[string]int{"us-west-2b": 1}, map[string]int{}},
		{"default", Karpenter, 2, 2, "karpenter.sh/nodepool=default",
			map[string]int{v130: 1, v131: 1}, map[string]int{"v1.30.14-minimal-eksbuild.28": 2},
			map[string]int{"ami-karpenter": 1}, map[string]int{"us-west-2a": 1, "us-west-2b": 1}, map[string]int{"spot": 1, "on-demand": 1}},
		// Fargate runs no kube-proxy pod: the node's nodeInfo is the source.
		{"fp-profile", Fargate, 1, 0, "eks.amazonaws.com/fargate-profile=fp-profile",
			map[string]int{v130: 1}, map[string]int{v130: 1},
			map[string]int{}, map[string]int{"us-west-2c": 1}, map[string]int{}},
	}
	if len(inv.Groups) != len(want) {
		t.Fatalf("%d groups, want %d: %+v", len(inv.Groups), len(want), inv.Groups)
	}
	for i, w := range want {
		g := inv.Groups[i]
		got := row{g.Name, g.Type, g.Nodes, g.ReadyNodes, g.Selector, g.KubeletVersions, g.KubeProxyVersions, g.AMIs, g.Zones, g.CapacityTypes}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("group %d:\n got %+v\nwant %+v", i, got, w)
		}
	}
	if got := inv.Groups[0].AMINames[ami]; got != "amazon-eks-node-al2023-x86_64-standard-1.30-v20260220" {
		t.Errorf("initial's AMI name %q, want the catalog's", got)
	}
	if got := inv.Groups[1].LaunchTemplates; !reflect.DeepEqual(got, map[string]int{"lt-0abc:3": 1}) {
		t.Errorf("custom-Y's launch templates %v", got)
	}
	wantWorkloads := map[string][]WorkloadPods{
		"initial": {
			{Workload{"kube-system", "DaemonSet", "kube-proxy"}, 2},
			{Workload{"orders", "Deployment", "orders"}, 2},
		},
		"default": {
			{Workload{"checkout", "Deployment", "checkout"}, 1},
			{Workload{"kube-system", "DaemonSet", "kube-proxy"}, 2},
		},
		"(no group label)": {
			{Workload{"default", "Pod", "debug"}, 1},
			{Workload{"kube-system", "DaemonSet", "kube-proxy"}, 1},
		},
		"fp-profile": {{Workload{"assets", "Deployment", "assets"}, 1}},
	}
	for _, g := range inv.Groups {
		if w, ok := wantWorkloads[g.Name]; ok && !reflect.DeepEqual(g.Workloads, w) {
			t.Errorf("%s carries %+v, want %+v", g.Name, g.Workloads, w)
		}
	}
	if want := []WorkloadPods{{Workload{"orders", "Deployment", "orders"}, 1}}; !reflect.DeepEqual(inv.Unscheduled, want) {
		t.Errorf("unscheduled %+v, want %+v (a Succeeded pod is not counted)", inv.Unscheduled, want)
	}
}

// A managed group and a NodePool may share a name; they are two groups.
func TestBuildSameNameDifferentTypes(t *testing.T) {
	in := Input{Nodes: []*corev1.Node{
		node("a", v130, map[string]string{LabelNodegroup: "default"}),
		node("b", v130, map[string]string{LabelNodePool: "default"}),
	}}
	inv := Build(Source{}, in)
	if len(inv.Groups) != 2 || inv.Groups[0].Type != Managed || inv.Groups[1].Type != Karpenter {
		t.Fatalf("groups %+v, want managed default and karpenter default", inv.Groups)
	}
}

// Which group a node is in, by the labels its launcher put on it; the
// order of the checks decides for nodes that carry several.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name     string
		labels   map[string]string
		typ      Type
		group    string
		selector string
	}{
		{"managed", map[string]string{LabelNodegroup: "initial"}, Managed, "initial", "eks.amazonaws.com/nodegroup=initial"},
		{"managed on a launch template", map[string]string{LabelNodegroup: "custom-Y", LabelLaunchTemplateID: "lt-1", LabelLaunchTemplateVers: "2"},
			CustomAMI, "custom-Y", "eks.amazonaws.com/nodegroup=custom-Y"},
		// eksctl labels its managed groups' nodes with its own label too.
		{"eksctl managed", map[string]string{LabelNodegroup: "ng-1", LabelEksctlNodegroup: "ng-1"}, Managed, "ng-1", "eks.amazonaws.com/nodegroup=ng-1"},
		{"eksctl self-managed", map[string]string{LabelEksctlNodegroup: "ng-2"}, SelfManaged, "ng-2", "alpha.eksctl.io/nodegroup-name=ng-2"},
		{"unlabelled", map[string]string{"kubernetes.io/os": "linux"}, SelfManaged, "(no group label)",
			"!eks.amazonaws.com/nodegroup,!karpenter.sh/nodepool,!eks.amazonaws.com/compute-type,!alpha.eksctl.io/nodegroup-name"},
		{"Karpenter", map[string]string{LabelNodePool: "default", LabelCapacityType: "spot"}, Karpenter, "default", "karpenter.sh/nodepool=default"},
		// EKS Auto Mode's nodes carry a NodePool and no node group.
		{"Auto Mode", map[string]string{LabelNodePool: "general-purpose", LabelComputeType: "auto"}, Karpenter, "general-purpose", "karpenter.sh/nodepool=general-purpose"},
		{"Fargate", map[string]string{LabelComputeType: "fargate", LabelFargateProfile: "fp-default"}, Fargate, "fp-default", "eks.amazonaws.com/fargate-profile=fp-default"},
		{"Fargate without its profile label", map[string]string{LabelComputeType: "fargate"}, Fargate, "fargate", "eks.amazonaws.com/compute-type=fargate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, typ, selector := classify(node("n", v130, tc.labels))
			if typ != tc.typ || key.name != tc.group || selector != tc.selector {
				t.Errorf("got %s %q (%s), want %s %q (%s)", typ, key.name, selector, tc.typ, tc.group, tc.selector)
			}
		})
	}
}

// A managed group is custom-AMI when any of its nodes came from its own
// launch template (the others may predate the label), and zones and
// capacity types are read from the older labels when the new ones are
// missing.
func TestBuildGroupDetails(t *testing.T) {
	in := Input{Nodes: []*corev1.Node{
		node("a", v130, map[string]string{LabelNodegroup: "ng", corev1.LabelFailureDomainBetaZone: "us-west-2a", LabelMNGCapacityType: "SPOT"}),
		node("b", v130, map[string]string{LabelNodegroup: "ng", corev1.LabelTopologyZone: "us-west-2b", LabelMNGCapacityType: "CAPACITY_BLOCK",
			LabelLaunchTemplateID: "lt-1", LabelLaunchTemplateVers: "4"}),
		node("c", v130, map[string]string{LabelNodegroup: "ng", LabelMNGCapacityType: "ON_DEMAND"}),
	}}
	inv := Build(Source{}, in)
	if len(inv.Groups) != 1 {
		t.Fatalf("groups %+v, want one", inv.Groups)
	}
	g := inv.Groups[0]
	if g.Type != CustomAMI {
		t.Errorf("type %s, want %s", g.Type, CustomAMI)
	}
	if want := map[string]int{"us-west-2a": 1, "us-west-2b": 1}; !reflect.DeepEqual(g.Zones, want) {
		t.Errorf("zones %v, want %v (node c has no zone label and is not counted)", g.Zones, want)
	}
	if want := map[string]int{"spot": 1, "capacity-block": 1, "on-demand": 1}; !reflect.DeepEqual(g.CapacityTypes, want) {
		t.Errorf("capacity types %v, want %v", g.CapacityTypes, want)
	}
	if want := map[string]int{"lt-1:4": 1}; !reflect.DeepEqual(g.LaunchTemplates, want) {
		t.Errorf("launch templates %v, want %v", g.LaunchTemplates, want)
	}
	if !reflect.DeepEqual(g.NodeNames, []string{"a", "b", "c"}) || g.Nodes != 3 || g.ReadyNodes != 3 {
		t.Errorf("nodes %v (%d, %d Ready)", g.NodeNames, g.Nodes, g.ReadyNodes)
	}
}

func TestKubeProxyVersion(t *testing.T) {
	for _, tc := range []struct {
		namespace, container, image, want string
	}{
		{"kube-system", "kube-proxy", "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/kube-proxy:v1.31.14-minimal-eksbuild.20", "v1.31.14-minimal-eksbuild.20"},
		{"kube-system", "kube-proxy", "registry.k8s.io/kube-proxy:v1.31.2@sha256:abcd", "v1.31.2"},
		{"kube-system", "kube-proxy", "localhost:5000/kube-proxy", ""},
		{"kube-system", "coredns", "coredns:v1.11.4", ""},
		{"default", "kube-proxy", "kube-proxy:v1.31.2", ""},
	} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: tc.namespace},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: tc.container, Image: tc.image}}}}
		if got := kubeProxyVersion(p); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.container, tc.image, got, tc.want)
		}
	}
}

func TestImageAnnotationIsTheTwins(t *testing.T) {
	if ImageAnnotation != worker.ImageIDAnnotation {
		t.Errorf("ImageAnnotation %q, the twin writes %q", ImageAnnotation, worker.ImageIDAnnotation)
	}
}

func TestWriteText(t *testing.T) {
	inv := Build(Source{Kind: "cluster", Name: "lab", Server: "https://127.0.0.1:6443"}, everyTypeCluster())
	var b bytes.Buffer
	if err := inv.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(out, "\n")
	if lines[0] != "Cluster lab (https://127.0.0.1:6443): 6 node groups, 8 nodes, 12 pods on them, 1 pending" {
		t.Errorf("first line %q", lines[0])
	}
	for _, want := range []string{
		"\nGROUP              TYPE                 NODES   READY   ZONES                   INSTANCE-TYPES              CAPACITY               KUBELET                                           KUBE-PROXY                                                        AMI\n",
		"\ninitial            managed              2       2       us-west-2a,us-west-2b   m5.large                    on-demand              v1.30.14-eks-f69f56f(1),v1.31.14-eks-ecaa3a6(1)   v1.30.14-minimal-eksbuild.28(1),v1.31.14-minimal-eksbuild.20(1)   ami-0131(1),ami-0f676a166352f02ab(1)\n",
		"\ndefault            karpenter            2       2       us-west-2a,us-west-2b   c6i.large(1),m6i.large(1)   on-demand(1),spot(1)   v1.30.14-eks-f69f56f(1),v1.31.14-eks-ecaa3a6(1)   v1.30.14-minimal-eksbuild.28                                      ami-karpenter\n",
		"\ncustom-Y (managed-custom-ami, 1 node): eks.amazonaws.com/nodegroup=custom-Y\n",
		"\n  AMI ami-0f676a166352f02ab is amazon-eks-node-al2023-x86_64-standard-1.30-v20260220\n",
		"\n  NAMESPACE     KIND         NAME         PODS\n  kube-system   DaemonSet    kube-proxy   2\n  orders        Deployment   orders       2\n",
		"\nPENDING (bound to no node)\n  NAMESPACE   KIND         NAME     PODS\n  orders      Deployment   orders   1\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}

// The JSON keeps empty maps and lists as {} and [], never null, so a
// consumer can index them without checks.
func TestWriteJSONStableShape(t *testing.T) {
	inv := Build(Source{Kind: "cluster", Name: "empty"}, Input{})
	var b bytes.Buffer
	if err := inv.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"source\": {\n    \"kind\": \"cluster\",\n    \"name\": \"empty\"\n  },\n  \"groups\": [],\n  \"unscheduled\": []\n}\n"
	if b.String() != want {
		t.Errorf("empty inventory JSON:\n%s\nwant:\n%s", b.String(), want)
	}
	inv = Build(Source{Kind: "cluster", Name: "one"}, Input{Nodes: []*corev1.Node{node("a", "", nil)}})
	b.Reset()
	if err := inv.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		Groups []map[string]json.RawMessage `json:"groups"`
	}
	if err := json.Unmarshal(b.Bytes(), &decoded); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"zones", "instanceTypes", "capacityTypes", "kubeletVersions", "kubeProxyVersions", "amis"} {
		if got := string(decoded.Groups[0][field]); got != "{}" {
			t.Errorf("%s is %s, want {}", field, got)
		}
	}
	for _, field := range []string{"nodeNames", "workloads"} {
		if got := string(decoded.Groups[0][field]); got == "null" {
			t.Errorf("%s is null", field)
		}
	}
}
