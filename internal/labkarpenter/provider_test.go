package labkarpenter

import (
	"context"
	"strings"
	"testing"
	"time"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	"github.com/awslabs/operatorpkg/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/materialize"
	"github.com/ladder-eks/ladder/internal/twin/karpenter"
)

// The karpenter-drift scenario's images: the EKS-optimized AL2023 AMI for
// 1.30 the nodes start on, and the 1.31 one the EC2NodeClass is switched to.
const (
	ami130 = "ami-0f676a166352f02ab"
	ami131 = "ami-0c4dea04571b1b508"
)

var (
	zones = []string{"us-west-2a", "us-west-2b", "us-west-2c"}
	now   = time.Date(2026, 3, 30, 10, 0, 0, 0, time.UTC)
)

func version(minor string) VersionFunc {
	return func(context.Context) (string, error) { return minor, nil }
}

func nodeClass(terms ...awsv1.AMISelectorTerm) *awsv1.EC2NodeClass {
	return &awsv1.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "default", Generation: 1},
		Spec: awsv1.EC2NodeClassSpec{
			Role:             "KarpenterNodeRole-eks-workshop",
			AMIFamily:        new(awsv1.AMIFamilyAL2023),
			AMISelectorTerms: terms,
			Tags:             map[string]string{"app.kubernetes.io/created-by": "eks-workshop"},
		},
	}
}

func nodeClaim(instanceTypes ...string) *karpv1.NodeClaim {
	return &karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:   "default-x7k2p",
			Labels: map[string]string{karpv1.NodePoolLabelKey: "default", "team": "checkout"},
		},
		Spec: karpv1.NodeClaimSpec{
			NodeClassRef: &karpv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
			Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
				{Key: karpv1.NodePoolLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"default"}},
				{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: instanceTypes},
				{Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{karpv1.CapacityTypeSpot}},
				{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"us-west-2b"}},
			},
		},
	}
}

// fixture is a fake API server holding the class, with its status written
// by the NodeClassController at a control-plane version.
type fixture struct {
	kube     client.Client
	provider *CloudProvider
	classes  *NodeClassController
}

func newFixture(t *testing.T, minor string, objs ...client.Object) *fixture {
	t.Helper()
	kube := fake.NewClientBuilder().WithScheme(scheme.Scheme).
		WithStatusSubresource(&awsv1.EC2NodeClass{}, &corev1.Node{}).
		WithObjects(objs...).Build()
	f := &fixture{
		kube:     kube,
		provider: New(kube, "us-west-2", zones, 1),
		classes:  NewNodeClassController(kube, zones, version(minor), func() time.Time { return now }),
	}
	for _, o := range objs {
		if nc, ok := o.(*awsv1.EC2NodeClass); ok {
			f.reconcile(t, nc.Name)
		}
	}
	return f
}

func (f *fixture) reconcile(t *testing.T, name string) *awsv1.EC2NodeClass {
	t.Helper()
	nc := &awsv1.EC2NodeClass{}
	if err := f.kube.Get(context.Background(), types.NamespacedName{Name: name}, nc); err != nil {
		t.Fatal(err)
	}
	if _, err := f.classes.Reconcile(context.Background(), nc); err != nil {
		t.Fatalf("reconciling EC2NodeClass %s: %v", name, err)
	}
	if err := f.kube.Get(context.Background(), types.NamespacedName{Name: name}, nc); err != nil {
		t.Fatal(err)
	}
	return nc
}

func (f *fixture) patchClass(t *testing.T, edit func(*awsv1.EC2NodeClass)) {
	t.Helper()
	nc := &awsv1.EC2NodeClass{}
	if err := f.kube.Get(context.Background(), types.NamespacedName{Name: "default"}, nc); err != nil {
		t.Fatal(err)
	}
	edit(nc)
	nc.Generation++
	if err := f.kube.Update(context.Background(), nc); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t, "default")
}

func TestInstanceTypesFromCatalog(t *testing.T) {
	var m6i *cloudprovider.InstanceType
	its := InstanceTypes("us-west-2", zones)
	if len(its) != len(catalog.InstanceTypes()) {
		t.Fatalf("%d instance types, want the catalog's %d", len(its), len(catalog.InstanceTypes()))
	}
	for _, it := range its {
		if it.Name == "m6i.large" {
			m6i = it
		}
	}
	if m6i == nil {
		t.Fatal("m6i.large missing")
	}
	for key, want := range map[string]string{
		corev1.LabelArchStable:        "amd64",
		corev1.LabelTopologyRegion:    "us-west-2",
		awsv1.LabelInstanceCategory:   "m",
		awsv1.LabelInstanceSize:       "large",
		awsv1.LabelInstanceGeneration: "6",
	} {
		if got := m6i.Requirements.Get(key).Values(); len(got) != 1 || got[0] != want {
			t.Errorf("m6i.large requirement %s = %v, want [%s]", key, got, want)
		}
	}
	if got := len(m6i.Offerings); got != 6 {
		t.Errorf("%d offerings, want 6 (3 zones × spot, on-demand)", got)
	}
	for _, o := range m6i.Offerings {
		ct := o.Requirements.Get(karpv1.CapacityTypeLabelKey).Any()
		want := map[string]float64{karpv1.CapacityTypeSpot: 0.0381, karpv1.CapacityTypeOnDemand: 0.096}[ct]
		if o.Price != want || !o.Available {
			t.Errorf("offering %s: price %v available %v, want %v true", o.Requirements, o.Price, o.Available, want)
		}
	}
	cat, _ := catalog.LookupInstanceType("m6i.large")
	for name, want := range cat.Allocatable() {
		if got := m6i.Allocatable()[name]; got.Cmp(want) != 0 {
			t.Errorf("allocatable %s = %s, want the catalog's %s", name, got.String(), want.String())
		}
	}
}

