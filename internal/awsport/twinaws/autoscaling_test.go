package twinaws

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeport/twinport"
	"github.com/ladder-eks/ladder/internal/twin/asg"
	"github.com/ladder-eks/ladder/internal/twin/twintest"
	"github.com/ladder-eks/ladder/internal/twin/worker"
)

// newASGCluster is self-managed groups of desired m5.large instances each,
// launch template <name>:1 on the seed's 1.30 AMI, running for a day.
func newASGCluster(t *testing.T, desired int, names ...string) *asgCluster {
	t.Helper()
	base := twintest.New(t0, 1, zones...)
	eng, kc := base.Eng, base.Kube
	a := asg.New(eng, kc, worker.New(eng, kc, base.Cloud, worker.Timings{}), asg.Options{InstanceTypes: catalog.InstanceTypes(), Zones: zones})
	for _, name := range names {
		if err := a.Create(asg.Spec{Name: name, InstanceType: "m5.large", Desired: desired, Min: desired, Max: 2 * desired,
			LaunchTemplate: asg.LaunchTemplate{Name: name, Version: "1", ImageID: "ami-0f676a166352f02ab"}}, 24*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	return &asgCluster{api: NewAutoScaling(a).WithClock(eng.Now), port: twinport.New(kc, twinport.Options{})}
}

func describeRefreshes(t *testing.T, api *AutoScaling, group, id string) asgtypes.InstanceRefresh {
	t.Helper()
	out, err := api.DescribeInstanceRefreshes(context.Background(), &autoscaling.DescribeInstanceRefreshesInput{
		AutoScalingGroupName: aws.String(group), InstanceRefreshIds: []string{id}})
	if err != nil || len(out.InstanceRefreshes) != 1 {
		t.Fatalf("DescribeInstanceRefreshes %s: %v, %v", id, out, err)
	}
	return out.InstanceRefreshes[0]
}

// DescribeInstanceRefreshes, read after every twin event as the executor's
// gate reads it, follows the refresh: all four instances to update at the
// start, half of them once the first set of two has warmed up, none when
// it succeeds.
func TestDescribeInstanceRefreshesFollowsTheRefresh(t *testing.T) {
	c := newASGCluster(t, 4, "workers")
	ctx := context.Background()
	out, err := c.api.StartInstanceRefresh(ctx, &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: aws.String("workers"),
		Preferences: &asgtypes.RefreshPreferences{MinHealthyPercentage: aws.Int32(50), InstanceWarmup: aws.Int32(60)}})
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(out.InstanceRefreshId)
	start := c.port.Now()
	var seen []string
	err = kubeport.WaitFor(ctx, c.port, 6*time.Hour, kubeport.Until{What: "refresh " + id, Holds: func(context.Context) (bool, error) {
		r := describeRefreshes(t, c.api, "workers", id)
		s := fmt.Sprintf("%s %d%% %d to update", r.Status, aws.ToInt32(r.PercentageComplete), aws.ToInt32(r.InstancesToUpdate))
		if r.EndTime != nil {
			s += fmt.Sprintf(" ended after %s", r.EndTime.Sub(start))
		}
		if len(seen) == 0 || seen[len(seen)-1] != s {
			seen = append(seen, s)
		}
		return r.Status != asgtypes.InstanceRefreshStatusInProgress, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"InProgress 0% 4 to update", "InProgress 50% 2 to update", "Successful 100% 0 to update ended after " + c.port.Now().Sub(start).String()}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("DescribeInstanceRefreshes went %q, want %q", seen, want)
	}
}

// DescribeInstanceRefreshes reads the refresh's record, not the group: a
// call costs the same on a group of 2 instances as on one of 40, so the
// executor can poll it after every event of a 5,000-node cluster.
func TestDescribeInstanceRefreshesCostsNothingInTheGroupsSize(t *testing.T) {
	allocs := map[int]float64{}
	for _, n := range []int{2, 40} {
		c := newASGCluster(t, n, "workers")
		out, err := c.api.StartInstanceRefresh(context.Background(), &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: aws.String("workers")})
		if err != nil {
			t.Fatal(err)
		}
		id := aws.ToString(out.InstanceRefreshId)
		describeRefreshes(t, c.api, "workers", id)
		allocs[n] = testing.AllocsPerRun(20, func() { describeRefreshes(t, c.api, "workers", id) })
	}
	if allocs[40] != allocs[2] {
		t.Errorf("DescribeInstanceRefreshes allocates %v times on 2 instances, %v on 40; want the same", allocs[2], allocs[40])
	}
}

// A refresh Auto Scaling refuses changes nothing: the group keeps the
// launch template version it ran, though the request named a newer one.
func TestRefusedRefreshKeepsTheLaunchTemplate(t *testing.T) {
	c := newASGCluster(t, 2, "workers")
	ctx := context.Background()
	if _, err := c.api.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateName: aws.String("workers"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-0c4dea04571b1b508")}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.api.StartInstanceRefresh(ctx, &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: aws.String("workers"),
		DesiredConfiguration: &asgtypes.DesiredConfiguration{LaunchTemplate: &asgtypes.LaunchTemplateSpecification{LaunchTemplateName: aws.String("workers"), Version: aws.String("$Latest")}},
		Preferences:          &asgtypes.RefreshPreferences{MaxHealthyPercentage: aws.Int32(150)}})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "ValidationError" {
		t.Fatalf("StartInstanceRefresh with MaxHealthyPercentage alone: %v, want a ValidationError", err)
	}
	out, err := c.api.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{"workers"}})
	if err != nil {
		t.Fatal(err)
	}
	if v := aws.ToString(out.AutoScalingGroups[0].LaunchTemplate.Version); v != "1" {
		t.Errorf("after the refused refresh the group runs workers:%s, want workers:1", v)
	}
}

// The account has one store: once the EKS port's launch templates take
// the Auto Scaling port's in, either port answers for both kinds of group,
// and a version made through one is the one a refresh started through the
// other rolls out.
func TestOneLaunchTemplateStore(t *testing.T) {
	tc, ctx := clusterAt131(t)
	withCustomGroup(t, tc)
	c := newASGCluster(t, 1, "workers")
	lts := tc.eks.LaunchTemplates(c.api)
	if got := describeVersions(c.api, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String("custom")}); len(got) != 1 || got[0][:7] != "custom/" {
		t.Fatalf("the managed group's template through the Auto Scaling port: %q", got)
	}
	if _, err := lts.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateName: aws.String("workers"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(ami131)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.api.StartInstanceRefresh(ctx, &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: aws.String("workers"),
		DesiredConfiguration: &asgtypes.DesiredConfiguration{LaunchTemplate: &asgtypes.LaunchTemplateSpecification{
			LaunchTemplateName: aws.String("workers"), Version: aws.String("$Latest")}}}); err != nil {
		t.Fatal(err)
	}
	if st, _ := c.api.asg.Status("workers"); st.LaunchTemplate.Version != "2" || st.LaunchTemplate.ImageID != ami131 {
		t.Fatalf("workers' launch template after the refresh started: %+v, want version 2 with %s", st.LaunchTemplate, ami131)
	}
	if tc.eks.LaunchTemplates(c.api) != lts {
		t.Fatal("joining the same ports twice made a second store")
	}
}
