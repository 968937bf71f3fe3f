package twinaws

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/smithy-go"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	"github.com/ladder-eks/ladder/internal/twin/mng"
)

const (
	ami130 = "ami-0f676a166352f02ab" // amazon-eks-node-al2023-x86_64-standard-1.30-v20260220
	ami131 = "ami-0c4dea04571b1b508" // amazon-eks-node-al2023-x86_64-standard-1.31-v20260320
)

// withCustomGroup adds the managed group custom, on a custom AMI: its
// launch template custom is at version 1 with the 1.30 AMI.
func withCustomGroup(t *testing.T, tc *twinCluster) {
	t.Helper()
	if err := tc.eks.opts.Nodegroups.Adopt(nodegroup.Spec{Name: "custom", InstanceTypes: []string{"m5.large"}, Desired: 2, Min: 1, Max: 3,
		LaunchTemplate: &nodegroup.LaunchTemplate{Name: "custom", Version: "1", ImageID: ami130}}, time.Hour); err != nil {
		t.Fatal(err)
	}
}

func (c *twinCluster) waitForUpdate(t *testing.T, group string, id *string) *ekstypes.Update {
	t.Helper()
	var u *ekstypes.Update
	if err := c.Wait(context.Background(), 3*time.Hour, func(ctx context.Context) (bool, error) {
		out, err := c.eks.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: aws.String("conformance"), NodegroupName: aws.String(group), UpdateId: id})
		if err != nil {
			return false, err
		}
		u = out.Update
		return u.Status != ekstypes.UpdateStatusInProgress, nil
	}); err != nil {
		t.Fatal(err)
	}
	return u
}

// A custom-AMI group is upgraded as semantics.md §B says: a new version of
// its launch template with the new image (EC2), then UpdateNodegroupVersion
// to that version; EKS reads the image from the version, so the group's
// nodes end on it. The launch template is found by name or by the id its
// nodes' label shows, and a version it does not have is refused.
func TestLaunchTemplateBehindANodegroup(t *testing.T) {
	tc, ctx := clusterAt131(t)
	withCustomGroup(t, tc)
	lts := tc.eks.LaunchTemplates(nil)
	got, err := lts.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String("custom")})
	if err != nil || len(got.LaunchTemplateVersions) != 1 || aws.ToString(got.LaunchTemplateVersions[0].LaunchTemplateData.ImageId) != ami130 {
		t.Fatalf("the group's launch template: %+v, %v; want version 1 with %s", got, err, ami130)
	}
	id := got.LaunchTemplateVersions[0].LaunchTemplateId
	created, err := lts.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateId: id, SourceVersion: aws.String("1"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(ami131)}})
	if err != nil || aws.ToInt64(created.LaunchTemplateVersion.VersionNumber) != 2 {
		t.Fatalf("CreateLaunchTemplateVersion by id %s: %+v, %v; want version 2", aws.ToString(id), created, err)
	}
	in := &eks.UpdateNodegroupVersionInput{ClusterName: aws.String("conformance"), NodegroupName: aws.String("custom"),
		LaunchTemplate: &ekstypes.LaunchTemplateSpecification{Name: aws.String("custom"), Version: aws.String("3")}}
	var ipe *ekstypes.InvalidParameterException
	if _, err := tc.eks.UpdateNodegroupVersion(ctx, in); !errors.As(err, &ipe) {
		t.Fatalf("UpdateNodegroupVersion to version 3, which does not exist: %v, want InvalidParameterException", err)
	}
	in.LaunchTemplate.Version = aws.String("2")
	up, err := tc.eks.UpdateNodegroupVersion(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if u := tc.waitForUpdate(t, "custom", up.Update.Id); u.Status != ekstypes.UpdateStatusSuccessful {
		t.Fatalf("update: %s %+v", u.Status, u.Errors)
	}
	ng, err := tc.eks.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String("conformance"), NodegroupName: aws.String("custom")})
	if err != nil || aws.ToString(ng.Nodegroup.Version) != "1.31" || aws.ToString(ng.Nodegroup.LaunchTemplate.Version) != "2" {
		t.Fatalf("custom after the update: %+v, %v; want 1.31 on launch template version 2", ng, err)
	}
	for _, n := range tc.port.Cluster().Nodes() {
		if n.Labels[mng.LabelNodegroup] == "custom" && n.Labels[mng.LabelNodegroupImage] != ami131 {
			t.Errorf("node %s runs %s, want %s", n.Name, n.Labels[mng.LabelNodegroupImage], ami131)
		}
	}
	// A template no group runs is EC2's NotFound.
	_, err = lts.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String("other")})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "InvalidLaunchTemplateName.NotFoundException" {
		t.Fatalf("an unknown template: %v", err)
	}
}

