package awsserve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/awsport/conformance"
	"github.com/ladder-eks/ladder/internal/awsport/twinaws"
	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeport/twinport"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/asg"
	twinec2 "github.com/ladder-eks/ladder/internal/twin/ec2"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/worker"
)

// t0 is a day on which EKS offers 1.30 and 1.31, with AMIs for both.
var t0 = time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)

// serve starts h on 127.0.0.1 for the test.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// sdkConfig is how a caller configures aws-sdk-go-v2 for an endpoint of
// its own (aws-apis.md §1.8): a region to sign for and dummy static
// credentials; the clients sign every request with them.
func sdkConfig() aws.Config {
	return aws.Config{
		Region: "us-west-2",
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test", Source: "test"}, nil
		}),
	}
}

func autoScalingClient(url string) *autoscaling.Client {
	return autoscaling.NewFromConfig(sdkConfig(), func(o *autoscaling.Options) { o.BaseEndpoint = aws.String(url) })
}

func ec2Client(url string) *ec2.Client {
	return ec2.NewFromConfig(sdkConfig(), func(o *ec2.Options) { o.BaseEndpoint = aws.String(url) })
}

// wireASG is two self-managed groups of two nodes on the twins, served
// over Auto Scaling's and EC2's query protocols and called through the
// SDK's own clients; Wait advances the twin behind the servers.
type wireASG struct {
	api  *autoscaling.Client
	lts  *ec2.Client
	port *twinport.Port
}

type wireASGHarness struct{}

func (wireASGHarness) NewAutoScalingEnv(t *testing.T) conformance.AutoScalingEnv {
	eng := sim.New(t0, 1)
	zones := []string{"us-west-2a", "us-west-2b", "us-west-2c"}
	kc := kube.New(eng, kube.Options{Region: "us-west-2", Zones: zones})
	a := asg.New(eng, kc, worker.New(eng, kc, twinec2.New("us-west-2", zones, eng.Rand()), worker.Timings{}),
		asg.Options{InstanceTypes: catalog.InstanceTypes(), Zones: zones})
	for _, name := range []string{"workers-b", "workers-a"} {
		if err := a.Create(asg.Spec{Name: name, InstanceType: "m5.large", Desired: 2, Min: 2, Max: 4,
			LaunchTemplate: asg.LaunchTemplate{Name: name, Version: "1", ImageID: "ami-0f676a166352f02ab"}}, 24*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	ports := twinaws.NewAutoScaling(a)
	return &wireASG{
		api:  autoScalingClient(serve(t, NewAutoScaling(ports))),
		lts:  ec2Client(serve(t, NewEC2(twinaws.NewAMIs(eng.Now), ports))),
		port: twinport.New(kc, twinport.Options{}),
	}
}

func (e *wireASG) AutoScaling() awsport.AutoScaling         { return e.api }
func (e *wireASG) LaunchTemplates() awsport.LaunchTemplates { return e.lts }
func (e *wireASG) Groups() [2]string                        { return [2]string{"workers-b", "workers-a"} }
func (e *wireASG) NextImage() string                        { return "ami-0c4dea04571b1b508" }
func (e *wireASG) Wait(ctx context.Context, timeout time.Duration, cond kubeport.Condition) error {
	return e.port.Wait(ctx, timeout, cond)
}

// TestAutoScalingConformanceOverTheWire runs the Auto Scaling suite on the
// twin behind NewAutoScaling and NewEC2, through aws-sdk-go-v2's clients.
func TestAutoScalingConformanceOverTheWire(t *testing.T) {
	conformance.RunAutoScaling(t, wireASGHarness{})
}
