// Package sdkaws is the AWS ports (internal/awsport) over aws-sdk-go-v2's
// own clients: what `ladder capture` and `ladder upgrade` call a real
// account with. Configuration is the SDK's default chain and nothing else —
// credentials from the environment, the shared config and credentials
// files (profiles, SSO, assumed roles), the container or instance role;
// the region from AWS_REGION or the profile; endpoints from
// AWS_ENDPOINT_URL_<SERVICE> (which is how the lab's endpoints are used).
// Ladder never reads, stores or prints a credential itself.
package sdkaws

import (
	"context"
	"fmt"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/ladder-eks/ladder/internal/awsport"
)

// RequestTimeout bounds one attempt of one call, from sending it to reading
// the whole answer: every operation Ladder calls answers in well under a
// second, so an attempt still open after this is stuck (a dead connection,
// a hung proxy), and the SDK's retryer tries again — with the same client
// request token for the calls that take one, so a retried update is the
// same update. Without it an attempt could wait for ever.
const RequestTimeout = 30 * time.Second

// requestTimeout is RequestTimeout; the tests shorten it.
var requestTimeout = RequestTimeout

// New loads the SDK's default configuration — region overrides the
// chain's when not empty — and returns the ports of that account and
// region, and the region.
func New(ctx context.Context, region string) (awsport.Ports, string, error) {
	opts := []func(*config.LoadOptions) error{
		config.WithHTTPClient(awshttp.NewBuildableClient().WithTimeout(requestTimeout)),
	}
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return awsport.Ports{}, "", fmt.Errorf("loading the AWS configuration: %v (check AWS_PROFILE and ~/.aws/config)", err)
	}
	if cfg.Region == "" {
		return awsport.Ports{}, "", fmt.Errorf("no AWS region: set AWS_REGION or the profile's region (or --region where a command has it)")
	}
	e := ec2.NewFromConfig(cfg)
	return awsport.Ports{
		EKS:             eks.NewFromConfig(cfg),
		AutoScaling:     autoscaling.NewFromConfig(cfg),
		LaunchTemplates: e,
		Images:          e,
		Parameters:      ssm.NewFromConfig(cfg),
	}, cfg.Region, nil
}