// A node group's subnets are its zones': DescribeNodegroup lists them, and
// CreateNodegroup puts the new group's nodes in the zones of the subnets
// it names. Subnets are required, and an unknown one is refused.
// DescribeNodegroup names every group's IAM role, a created one's as given,
// so blue's can be copied into green's CreateNodegroup, which requires it.
func TestCreateNodegroupSubnets(t *testing.T) {
	tc, ctx := clusterAt131(t)
	blue, err := tc.eks.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String("conformance"), NodegroupName: aws.String("blue")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{SubnetID("conformance", zones[0]), SubnetID("conformance", zones[1]), SubnetID("conformance", zones[2])}
	if !slices.Equal(blue.Nodegroup.Subnets, want) {
		t.Fatalf("blue's subnets: %v, want the cluster's %v", blue.Nodegroup.Subnets, want)
	}
	if r := aws.ToString(blue.Nodegroup.NodeRole); r != "arn:aws:iam::111122223333:role/eksctl-conformance-nodegroup-blue-NodeInstanceRole" {
		t.Errorf("blue's node role: %q, want eksctl's role of the group", r)
	}
	in := &eks.CreateNodegroupInput{ClusterName: aws.String("conformance"), NodegroupName: aws.String("teal"), InstanceTypes: []string{"m5.large"}, NodeRole: aws.String("arn:aws:iam::111122223333:role/teal"),
		ScalingConfig: &ekstypes.NodegroupScalingConfig{DesiredSize: aws.Int32(3), MinSize: aws.Int32(1), MaxSize: aws.Int32(3)},
		Labels:        map[string]string{"team": "teal"}, Taints: []ekstypes.Taint{{Key: aws.String("team"), Value: aws.String("teal"), Effect: ekstypes.TaintEffectNoExecute}}}
	var ipe *ekstypes.InvalidParameterException
	if _, err := tc.eks.CreateNodegroup(ctx, in); !errors.As(err, &ipe) {
		t.Fatalf("CreateNodegroup without subnets: %v, want InvalidParameterException", err)
	}
	in.Subnets = []string{"subnet-0123456789abcdef0"}
	if _, err := tc.eks.CreateNodegroup(ctx, in); !errors.As(err, &ipe) {
		t.Fatalf("CreateNodegroup in an unknown subnet: %v, want InvalidParameterException", err)
	}
	in.Subnets = []string{SubnetID("conformance", zones[1])}
	if _, err := tc.eks.CreateNodegroup(ctx, in); err != nil {
		t.Fatal(err)
	}
	var ng *ekstypes.Nodegroup
	if err := tc.Wait(ctx, time.Hour, func(ctx context.Context) (bool, error) {
		out, err := tc.eks.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String("conformance"), NodegroupName: aws.String("teal")})
		if err != nil {
			return false, err
		}
		ng = out.Nodegroup
		return ng.Status != ekstypes.NodegroupStatusCreating, nil
	}); err != nil {
		t.Fatal(err)
	}
	if ng.Status != ekstypes.NodegroupStatusActive || !slices.Equal(ng.Subnets, in.Subnets) || ng.Labels["team"] != "teal" ||
		len(ng.Taints) != 1 || ng.Taints[0].Effect != ekstypes.TaintEffectNoExecute || aws.ToString(ng.NodeRole) != *in.NodeRole {
		t.Fatalf("teal: %s, subnets %v, labels %v, taints %+v, role %s; want ACTIVE in %v with its label, NO_EXECUTE taint and role", ng.Status, ng.Subnets, ng.Labels, ng.Taints, aws.ToString(ng.NodeRole), in.Subnets)
	}
	nodes := 0
	for _, n := range tc.port.Cluster().Nodes() {
		if n.Labels[mng.LabelNodegroup] != "teal" {
			continue
		}
		nodes++
		if z := n.Labels["topology.kubernetes.io/zone"]; z != zones[1] {
			t.Errorf("teal's node %s is in %s, want %s", n.Name, z, zones[1])
		}
	}
	if nodes != 3 {
		t.Fatalf("teal has %d nodes, want 3", nodes)
	}
}

// A group whose launch template names no version number runs version 1,
// and its next version is 2.
func TestLaunchTemplateWithoutVersionNumber(t *testing.T) {
	tc, ctx := clusterAt131(t)
	if err := tc.eks.opts.Nodegroups.Adopt(nodegroup.Spec{Name: "latest", InstanceTypes: []string{"m5.large"}, Desired: 1,
		LaunchTemplate: &nodegroup.LaunchTemplate{Name: "latest", Version: "$Latest", ImageID: ami130}}, time.Hour); err != nil {
		t.Fatal(err)
	}
	out, err := tc.eks.LaunchTemplates(nil).CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateName: aws.String("latest"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(ami131)}})
	if err != nil || aws.ToInt64(out.LaunchTemplateVersion.VersionNumber) != 2 {
		t.Fatalf("CreateLaunchTemplateVersion: %+v, %v; want version 2", out, err)
	}
}

