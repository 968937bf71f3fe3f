package capture_test

import (
	"bytes"
	"context"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/smithy-go"
	"github.com/ladder-eks/ladder/internal/awsport/sdkaws"
	"github.com/ladder-eks/ladder/internal/awsserve/twinserve"
	"github.com/ladder-eks/ladder/internal/capture"
	"github.com/ladder-eks/ladder/internal/materialize"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// cluster is a scenario's starting cluster as a live one looks: the
// objects materialize would create in an API server (typed in a fake
// clientset, Karpenter's in a fake dynamic client), the twin's pods, and
// the twin's AWS ports.
type cluster struct {
	sc   *scenario.Scenario
	plan *materialize.Planned
	src  capture.Source
}

func newCluster(t *testing.T, name string) *cluster {
	t.Helper()
	sc, err := scenario.LoadBuiltin(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	plan, err := materialize.Plan(sc)
	if err != nil {
		t.Fatal(err)
	}
	var typed []runtime.Object
	var karpenter []runtime.Object
	for i, n := range plan.Nodes {
		// An API server stamps creation; KWOK nodes are made without it.
		n.CreationTimestamp = plan.Snapshot.Nodes[i].CreationTimestamp
		typed = append(typed, n)
	}
	for _, p := range plan.Snapshot.Pods {
		typed = append(typed, p.Pod)
	}
	for _, u := range plan.Objects {
		gvk := u.GroupVersionKind()
		if gvk.Group == "karpenter.sh" || gvk.Group == "karpenter.k8s.aws" {
			karpenter = append(karpenter, u)
			continue
		}
		obj, err := scheme.Scheme.New(gvk)
		if err != nil {
			continue // ServiceAccounts and kinds the fake has no type for
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
			t.Fatalf("%s %s: %v", gvk.Kind, u.GetName(), err)
		}
		typed = append(typed, obj)
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}:           "NodePoolList",
		{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}:          "NodeClaimList",
		{Group: "karpenter.k8s.aws", Version: "v1", Resource: "ec2nodeclasses"}: "EC2NodeClassList",
	}, karpenter...)
	// The AWS side is the scenario's twin behind the lab's endpoints,
	// called through aws-sdk-go-v2's clients as `ladder capture` calls AWS.
	tw, err := twinserve.New(sc, 0)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(tw)
	t.Cleanup(srv.Close)
	for _, svc := range []string{"EKS", "AUTO_SCALING", "EC2", "SSM"} {
		t.Setenv("AWS_ENDPOINT_URL_"+svc, srv.URL)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", twinserve.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", twinserve.SecretAccessKey)
	t.Setenv("AWS_REGION", tw.Region)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	ports, _, err := sdkaws.New(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	c := sc.Spec.Cluster
	return &cluster{sc: sc, plan: plan, src: capture.Source{
		Kube: fake.NewSimpleClientset(typed...), Dynamic: dyn, AWS: ports, Cluster: c.Name,
		Now: sc.Spec.Start.Time,
	}}
}

// groupNodes counts a snapshot's nodes per group ("type/name").
func groupNodes(s *twinbuild.Snapshot) map[string]int {
	out := map[string]int{}
	for _, n := range s.Nodes {
		g := s.Groups[n.Name]
		out[g.Type+"/"+g.Name]++
	}
	return out
}

// workloadPods counts a snapshot's pods per workload.
func workloadPods(s *twinbuild.Snapshot) map[string]int {
	out := map[string]int{}
	for _, p := range s.Pods {
		out[p.Workload.Kind+" "+p.Pod.Namespace+"/"+p.Workload.Name]++
	}
	return out
}

// TestCaptureRoundTrip captures the workshop's starting cluster, writes the
// scenario, loads it back and starts it in the twin: the same cluster,
// add-ons and node groups, the same number of nodes in each group and the
// same pods per workload as the original.
func TestCaptureRoundTrip(t *testing.T) {
	for _, name := range []string{"workshop", "karpenter-drift", "pdb-deadlock"} {
		t.Run(name, func(t *testing.T) {
			c := newCluster(t, name)
			got, err := capture.Read(context.Background(), c.src)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := got.Write(dir); err != nil {
				t.Fatal(err)
			}
			sc, err := scenario.LoadFile(filepath.Join(dir, capture.ScenarioFile))
			if err != nil {
				t.Fatalf("the captured scenario does not load: %v", err)
			}
			if _, err := sc.Validate(); err != nil {
				data, _ := os.ReadFile(filepath.Join(dir, capture.ScenarioFile))
				t.Fatalf("the captured scenario is not valid: %v\n%s", err, data)
			}
			if got, want := sc.Spec.Cluster, c.sc.Spec.Cluster; got.Name != want.Name || got.Version != want.Version || got.Region != want.Region {
				t.Errorf("cluster %+v, want %+v", got, want)
			}
			if got, want := addonVersions(sc), addonVersions(c.sc); !maps.Equal(got, want) {
				t.Errorf("add-ons %v, want %v", got, want)
			}
			if sc.Spec.Upgrade == nil {
				t.Error("no playbook: rehearse --to would not upgrade the captured cluster")
			}
			snap, err := twinbuild.Start(sc)
			if err != nil {
				t.Fatalf("the captured scenario does not start: %v", err)
			}
			if got, want := groupNodes(snap), groupNodes(c.plan.Snapshot); !maps.Equal(got, want) {
				t.Errorf("nodes per group %v, want %v", got, want)
			}
			if got, want := workloadPods(snap), workloadPods(c.plan.Snapshot); !maps.Equal(got, want) {
				t.Errorf("pods per workload:\n got %v\nwant %v", got, want)
			}
			if got, want := groupAges(sc), groupAges(c.sc); !maps.Equal(got, want) {
				t.Errorf("group ages %v, want %v", got, want)
			}
		})
	}
}

// groupAges are the ages of the managed and self-managed groups' nodes.
func groupAges(sc *scenario.Scenario) map[string]string {
	out := map[string]string{}
	for _, g := range sc.Spec.NodeGroups {
		var age *scenario.Duration
		switch {
		case g.Managed != nil:
			age = g.Managed.Age
		case g.SelfManaged != nil:
			age = g.SelfManaged.Age
		}
		if age != nil {
			out[g.Name] = age.String()
		}
	}
	return out
}

func addonVersions(sc *scenario.Scenario) map[string]string {
	out := map[string]string{}
	for _, a := range sc.Spec.Addons {
		out[a.Name] = a.Version
	}
	return out
}

// TestCaptureDeterministic: the same cluster captured twice gives the same
// bytes.
func TestCaptureDeterministic(t *testing.T) {
	var first [][]byte
	for i := range 2 {
		c := newCluster(t, "workshop")
		got, err := capture.Read(context.Background(), c.src)
		if err != nil {
			t.Fatal(err)
		}
		y, err := got.ScenarioYAML()
		if err != nil {
			t.Fatal(err)
		}
		all := [][]byte{y}
		for _, f := range got.Files {
			all = append(all, []byte(f.Path), f.Data)
		}
		if i == 0 {
			first = all
			continue
		}
		if !slices.EqualFunc(first, all, bytes.Equal) {
			t.Fatal("two captures of one cluster differ")
		}
	}
}

// TestCaptureStripsServerFields: what the API server and controllers set
// is not in the manifests.
func TestCaptureStripsServerFields(t *testing.T) {
	c := newCluster(t, "workshop")
	got, err := capture.Read(context.Background(), c.src)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range got.Files {
		for _, field := range []string{"resourceVersion:", "managedFields:", "uid:", "creationTimestamp:", "\nstatus:", "last-applied-configuration"} {
			if bytes.Contains(f.Data, []byte(field)) {
				t.Errorf("%s holds %q", f.Path, field)
			}
		}
	}
}

// TestCaptureErrors: an unknown cluster is EKS's ResourceNotFoundException,
// named with the call; a directory that holds a scenario is not written over.
func TestCaptureErrors(t *testing.T) {
	c := newCluster(t, "pdb-deadlock")
	src := c.src
	src.Cluster = "nope"
	_, err := capture.Read(context.Background(), src)
	if err == nil || !strings.Contains(err.Error(), "eks DescribeCluster nope") || !strings.Contains(err.Error(), "No cluster found for name: nope.") {
		t.Errorf("unknown cluster: %v", err)
	}
	got, err := capture.Read(context.Background(), c.src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, capture.ScenarioFile), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := got.Write(dir); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("writing over a scenario: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, capture.ScenarioFile)); string(data) != "mine" {
		t.Errorf("the existing scenario was changed: %q", data)
	}
}

// TestCaptureBarePodsNoSecrets: a pod no controller owns is captured
// without its node (the twin's nodes have other names); Secrets and
// ConfigMaps never are.
func TestCaptureBarePodsNoSecrets(t *testing.T) {
	c := newCluster(t, "pdb-deadlock")
	tracker := c.src.Kube.(*fake.Clientset).Tracker()
	for _, obj := range []runtime.Object{
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "orders", Name: "debug"},
			Spec:   corev1.PodSpec{NodeName: c.plan.Nodes[0].Name, Containers: []corev1.Container{{Name: "sh", Image: "busybox"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "orders", Name: "orders-db-2"}, StringData: map[string]string{"password": "hunter2"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "orders", Name: "orders-2"}, Data: map[string]string{"k": "v"}},
	} {
		if err := tracker.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	got, err := capture.Read(context.Background(), c.src)
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, f := range got.Files {
		all = append(all, f.Data...)
	}
	if !bytes.Contains(all, []byte("name: debug")) {
		t.Error("the bare pod is not captured")
	}
	for _, s := range []string{"hunter2", "kind: Secret", "kind: ConfigMap", "nodeName:"} {
		if bytes.Contains(all, []byte(s)) {
			t.Errorf("the manifests hold %q", s)
		}
	}
}

// imagesFailing answers DescribeImages with err.
type imagesFailing struct{ err error }

func (f imagesFailing) DescribeImages(context.Context, *ec2.DescribeImagesInput, ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error) {
	return nil, f.err
}

// TestCaptureSaysWhatEC2Refused: the workshop's custom-AMI group runs an
// AMI the embedded catalog does not know, so capture asks EC2 its name
// (which tells its family). EC2 refusing fails the capture, naming the
// call, the AMI and the permission; an AMI EC2 no longer has
// (InvalidAMIID.NotFound) is captured under its id.
func TestCaptureSaysWhatEC2Refused(t *testing.T) {
	c := newCluster(t, "workshop")
	src := c.src
	// A managed node on an AMI built in house.
	nodes, err := src.Kube.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: "eks.amazonaws.com/nodegroup=initial"})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("the workshop's initial nodes: %v", err)
	}
	n := nodes.Items[0]
	n.Labels["eks.amazonaws.com/nodegroup-image"] = "ami-0c0ffee0c0ffee000"
	if _, err := src.Kube.CoreV1().Nodes().Update(context.Background(), &n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	src.AWS.Images = imagesFailing{&smithy.GenericAPIError{Code: "UnauthorizedOperation", Message: "You are not authorized to perform this operation."}}
	_, err = capture.Read(context.Background(), src)
	if err == nil || !strings.Contains(err.Error(), "ec2 DescribeImages ami-0c0ffee0c0ffee000 (the AMI of node "+n.Name) || !strings.Contains(err.Error(), "UnauthorizedOperation") || !strings.Contains(err.Error(), "grant ec2:DescribeImages") {
		t.Errorf("EC2 refusing DescribeImages: %v", err)
	}
	src.AWS.Images = imagesFailing{&smithy.GenericAPIError{Code: "InvalidAMIID.NotFound", Message: "The image id '[ami-1]' does not exist"}}
	got, err := capture.Read(context.Background(), src)
	if err != nil {
		t.Fatalf("a deregistered AMI: %v", err)
	}
	if amis := got.Scenario.Spec.AMIs; len(amis) != 1 || amis[0].ID != "ami-0c0ffee0c0ffee000" || amis[0].Name != amis[0].ID {
		t.Errorf("a deregistered AMI captured as %+v, want its id as its name", amis)
	}
}

// TestCaptureWriteStaysInside: a manifest file whose name a hostile API
// server made lead out of the directory (a namespace "../../x"), or a
// link planted inside the directory, is refused: nothing is written
// outside it, no link followed.
func TestCaptureWriteStaysInside(t *testing.T) {
	c := newCluster(t, "pdb-deadlock")
	got, err := capture.Read(context.Background(), c.src)
	if err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "a", "capture")
	escaping := *got
	escaping.Files = append(slices.Clone(got.Files), capture.File{Path: "manifests/../../../escape.yaml", Data: []byte("evil")})
	if err := escaping.Write(dir); err == nil || !strings.Contains(err.Error(), "is not a path inside it") {
		t.Errorf("a file leading out: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(parent, "escape.yaml")); err == nil {
		t.Error("escape.yaml written outside --to")
	}

	outside := t.TempDir()
	linked := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(linked, "manifests")); err != nil {
		t.Fatal(err)
	}
	if err := got.Write(linked); err == nil || !strings.Contains(err.Error(), "is a symbolic link, not a directory") {
		t.Errorf("a link planted at manifests/: %v", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written through the link: %v", entries)
	}
}
