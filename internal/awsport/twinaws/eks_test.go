package twinaws

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
)

// The control plane's refusals come back as the exception their message
// names, the node group twin's as their code, anything else as
// InvalidRequestException.
func TestEKSErrorTypes(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{errors.New("ResourceInUseException: an update is already in progress"), "ResourceInUseException"},
		{errors.New("InvalidParameterException: unsupported Kubernetes minor version update from 1.30 to 1.32"), "InvalidParameterException"},
		{errors.New("node ip-1 runs kubelet v1.27.1, more than 3 minor versions behind"), "InvalidRequestException"},
		{&nodegroup.Error{Code: nodegroup.ResourceInUseException, Message: "busy"}, "ResourceInUseException"},
		{&nodegroup.Error{Code: nodegroup.ResourceNotFoundException, Message: "gone"}, "ResourceNotFoundException"},
	} {
		err := eksError("c", "ng", c.err)
		var ae interface{ ErrorCode() string }
		if !errors.As(err, &ae) || ae.ErrorCode() != c.want {
			t.Errorf("%v → %T, want %s", c.err, err, c.want)
		}
		if strings.HasPrefix(err.Error(), c.want+": "+c.want) {
			t.Errorf("%v: the code is repeated in %q", c.err, err)
		}
	}
}

// The Strict node precondition: a node group behind the control plane
// keeps it from moving (semantics.md §E), and the cluster stays ACTIVE.
func TestUpdateClusterVersionRefusesANodegroupBehind(t *testing.T) {
	tc, ctx := clusterAt131(t)
	_, err := tc.eks.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: aws.String("conformance"), Version: aws.String("1.32")})
	var ire *ekstypes.InvalidRequestException
	if !errors.As(err, &ire) || !strings.Contains(aws.ToString(ire.Message), "node group blue is at Kubernetes 1.30") {
		t.Fatalf("UpdateClusterVersion with node groups at 1.30: %v, want InvalidRequestException naming blue", err)
	}
	out, _ := tc.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("conformance")})
	if out.Cluster.Status != ekstypes.ClusterStatusActive || aws.ToString(out.Cluster.Version) != "1.31" {
		t.Fatalf("cluster after the refusal: %s %s, want ACTIVE 1.31", out.Cluster.Status, aws.ToString(out.Cluster.Version))
	}
}

// With EnforceInsights, an ERROR upgrade-readiness insight for the target
// refuses the update with InvalidStateException unless force is set
// (aws-apis.md §2.5 step 6); ListInsights filters by status.
func TestUpdateClusterVersionReadinessInsights(t *testing.T) {
	tc := newTwinCluster(t)
	tc.eks.opts.EnforceInsights = true
	tc.eks.opts.Insights = func() []ekstypes.InsightSummary {
		return []ekstypes.InsightSummary{
			{Id: aws.String("a"), Category: ekstypes.CategoryUpgradeReadiness, KubernetesVersion: aws.String("1.31"), InsightStatus: &ekstypes.InsightStatus{Status: ekstypes.InsightStatusValueError}},
			{Id: aws.String("b"), Category: ekstypes.CategoryUpgradeReadiness, KubernetesVersion: aws.String("1.31"), InsightStatus: &ekstypes.InsightStatus{Status: ekstypes.InsightStatusValuePassing}},
		}
	}
	ctx := context.Background()
	in := &eks.UpdateClusterVersionInput{Name: aws.String("conformance"), Version: aws.String("1.31")}
	_, err := tc.eks.UpdateClusterVersion(ctx, in)
	var ise *ekstypes.InvalidStateException
	if !errors.As(err, &ise) {
		t.Fatalf("UpdateClusterVersion with an ERROR insight: %v, want InvalidStateException", err)
	}
	in.Force = true
	if _, err := tc.eks.UpdateClusterVersion(ctx, in); err != nil {
		t.Fatalf("with force: %v", err)
	}
	out, err := tc.eks.ListInsights(ctx, &eks.ListInsightsInput{ClusterName: aws.String("conformance"),
		Filter: &ekstypes.InsightsFilter{Statuses: []ekstypes.InsightStatusValue{ekstypes.InsightStatusValueError}}})
	if err != nil || len(out.Insights) != 1 || aws.ToString(out.Insights[0].Id) != "a" {
		t.Fatalf("ListInsights status=ERROR: %+v, %v; want only a", out, err)
	}
}

