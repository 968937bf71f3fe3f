package awsserve_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// EKS's documented limits on a node group, each refused through the SDK
// as EKS refuses it — a typed InvalidParameterException, 400, naming the
// member — before the twins act: the node group's name, its labels' keys
// and values, its taints' number, keys, values and effects; and a query
// parameter of one value given twice.
func TestEKSInputValidation(t *testing.T) {
	c := newWireCluster(t)
	long := strings.Repeat("k", 64)
	create := func(mutate func(*eks.CreateNodegroupInput)) func() error {
		return func() error {
			in := &eks.CreateNodegroupInput{ClusterName: aws.String("wire"), NodegroupName: aws.String("green"),
				NodeRole: aws.String("arn:aws:iam::111122223333:role/node"), Subnets: []string{"subnet-1"},
				Labels: map[string]string{"role": "web"}, Taints: []ekstypes.Taint{{Key: aws.String("dedicated"), Value: aws.String("web"), Effect: ekstypes.TaintEffectNoSchedule}}}
			mutate(in)
			_, err := c.client.CreateNodegroup(t.Context(), in)
			return err
		}
	}
	taints := func(n int) []ekstypes.Taint {
		out := make([]ekstypes.Taint, n)
		for i := range out {
			out[i] = ekstypes.Taint{Key: aws.String("k" + strings.Repeat("x", i%10)), Effect: ekstypes.TaintEffectNoSchedule}
		}
		return out
	}
	for _, tc := range []struct {
		name, want string
		call       func() error
	}{
		{"nodegroup name too long", "nodegroupName '" + strings.Repeat("n", 64) + "' is not a valid node group name",
			create(func(in *eks.CreateNodegroupInput) { in.NodegroupName = aws.String(strings.Repeat("n", 64)) })},
		{"nodegroup name starting with a hyphen", "nodegroupName '-green' is not a valid node group name",
			create(func(in *eks.CreateNodegroupInput) { in.NodegroupName = aws.String("-green") })},
		{"nodegroup name with a dot", "nodegroupName 'green.1' is not a valid node group name",
			create(func(in *eks.CreateNodegroupInput) { in.NodegroupName = aws.String("green.1") })},
		{"label key too long", "labels: key '" + long + "' has 64 characters; a label key has 1 to 63",
			create(func(in *eks.CreateNodegroupInput) { in.Labels = map[string]string{long: "v"} })},
		{"label value empty", "labels: the value of 'role' has 0 characters; a label value has 1 to 63",
			create(func(in *eks.CreateNodegroupInput) { in.Labels = map[string]string{"role": ""} })},
		{"label value too long", "labels: the value of 'role' has 64 characters",
			create(func(in *eks.CreateNodegroupInput) { in.Labels = map[string]string{"role": long} })},
		{"label key not a Kubernetes key", "labels: key 'my role' is not a Kubernetes label key",
			create(func(in *eks.CreateNodegroupInput) { in.Labels = map[string]string{"my role": "web"} })},
		{"51 taints", "taints: 51 given; a node group has at most 50",
			create(func(in *eks.CreateNodegroupInput) { in.Taints = taints(51) })},
		{"taint key too long", "taints[0]: key '" + long + "' has 64 characters; a taint key has 1 to 63",
			create(func(in *eks.CreateNodegroupInput) { in.Taints[0].Key = aws.String(long) })},
		{"taint key empty", "taints[0]: key '' has 0 characters",
			create(func(in *eks.CreateNodegroupInput) { in.Taints[0].Key = nil })},
		{"taint value too long", "taints[0]: the value of 'dedicated' has 64 characters; a taint value has at most 63",
			create(func(in *eks.CreateNodegroupInput) { in.Taints[0].Value = aws.String(long) })},
		{"taint value not a Kubernetes value", "taints[0]: the value 'web app' of 'dedicated' is not a Kubernetes taint value",
			create(func(in *eks.CreateNodegroupInput) { in.Taints[0].Value = aws.String("web app") })},
		{"taint effect in Kubernetes' spelling", "taints[0]: effect 'NoSchedule' is not one of NO_SCHEDULE, NO_EXECUTE, PREFER_NO_SCHEDULE",
			create(func(in *eks.CreateNodegroupInput) { in.Taints[0].Effect = "NoSchedule" })},
		{"query parameter given twice", "nodegroupName is given 2 times; give it once", func() error {
			_, err := c.client.DescribeUpdate(t.Context(), &eks.DescribeUpdateInput{Name: aws.String("wire"), UpdateId: aws.String("u"), NodegroupName: aws.String("system")},
				func(o *eks.Options) {
					o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
						return s.Build.Add(middleware.BuildMiddlewareFunc("duplicate", func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
							req := in.Request.(*smithyhttp.Request)
							req.URL.RawQuery += "&nodegroupName=apps"
							return next.HandleBuild(ctx, in)
						}), middleware.After)
					})
				})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var ipe *ekstypes.InvalidParameterException
			var re interface{ HTTPStatusCode() int }
			if !errors.As(err, &ipe) || !errors.As(err, &re) || re.HTTPStatusCode() != 400 || !strings.HasPrefix(aws.ToString(ipe.Message), tc.want) {
				t.Errorf("%v\nwant 400 InvalidParameterException %q", err, tc.want)
			}
		})
	}
	if _, err := c.client.DescribeNodegroup(t.Context(), &eks.DescribeNodegroupInput{ClusterName: aws.String("wire"), NodegroupName: aws.String("green")}); err == nil {
		t.Errorf("a refused CreateNodegroup created its node group")
	}
}
