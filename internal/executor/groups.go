package executor

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/rules/instancerefresh"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// ScenarioGroups are a scenario's node groups as the strategies take them
// (spec.nodeGroups[].upgrade): force, the green group, the refresh
// preferences, the NodePool and AMI mode. subnet names a zone's subnet for
// a green group given zones (nil: green takes blue's subnets).
func ScenarioGroups(sc *scenario.Scenario, subnet func(zone string) string) map[string]Group {
	out := make(map[string]Group, len(sc.Spec.NodeGroups))
	for _, g := range sc.Spec.NodeGroups {
		var eg Group
		if u := g.Upgrade; u != nil {
			eg.Force, eg.AMI = u.Force, u.AMI
			if u.Green != nil {
				eg.Green = scenarioGreen(u.Green, subnet)
			}
			if u.Refresh != nil {
				eg.Refresh = RefreshPreferences(u.Refresh.ASG())
			}
		}
		if g.Karpenter != nil {
			eg.NodePool = g.Karpenter.NodePool
		}
		out[g.Name] = eg
	}
	return out
}

func scenarioGreen(o *scenario.GreenGroup, subnet func(string) string) *Green {
	gr := &Green{Name: o.Name, InstanceTypes: o.InstanceTypes, Labels: o.Labels}
	if subnet != nil {
		for _, z := range o.Zones {
			gr.Subnets = append(gr.Subnets, subnet(z))
		}
	}
	if o.Desired != nil {
		gr.Desired = aws.Int32(int32(*o.Desired))
	}
	if o.Taints != nil {
		gr.Taints = []ekstypes.Taint{}
		for _, t := range o.Taints {
			gr.Taints = append(gr.Taints, ekstypes.Taint{Key: aws.String(t.Key), Value: aws.String(t.Value), Effect: awsport.EKSTaintEffect(t.Effect)})
		}
	}
	return gr
}

// RefreshPreferences are a scenario's refresh preferences as
// StartInstanceRefresh takes them.
func RefreshPreferences(p instancerefresh.Preferences) *asgtypes.RefreshPreferences {
	out := &asgtypes.RefreshPreferences{
		MinHealthyPercentage: int32Of(p.MinHealthyPercentage),
		MaxHealthyPercentage: int32Of(p.MaxHealthyPercentage),
		InstanceWarmup:       secondsOf(p.InstanceWarmup),
		CheckpointDelay:      secondsOf(p.CheckpointDelay),
		SkipMatching:         aws.Bool(p.SkipMatching),
	}
	for _, c := range p.CheckpointPercentages {
		out.CheckpointPercentages = append(out.CheckpointPercentages, int32(c))
	}
	if p.BakeTime > 0 {
		out.BakeTime = secondsOf(&p.BakeTime)
	}
	return out
}

func int32Of(p *int) *int32 {
	if p == nil {
		return nil
	}
	return aws.Int32(int32(*p))
}

func secondsOf(d *time.Duration) *int32 {
	if d == nil {
		return nil
	}
	return aws.Int32(int32(*d / time.Second))
}
