package twinaws

import (
	"context"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/awsport/conformance"
	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeport/twinport"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	twineks "github.com/ladder-eks/ladder/internal/twin/eks"
	"github.com/ladder-eks/ladder/internal/twin/mng"
	"github.com/ladder-eks/ladder/internal/twin/twintest"
	"github.com/ladder-eks/ladder/internal/twin/worker"
)

// t0 is a day on which EKS offers 1.30 and 1.31, with AMIs for both.
var t0 = time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)

var zones = []string{"us-west-2a", "us-west-2b", "us-west-2c"}

// twinCluster is the twins of one cluster wired as a rehearsal wires them:
// a 1.30 control plane, two managed node groups of two nodes each, and
// vpc-cni, whose rollout (EKSOptions.ApplyAddon) takes two minutes.
type twinCluster struct {
	eks  *EKS
	port *twinport.Port
}

const addonRollout = 2 * time.Minute

func newTwinCluster(t *testing.T) *twinCluster {
	t.Helper()
	base := twintest.New(t0, 1, zones...)
	eng, kc, cloud := base.Eng, base.Kube, base.Cloud
	cp := twineks.New(eng, "conformance", "us-west-2", kubeversion.MustParse("1.30"), 0)
	cp.Kubelets = func() map[string]string {
		out := map[string]string{}
		for _, n := range kc.Nodes() {
			out[n.Name] = n.Status.NodeInfo.KubeletVersion
		}
		return out
	}
	groups := mng.New(eng, kc, worker.New(eng, kc, cloud, worker.Timings{}), mng.Options{
		InstanceTypes: catalog.InstanceTypes(), Zones: zones,
		ControlPlaneVersion: cp.Version,
	})
	cp.NodeGroupVersions = groups.Versions
	for _, name := range []string{"blue", "green"} {
		if err := groups.Adopt(nodegroup.Spec{Name: name, InstanceTypes: []string{"m5.large"}, Desired: 2, Min: 1, Max: 4}, 24*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	e := NewEKS(EKSOptions{
		Engine: eng, Cluster: "conformance", Region: "us-west-2",
		ControlPlane: cp, Nodegroups: groups,
		Addons: []Addon{{Name: "vpc-cni", Version: "v1.18.3-eksbuild.1"}},
		ApplyAddon: func(string, string) (func() bool, error) {
			start := eng.Now()
			return func() bool { return eng.Now().Sub(start) >= addonRollout }, nil
		},
	})
	return &twinCluster{eks: e, port: twinport.New(kc, twinport.Options{})}
}

type eksHarness struct{}

func (eksHarness) NewEKSEnv(t *testing.T) conformance.EKSEnv { return newTwinCluster(t) }

func (c *twinCluster) EKS() awsport.EKS           { return c.eks }
func (c *twinCluster) Cluster() string            { return "conformance" }
func (c *twinCluster) Nodegroups() [2]string      { return [2]string{"green", "blue"} }
func (c *twinCluster) Addon() (name, next string) { return "vpc-cni", "v1.19.2-eksbuild.1" }
func (c *twinCluster) Wait(ctx context.Context, timeout time.Duration, cond kubeport.Condition) error {
	return c.port.Wait(ctx, timeout, cond)
}

// TestEKSConformance runs the EKS port's conformance suite on the twins.
func TestEKSConformance(t *testing.T) {
	conformance.RunEKS(t, eksHarness{})
}

type amiEnv struct{ *AMIs }

func (e amiEnv) Images() awsport.Images         { return e.AMIs }
func (e amiEnv) Parameters() awsport.Parameters { return e.AMIs }
func (amiEnv) Minor() string                    { return "1.31" }

// TestAMIConformance runs the AMI suite on the catalog, at t0.
func TestAMIConformance(t *testing.T) {
	conformance.RunAMI(t, amiEnv{NewAMIs(func() time.Time { return t0 })})
}

// The twin publishes an AMI only once it is released: on t0 the
// recommended 1.31 AMI is the seed's v20260320 release, before it the
// v20260220 one.
func TestRecommendedFollowsTheClock(t *testing.T) {
	name := "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id"
	for _, c := range []struct {
		at   time.Time
		want string
	}{
		{t0, "ami-0c4dea04571b1b508"},
		{time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), "ami-9611a9490b074d3c1"},
	} {
		out, err := NewAMIs(func() time.Time { return c.at }).GetParameter(context.Background(), &ssm.GetParameterInput{Name: &name})
		if err != nil || *out.Parameter.Value != c.want {
			t.Errorf("at %s: %v, %v; want %s", c.at.Format(time.DateOnly), out, err, c.want)
		}
	}
}

// asgCluster is two self-managed node groups of two nodes each, on the
// 1.30 AMI of the seed.
type asgCluster struct {
	api  *AutoScaling
	port *twinport.Port
}

type asgHarness struct{}

func (asgHarness) NewAutoScalingEnv(t *testing.T) conformance.AutoScalingEnv {
	return newASGCluster(t, 2, "workers-b", "workers-a")
}

func (c *asgCluster) AutoScaling() awsport.AutoScaling         { return c.api }
func (c *asgCluster) LaunchTemplates() awsport.LaunchTemplates { return c.api }
func (c *asgCluster) NextImage() string                        { return "ami-0c4dea04571b1b508" }
func (c *asgCluster) Groups() [2]string                        { return [2]string{"workers-b", "workers-a"} }
func (c *asgCluster) Wait(ctx context.Context, timeout time.Duration, cond kubeport.Condition) error {
	return c.port.Wait(ctx, timeout, cond)
}

// TestAutoScalingConformance runs the Auto Scaling suite on the twin.
func TestAutoScalingConformance(t *testing.T) {
	conformance.RunAutoScaling(t, asgHarness{})
}