// describeVersions is DescribeLaunchTemplateVersions' answer as
// "name/id v<number> <image> [default]" lines, or the error's code.
func describeVersions(lts awsport.LaunchTemplates, in *ec2.DescribeLaunchTemplateVersionsInput) []string {
	out, err := lts.DescribeLaunchTemplateVersions(context.Background(), in)
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return []string{ae.ErrorCode()}
	}
	if err != nil {
		return []string{err.Error()}
	}
	var got []string
	for _, v := range out.LaunchTemplateVersions {
		s := fmt.Sprintf("%s/%s v%d %s", aws.ToString(v.LaunchTemplateName), aws.ToString(v.LaunchTemplateId), aws.ToInt64(v.VersionNumber), aws.ToString(v.LaunchTemplateData.ImageId))
		if aws.ToBool(v.DefaultVersion) {
			s += " default"
		}
		got = append(got, s)
	}
	if out.NextToken != nil {
		got = append(got, "more")
	}
	return got
}

// The store learns a template from the groups that run it, by id or by
// name, and answers EC2's version selectors (aws-apis.md §4): none for all,
// $Latest, $Default (the oldest it knows), numbers; a new version copies
// SourceVersion's image unless LaunchTemplateData names one, and a
// ClientToken already used returns the version it made.
func TestLaunchTemplateStore(t *testing.T) {
	managed := newLaunchTemplates(func() []templateSeed {
		return []templateSeed{
			{id: "lt-0a", name: "custom", version: "3", imageID: "ami-3"},
			{id: "lt-0a", name: "custom", version: "4", imageID: "ami-4"},
			{id: "lt-0b", version: "$Latest", imageID: "ami-b"},
		}
	})
	selfManaged := newLaunchTemplates(func() []templateSeed {
		return []templateSeed{{name: "workers", version: "1", imageID: "ami-w"}}
	})
	managed.join(selfManaged)
	ctx := context.Background()
	if _, err := managed.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateId: aws.String("lt-0a"),
		SourceVersion: aws.String("$Default"), ClientToken: aws.String("once")}); err != nil {
		t.Fatal(err)
	}
	again, err := managed.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateId: aws.String("lt-0a"),
		ClientToken: aws.String("once"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-other")}})
	if err != nil || aws.ToInt64(again.LaunchTemplateVersion.VersionNumber) != 5 {
		t.Fatalf("the same ClientToken again: %+v, %v; want version 5 once more", again, err)
	}
	if _, err := managed.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateName: aws.String("workers"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-w2")}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		in   ec2.DescribeLaunchTemplateVersionsInput
		want []string
	}{
		{"all, by name", ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String("custom")},
			[]string{"custom/lt-0a v3 ami-3 default", "custom/lt-0a v4 ami-4", "custom/lt-0a v5 ami-3"}},
		{"selectors, by id", ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateId: aws.String("lt-0a"), Versions: []string{"$Latest", "4", "5"}},
			[]string{"custom/lt-0a v4 ami-4", "custom/lt-0a v5 ami-3"}},
		{"a page", ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateId: aws.String("lt-0a"), MaxResults: aws.Int32(2)},
			[]string{"custom/lt-0a v3 ami-3 default", "custom/lt-0a v4 ami-4", "more"}},
		{"no version number is 1", ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateId: aws.String("lt-0b")},
			[]string{"/lt-0b v1 ami-b default"}},
		{"a self-managed group's", ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String("workers"), Versions: []string{"$Default", "$Latest"}},
			[]string{"workers/" + templateID("workers") + " v1 ami-w default", "workers/" + templateID("workers") + " v2 ami-w2"}},
		{"an unknown version", ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String("custom"), Versions: []string{"9"}},
			[]string{"InvalidLaunchTemplateId.VersionNotFound"}},
		{"an unknown name", ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String("other")},
			[]string{"InvalidLaunchTemplateName.NotFoundException"}},
		{"an unknown id", ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateId: aws.String("lt-0c")},
			[]string{"InvalidLaunchTemplateId.NotFound"}},
		{"neither", ec2.DescribeLaunchTemplateVersionsInput{}, []string{"MissingParameter"}},
	} {
		if got := describeVersions(managed, &c.in); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