func TestNodeClassStatus(t *testing.T) {
	tests := []struct {
		name     string
		minor    string
		terms    []awsv1.AMISelectorTerm
		wantAMIs []string
		ready    metav1.ConditionStatus
	}{
		{"an id", "1.31", []awsv1.AMISelectorTerm{{ID: ami130}}, []string{ami130}, metav1.ConditionTrue},
		{"an alias at the control plane's version", "1.31", []awsv1.AMISelectorTerm{{Alias: "al2023@v20260320"}}, []string{ami131}, metav1.ConditionTrue},
		{"an id the catalog lacks", "1.31", []awsv1.AMISelectorTerm{{ID: "ami-0000000000000dead"}}, nil, metav1.ConditionFalse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.minor, nodeClass(tt.terms...))
			nc := f.reconcile(t, "default")
			var ids []string
			for _, a := range nc.Status.AMIs {
				if a.Requirements[0].Values[0] == "amd64" {
					ids = append(ids, a.ID)
				}
			}
			if strings.Join(ids, ",") != strings.Join(tt.wantAMIs, ",") {
				t.Errorf("status.amis (amd64) = %v, want %v", ids, tt.wantAMIs)
			}
			ready := nc.StatusConditions().Get(status.ConditionReady)
			if ready.Status != tt.ready || ready.ObservedGeneration != nc.Generation {
				t.Errorf("Ready = %s at generation %d, want %s at %d", ready.Status, ready.ObservedGeneration, tt.ready, nc.Generation)
			}
			if nc.Annotations[awsv1.AnnotationEC2NodeClassHash] == "" {
				t.Error("no ec2nodeclass-hash annotation")
			}
		})
	}
}

func TestCreateLaunchesAKWOKNode(t *testing.T) {
	f := newFixture(t, "1.31", nodeClass(awsv1.AMISelectorTerm{ID: ami130}))
	// c6i.large is the cheaper spot offering of the two (0.0362 < 0.0381).
	got, err := f.provider.Create(context.Background(), nodeClaim("m6i.large", "c6i.large"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.ImageID != ami130 {
		t.Errorf("ImageID %q, want %s", got.Status.ImageID, ami130)
	}
	if !strings.HasPrefix(got.Status.ProviderID, "aws:///us-west-2b/i-") {
		t.Errorf("providerID %q, want aws:///us-west-2b/i-…", got.Status.ProviderID)
	}
	if got.Annotations[awsv1.AnnotationEC2NodeClassHashVersion] != awsv1.EC2NodeClassHashVersion {
		t.Errorf("annotations %v lack the class's hash version", got.Annotations)
	}
	node := &corev1.Node{}
	if err := f.kube.Get(context.Background(), types.NamespacedName{Name: got.Status.NodeName}, node); err != nil {
		t.Fatalf("the instance's Node: %v", err)
	}
	for key, want := range map[string]string{
		corev1.LabelInstanceTypeStable: "c6i.large",
		karpv1.CapacityTypeLabelKey:    karpv1.CapacityTypeSpot,
		corev1.LabelTopologyZone:       "us-west-2b",
		corev1.LabelTopologyRegion:     "us-west-2",
		karpv1.NodePoolLabelKey:        "default",
		"team":                         "checkout",
		awsv1.LabelInstanceCategory:    "c",
		awsv1.LabelNodeClass:           "default",
		corev1.LabelHostname:           node.Name,
	} {
		if node.Labels[key] != want {
			t.Errorf("label %s = %q, want %q", key, node.Labels[key], want)
		}
	}
	if node.Annotations[materialize.KwokAnnotation] != materialize.KwokValue || node.Annotations[karpenter.ImageIDAnnotation] != ami130 {
		t.Errorf("annotations %v, want KWOK's and the image id", node.Annotations)
	}
	if len(node.Spec.Taints) != 1 || node.Spec.Taints[0].Key != karpv1.UnregisteredTaintKey {
		t.Errorf("taints %v, want karpenter.sh/unregistered only", node.Spec.Taints)
	}
	if node.Status.NodeInfo.KubeletVersion != "v1.30.14-eks-f69f56f" {
		t.Errorf("kubelet %q, want the AMI's v1.30.14-eks-f69f56f", node.Status.NodeInfo.KubeletVersion)
	}
	if node.Spec.ProviderID != got.Status.ProviderID {
		t.Errorf("node providerID %q, claim's %q", node.Spec.ProviderID, got.Status.ProviderID)
	}
}

func TestCreateRefuses(t *testing.T) {
	tests := []struct {
		name    string
		objs    []client.Object
		types   []string
		wantErr func(error) bool
	}{
		{"no EC2NodeClass", nil, []string{"m6i.large"}, cloudprovider.IsInsufficientCapacityError},
		{"an EC2NodeClass whose AMI is not found", []client.Object{nodeClass(awsv1.AMISelectorTerm{ID: "ami-0000000000000dead"})}, []string{"m6i.large"}, cloudprovider.IsNodeClassNotReadyError},
		{"no instance type its AMI boots", []client.Object{nodeClass(awsv1.AMISelectorTerm{ID: ami130})}, []string{"m7g.large"}, cloudprovider.IsInsufficientCapacityError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "1.31", tt.objs...)
			_, err := f.provider.Create(context.Background(), nodeClaim(tt.types...))
			if err == nil || !tt.wantErr(err) {
				t.Fatalf("Create: %v, want the other error kind", err)
			}
		})
	}
}

