package twinserve_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/smithy-go"

	"github.com/ladder-eks/ladder/internal/awsserve"
	"github.com/ladder-eks/ladder/internal/awsserve/twinserve"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// With a policy, the endpoints refuse each action it does not allow as
// the service does — EKS's typed AccessDeniedException, EC2's
// UnauthorizedOperation, Auto Scaling's AccessDenied, SSM's
// AccessDeniedException — naming the action, and answer the ones it
// allows; an explicit Deny wins over a wildcard Allow.
func TestEndpointsEvaluateThePolicy(t *testing.T) {
	sc, err := scenario.LoadBuiltin("workshop")
	if err != nil {
		t.Fatal(err)
	}
	tw, err := twinserve.New(sc, 0)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := awsserve.ParsePolicy([]byte(`{"Version": "2012-10-17", "Statement": [
  {"Effect": "Allow", "Action": ["eks:Describe*", "eks:List*", "autoscaling:*"], "Resource": "*"},
  {"Effect": "Deny", "Action": "autoscaling:StartInstanceRefresh", "Resource": "*"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	tw.SetPolicy(policy)
	srv := httptest.NewServer(tw)
	t.Cleanup(srv.Close)
	cfg := aws.Config{Region: tw.Region, BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider(twinserve.AccessKeyID, twinserve.SecretAccessKey, "")}
	ctx := context.Background()
	name := aws.String(tw.Cluster)

	if _, err := eks.NewFromConfig(cfg).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: name}); err != nil {
		t.Errorf("eks:DescribeCluster, allowed by eks:Describe*: %v", err)
	}
	if _, err := autoscaling.NewFromConfig(cfg).DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{}); err != nil {
		t.Errorf("autoscaling:DescribeAutoScalingGroups, allowed by autoscaling:*: %v", err)
	}

	_, err = eks.NewFromConfig(cfg).UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: name, Version: aws.String("1.31")})
	var denied *ekstypes.AccessDeniedException
	if !errors.As(err, &denied) || !strings.Contains(denied.ErrorMessage(), "not authorized to perform: eks:UpdateClusterVersion") {
		t.Errorf("eks:UpdateClusterVersion, not allowed: %v, want the typed AccessDeniedException naming the action", err)
	}
	for _, c := range []struct {
		action, code string
		call         func() error
	}{
		{"autoscaling:StartInstanceRefresh", "AccessDenied", func() error {
			_, err := autoscaling.NewFromConfig(cfg).StartInstanceRefresh(ctx, &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: aws.String("default-selfmng")})
			return err
		}},
		{"ec2:DescribeImages", "UnauthorizedOperation", func() error {
			_, err := ec2.NewFromConfig(cfg).DescribeImages(ctx, &ec2.DescribeImagesInput{})
			return err
		}},
		{"ssm:GetParameter", "AccessDeniedException", func() error {
			_, err := ssm.NewFromConfig(cfg).GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id")})
			return err
		}},
	} {
		var ae smithy.APIError
		err := c.call()
		if !errors.As(err, &ae) || ae.ErrorCode() != c.code || !strings.Contains(ae.ErrorMessage(), "not authorized to perform: "+c.action) {
			t.Errorf("%s: %v, want %s naming the action", c.action, err, c.code)
		}
	}
}