// DescribeClusterVersions fills both status spellings from the calendar:
// 1.30 is in extended support on t0.
func TestDescribeClusterVersionsStatuses(t *testing.T) {
	tc := newTwinCluster(t)
	out, err := tc.eks.DescribeClusterVersions(context.Background(), &eks.DescribeClusterVersionsInput{ClusterVersions: []string{"1.30"}})
	if err != nil || len(out.ClusterVersions) != 1 {
		t.Fatalf("DescribeClusterVersions 1.30: %+v, %v", out, err)
	}
	v := out.ClusterVersions[0]
	if v.VersionStatus != ekstypes.VersionStatusExtendedSupport || v.Status != ekstypes.ClusterVersionStatusExtendedSupport {
		t.Fatalf("1.30 on %s: %s / %s, want EXTENDED_SUPPORT / extended-support (standard support ended 2025-07-23)", t0.Format("2006-01-02"), v.VersionStatus, v.Status)
	}
}

// New wires the ports of one cluster: the AMI ports share the EKS twin's
// clock, there is no Auto Scaling port without Auto Scaling groups, and
// EC2's launch templates are there for the managed groups' all the same.
func TestNewWiresThePorts(t *testing.T) {
	tc := newTwinCluster(t)
	withCustomGroup(t, tc)
	p := New(tc.eks.opts, nil, nil)
	if p.AutoScaling != nil {
		t.Fatal("an Auto Scaling port without groups")
	}
	if p.LaunchTemplates == nil {
		t.Fatal("no launch templates without Auto Scaling groups")
	}
	if got := describeVersions(p.LaunchTemplates, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String("custom")}); len(got) != 1 {
		t.Fatalf("the managed group's launch template: %q", got)
	}
	name := "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id"
	out, err := p.Parameters.GetParameter(context.Background(), &ssm.GetParameterInput{Name: &name})
	if err != nil || aws.ToString(out.Parameter.Value) != "ami-0c4dea04571b1b508" {
		t.Fatalf("the recommended 1.31 AMI on %s: %v, %v", t0.Format(time.DateOnly), out, err)
	}
	if _, err := p.EKS.DescribeCluster(context.Background(), &eks.DescribeClusterInput{Name: aws.String("conformance")}); err != nil {
		t.Fatal(err)
	}
}

// A node group's DescribeUpdate, polled while the update runs, follows the
// update to its end, and a caller changing what it got back does not
// change what the next call returns (the twin keeps the built update).
func TestDescribeNodegroupUpdateFollowsTheUpdate(t *testing.T) {
	tc, ctx := clusterAt131(t)
	up, err := tc.eks.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: aws.String("conformance"), NodegroupName: aws.String("blue"), Version: aws.String("1.31")})
	if err != nil {
		t.Fatal(err)
	}
	in := &eks.DescribeUpdateInput{Name: aws.String("conformance"), NodegroupName: aws.String("blue"), UpdateId: up.Update.Id}
	first, err := tc.eks.DescribeUpdate(ctx, in)
	if err != nil || first.Update.Status != ekstypes.UpdateStatusInProgress {
		t.Fatalf("DescribeUpdate at start: %v %+v, want InProgress", err, first)
	}
	first.Update.Status = ekstypes.UpdateStatusCancelled
	first.Update.Params[0].Value = aws.String("tampered")
	polls := 0
	var last *ekstypes.Update
	if err := tc.Wait(ctx, 3*time.Hour, func(ctx context.Context) (bool, error) {
		out, err := tc.eks.DescribeUpdate(ctx, in)
		if err != nil {
			return false, err
		}
		polls++
		last = out.Update
		return last.Status != ekstypes.UpdateStatusInProgress, nil
	}); err != nil {
		t.Fatalf("after %d polls: %v", polls, err)
	}
	if last.Status != ekstypes.UpdateStatusSuccessful || aws.ToString(last.Params[0].Value) != "1.31" || polls < 2 {
		t.Fatalf("after %d polls the update is %s with %s=%s, want Successful to 1.31", polls, last.Status, last.Params[0].Type, aws.ToString(last.Params[0].Value))
	}
	if _, err := tc.eks.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: aws.String("conformance"), NodegroupName: aws.String("blue"), UpdateId: aws.String("no-such-update")}); err == nil {
		t.Errorf("DescribeUpdate of an unknown update: no error")
	}
}

// clusterAt131 is the conformance twin with its control plane updated to
// 1.31 and its node groups still at 1.30.
func clusterAt131(t *testing.T) (*twinCluster, context.Context) {
	t.Helper()
	tc := newTwinCluster(t)
	ctx := context.Background()
	if _, err := tc.eks.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: aws.String("conformance"), Version: aws.String("1.31")}); err != nil {
		t.Fatal(err)
	}
	if err := tc.Wait(ctx, time.Hour, func(ctx context.Context) (bool, error) { return !tc.eks.opts.ControlPlane.Updating(), nil }); err != nil {
		t.Fatal(err)
	}
	return tc, ctx
}