func TestIsDrifted(t *testing.T) {
	tests := []struct {
		name  string
		minor string
		edit  func(*awsv1.EC2NodeClass)
		want  cloudprovider.DriftReason
	}{
		{"unchanged", "1.31", func(*awsv1.EC2NodeClass) {}, ""},
		{"amiSelectorTerms switched to the 1.31 AMI", "1.31", func(nc *awsv1.EC2NodeClass) {
			nc.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{ID: ami131}}
		}, "AMIDrift"},
		{"amiSelectorTerms listing both AMIs, the older first", "1.31", func(nc *awsv1.EC2NodeClass) {
			nc.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{ID: ami130}, {ID: ami131}}
		}, "AMIDrift"},
		{"a tag changed", "1.31", func(nc *awsv1.EC2NodeClass) {
			nc.Spec.Tags["team"] = "checkout"
		}, "NodeClassDrift"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.minor, nodeClass(awsv1.AMISelectorTerm{ID: ami130}))
			claim := nodeClaim("m6i.large")
			launched, err := f.provider.Create(context.Background(), claim)
			if err != nil {
				t.Fatal(err)
			}
			claim.Labels = launched.Labels
			claim.Annotations = launched.Annotations
			claim.Status = launched.Status
			f.patchClass(t, tt.edit)
			got, err := f.provider.IsDrifted(context.Background(), claim)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("IsDrifted = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAliasDriftsWithTheControlPlane(t *testing.T) {
	minor := "1.30"
	f := newFixture(t, minor)
	f.classes.version = func(context.Context) (string, error) { return minor, nil }
	if err := f.kube.Create(context.Background(), nodeClass(awsv1.AMISelectorTerm{Alias: "al2023@latest"})); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t, "default")
	claim, err := f.provider.Create(context.Background(), nodeClaim("m6i.large"))
	if err != nil {
		t.Fatal(err)
	}
	claim.Spec.NodeClassRef = nodeClaim().Spec.NodeClassRef
	if reason, _ := f.provider.IsDrifted(context.Background(), claim); reason != "" {
		t.Fatalf("drifted (%s) at the version it launched at", reason)
	}
	minor = "1.31" // UpdateClusterVersion; the next AMI refresh resolves the alias again
	f.reconcile(t, "default")
	if reason, _ := f.provider.IsDrifted(context.Background(), claim); reason != "AMIDrift" {
		t.Errorf("IsDrifted after the control plane moved to 1.31 = %q, want AMIDrift", reason)
	}
}

func TestDeleteGetList(t *testing.T) {
	mng := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-1-1.us-west-2.compute.internal", Labels: map[string]string{"eks.amazonaws.com/nodegroup": "initial"}},
		Spec:       corev1.NodeSpec{ProviderID: "aws:///us-west-2a/i-0000000000000001"},
	}
	f := newFixture(t, "1.31", nodeClass(awsv1.AMISelectorTerm{ID: ami130}), mng)
	claim, err := f.provider.Create(context.Background(), nodeClaim("m6i.large"))
	if err != nil {
		t.Fatal(err)
	}
	claim.Spec.NodeClassRef = nodeClaim().Spec.NodeClassRef
	listed, err := f.provider.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].Status.ProviderID != claim.Status.ProviderID || listed[0].Status.ImageID != ami130 {
		t.Fatalf("List = %v, want only the launched instance (not the node group's)", listed)
	}
	if got, err := f.provider.Get(context.Background(), claim.Status.ProviderID); err != nil || got.Status.NodeName != claim.Status.NodeName {
		t.Fatalf("Get = %v, %v", got, err)
	}
	if err := f.provider.Delete(context.Background(), claim); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Fatalf("Delete = %v, want NodeClaimNotFound (terminated)", err)
	}
	if _, err := f.provider.Get(context.Background(), claim.Status.ProviderID); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("Get after Delete = %v, want NodeClaimNotFound", err)
	}
	if err := f.kube.Get(context.Background(), types.NamespacedName{Name: mng.Name}, &corev1.Node{}); err != nil {
		t.Errorf("the node group's node: %v", err)
	}
}
