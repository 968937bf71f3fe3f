package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/kubeport"
)

// AutoScalingHarness makes environments for the Auto Scaling suite.
type AutoScalingHarness interface {
	NewAutoScalingEnv(t *testing.T) AutoScalingEnv
}

// AutoScalingEnv is an account with two Auto Scaling groups of nodes, each
// with instances in service and no lifecycle hook.
type AutoScalingEnv interface {
	AutoScaling() awsport.AutoScaling
	// LaunchTemplates are the account's EC2 launch templates, among them
	// the groups'.
	LaunchTemplates() awsport.LaunchTemplates
	Groups() [2]string
	// NextImage is an AMI the groups' instances can boot, other than the
	// one they run.
	NextImage() string
	// Wait is kubeport.Port.Wait (see EKSEnv).
	Wait(ctx context.Context, timeout time.Duration, cond kubeport.Condition) error
}

// RunAutoScaling runs the Auto Scaling suite against h.
func RunAutoScaling(t *testing.T, h AutoScalingHarness) {
	runCases(t, []namedCase[AutoScalingEnv]{
		{"autoscaling/unknown-group", asgUnknown},
		{"autoscaling/instance-refresh", asgRefresh},
		{"autoscaling/lifecycle-hooks", asgHooks},
		{"autoscaling/new-image-by-launch-template", asgNewImage},
		{"autoscaling/pagination", asgPagination},
		{"autoscaling/required-members", asgRequiredMembers},
		{"autoscaling/launch-template-members", asgLaunchTemplateMembers},
		{"autoscaling/surge-and-terminate", asgSurgeAndTerminate},
	}, true, h.NewAutoScalingEnv)
}

func wantCode(call string, err error, code string) error {
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != code {
		return fmt.Errorf("%s: %v, want the error code %s", call, err, code)
	}
	return nil
}

// asgUnknown: an unknown group is left out of DescribeAutoScalingGroups
// and a ValidationError elsewhere (aws-apis.md §3.1).
func asgUnknown(ctx context.Context, env AutoScalingEnv) error {
	api := env.AutoScaling()
	out, err := api.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{"missing"}})
	if err != nil || len(out.AutoScalingGroups) != 0 {
		return fmt.Errorf("DescribeAutoScalingGroups of a missing group: %v, %v; want no groups", out, err)
	}
	_, err = api.DescribeInstanceRefreshes(ctx, &autoscaling.DescribeInstanceRefreshesInput{AutoScalingGroupName: aws.String("missing")})
	if err := wantCode("DescribeInstanceRefreshes of a missing group", err, "ValidationError"); err != nil {
		return err
	}
	_, err = api.StartInstanceRefresh(ctx, &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: aws.String("missing")})
	return wantCode("StartInstanceRefresh of a missing group", err, "ValidationError")
}

// asgRefresh: the instance refresh state machine (aws-apis.md §3.3): a
// refresh is active, a second one meanwhile is
// InstanceRefreshInProgressFault; it ends Successful with 100% complete and
// nothing left to update, every instance replaced; refreshes list newest
// first.
func asgRefresh(ctx context.Context, env AutoScalingEnv) error {
	api, group := env.AutoScaling(), env.Groups()[0]
	before, err := api.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{group}})
	if err != nil || len(before.AutoScalingGroups) != 1 {
		return fmt.Errorf("DescribeAutoScalingGroups %s: %v, %v", group, before, err)
	}
	oldIDs := instanceIDs(before.AutoScalingGroups[0])
	if len(oldIDs) == 0 {
		return fmt.Errorf("group %s has no instances", group)
	}
	start := &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: &group,
		Preferences: &asgtypes.RefreshPreferences{MinHealthyPercentage: aws.Int32(50), InstanceWarmup: aws.Int32(60)}}
	out, err := api.StartInstanceRefresh(ctx, start)
	if err != nil {
		return fmt.Errorf("StartInstanceRefresh %s: %w", group, err)
	}
	id := aws.ToString(out.InstanceRefreshId)
	_, err = api.StartInstanceRefresh(ctx, start)
	if _, err := wantError[*asgtypes.InstanceRefreshInProgressFault]("a second StartInstanceRefresh", err); err != nil {
		return err
	}
	if err := wantCode("a second StartInstanceRefresh", err, "InstanceRefreshInProgress"); err != nil {
		return err
	}
	var last asgtypes.InstanceRefresh
	polls := 0
	err = env.Wait(ctx, updateTimeout, func(ctx context.Context) (bool, error) {
		d, err := api.DescribeInstanceRefreshes(ctx, &autoscaling.DescribeInstanceRefreshesInput{AutoScalingGroupName: &group, InstanceRefreshIds: []string{id}})
		if err != nil {
			return false, err
		}
		if len(d.InstanceRefreshes) != 1 {
			return false, fmt.Errorf("DescribeInstanceRefreshes %s: %d refreshes, want 1", id, len(d.InstanceRefreshes))
		}
		// The refresh's progress only moves forward, from less than
		// 100% at the start, with at most the group's instances to update.
		r := d.InstanceRefreshes[0]
		pct, left := aws.ToInt32(r.PercentageComplete), aws.ToInt32(r.InstancesToUpdate)
		switch {
		case polls == 0 && pct >= 100:
			return false, fmt.Errorf("refresh %s at its start: %d%% complete, want less than 100%%", id, pct)
		case left > int32(len(oldIDs)):
			return false, fmt.Errorf("refresh %s: %d instances to update in a group of %d", id, left, len(oldIDs))
		case polls > 0 && (pct < aws.ToInt32(last.PercentageComplete) || left > aws.ToInt32(last.InstancesToUpdate)):
			return false, fmt.Errorf("refresh %s went back from %d%% (%d to update) to %d%% (%d to update)", id,
				aws.ToInt32(last.PercentageComplete), aws.ToInt32(last.InstancesToUpdate), pct, left)
		}
		polls++
		last = r
		switch last.Status {
		case asgtypes.InstanceRefreshStatusPending, asgtypes.InstanceRefreshStatusInProgress, asgtypes.InstanceRefreshStatusBaking:
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for refresh %s: %w", id, err)
	}
	if last.Status != asgtypes.InstanceRefreshStatusSuccessful || aws.ToInt32(last.PercentageComplete) != 100 || aws.ToInt32(last.InstancesToUpdate) != 0 || last.EndTime == nil {
		return fmt.Errorf("finished refresh: %s %d%% %d to update, end %v; want Successful, 100%%, 0, an end time", last.Status, aws.ToInt32(last.PercentageComplete), aws.ToInt32(last.InstancesToUpdate), last.EndTime)
	}
	after, err := api.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{group}})
	if err != nil {
		return err
	}
	for _, newID := range instanceIDs(after.AutoScalingGroups[0]) {
		if slices.Contains(oldIDs, newID) {
			return fmt.Errorf("instance %s survived the refresh", newID)
		}
	}
	second, err := api.StartInstanceRefresh(ctx, start)
	if err != nil {
		return fmt.Errorf("StartInstanceRefresh after the first finished: %w", err)
	}
	list, err := api.DescribeInstanceRefreshes(ctx, &autoscaling.DescribeInstanceRefreshesInput{AutoScalingGroupName: &group})
	if err != nil {
		return err
	}
	var ids []string
	for _, r := range list.InstanceRefreshes {
		ids = append(ids, aws.ToString(r.InstanceRefreshId))
	}
	if !slices.Equal(ids, []string{aws.ToString(second.InstanceRefreshId), id}) {
		return fmt.Errorf("DescribeInstanceRefreshes: %v, want the newest first [%s %s]", ids, aws.ToString(second.InstanceRefreshId), id)
	}
	return nil
}

func instanceIDs(g asgtypes.AutoScalingGroup) []string {
	var out []string
	for _, in := range g.Instances {
		out = append(out, aws.ToString(in.InstanceId))
	}
	return out
}

// asgHooks: a terminating hook put on a group is described with its
// timeouts (GlobalTimeout = min(48 h, 100 × heartbeat), aws-apis.md §3.4);
// completing an action no instance waits on is a ValidationError.
func asgHooks(ctx context.Context, env AutoScalingEnv) error {
	api, group := env.AutoScaling(), env.Groups()[1]
	_, err := api.PutLifecycleHook(ctx, &autoscaling.PutLifecycleHookInput{AutoScalingGroupName: &group, LifecycleHookName: aws.String("drain"),
		LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_TERMINATING"), HeartbeatTimeout: aws.Int32(300), DefaultResult: aws.String("CONTINUE")})
	if err != nil {
		return fmt.Errorf("PutLifecycleHook: %w", err)
	}
	out, err := api.DescribeLifecycleHooks(ctx, &autoscaling.DescribeLifecycleHooksInput{AutoScalingGroupName: &group})
	if err != nil {
		return err
	}
	if len(out.LifecycleHooks) != 1 {
		return fmt.Errorf("DescribeLifecycleHooks: %d hooks, want 1", len(out.LifecycleHooks))
	}
	h := out.LifecycleHooks[0]
	if aws.ToString(h.LifecycleHookName) != "drain" || aws.ToInt32(h.HeartbeatTimeout) != 300 || aws.ToInt32(h.GlobalTimeout) != 30000 || aws.ToString(h.DefaultResult) != "CONTINUE" {
		return fmt.Errorf("hook %s: heartbeat %d global %d default %s; want drain, 300, 30000, CONTINUE", aws.ToString(h.LifecycleHookName), aws.ToInt32(h.HeartbeatTimeout), aws.ToInt32(h.GlobalTimeout), aws.ToString(h.DefaultResult))
	}
	groups, err := api.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{group}})
	if err != nil {
		return err
	}
	inService := instanceIDs(groups.AutoScalingGroups[0])[0]
	_, err = api.CompleteLifecycleAction(ctx, &autoscaling.CompleteLifecycleActionInput{AutoScalingGroupName: &group, LifecycleHookName: aws.String("drain"),
		LifecycleActionResult: aws.String("CONTINUE"), InstanceId: &inService})
	return wantCode("CompleteLifecycleAction for an instance in service", err, "ValidationError")
}

// asgPagination: MaxRecords 1 pages through the groups in order; a token
// the service did not issue is InvalidNextToken.
func asgPagination(ctx context.Context, env AutoScalingEnv) error {
	api := env.AutoScaling()
	var got []string
	var token *string
	for pages := 0; pages < 10; pages++ {
		out, err := api.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{MaxRecords: aws.Int32(1), NextToken: token})
		if err != nil {
			return err
		}
		for _, g := range out.AutoScalingGroups {
			got = append(got, aws.ToString(g.AutoScalingGroupName))
		}
		if out.NextToken == nil {
			break
		}
		token = out.NextToken
	}
	want := env.Groups()
	slices.Sort(want[:])
	if !slices.Equal(got, want[:]) {
		return fmt.Errorf("DescribeAutoScalingGroups pages: %v, want %v", got, want)
	}
	_, err := api.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{NextToken: aws.String("not-a-token")})
	return wantCode("DescribeAutoScalingGroups with a foreign token", err, "InvalidNextToken")
}

// asgNewImage: how a self-managed group gets a new AMI — a new launch
// template version with the image (SourceVersion copies the rest; the same
// ClientToken returns the same version), then an instance refresh to
// $Latest; afterwards the group and every instance run that version.
func asgNewImage(ctx context.Context, env AutoScalingEnv) error {
	api, lts, group := env.AutoScaling(), env.LaunchTemplates(), env.Groups()[0]
	g, err := api.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{group}})
	if err != nil || len(g.AutoScalingGroups) != 1 || g.AutoScalingGroups[0].LaunchTemplate == nil {
		return fmt.Errorf("DescribeAutoScalingGroups %s: %v, %v; want one group with a launch template", group, g, err)
	}
	lt := g.AutoScalingGroups[0].LaunchTemplate
	_, err = lts.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String("missing-template")})
	if err := wantCode("DescribeLaunchTemplateVersions of a missing template", err, "InvalidLaunchTemplateName.NotFoundException"); err != nil {
		return err
	}
	create := &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateName: lt.LaunchTemplateName, SourceVersion: lt.Version,
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(env.NextImage())}, ClientToken: aws.String("conformance-new-image")}
	created, err := lts.CreateLaunchTemplateVersion(ctx, create)
	if err != nil {
		return fmt.Errorf("CreateLaunchTemplateVersion: %w", err)
	}
	v := created.LaunchTemplateVersion
	if aws.ToString(v.LaunchTemplateData.ImageId) != env.NextImage() || fmt.Sprint(aws.ToInt64(v.VersionNumber)) == aws.ToString(lt.Version) {
		return fmt.Errorf("created version %d with image %s, want a new version with %s", aws.ToInt64(v.VersionNumber), aws.ToString(v.LaunchTemplateData.ImageId), env.NextImage())
	}
	again, err := lts.CreateLaunchTemplateVersion(ctx, create)
	if err != nil || aws.ToInt64(again.LaunchTemplateVersion.VersionNumber) != aws.ToInt64(v.VersionNumber) {
		return fmt.Errorf("the same ClientToken again: %v, %v; want version %d", again, err, aws.ToInt64(v.VersionNumber))
	}
	latest, err := lts.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: lt.LaunchTemplateName, Versions: []string{"$Latest"}})
	if err != nil || len(latest.LaunchTemplateVersions) != 1 || aws.ToInt64(latest.LaunchTemplateVersions[0].VersionNumber) != aws.ToInt64(v.VersionNumber) {
		return fmt.Errorf("$Latest: %v, %v; want version %d", latest, err, aws.ToInt64(v.VersionNumber))
	}
	out, err := api.StartInstanceRefresh(ctx, &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: &group,
		DesiredConfiguration: &asgtypes.DesiredConfiguration{LaunchTemplate: &asgtypes.LaunchTemplateSpecification{LaunchTemplateName: lt.LaunchTemplateName, Version: aws.String("$Latest")}},
		Preferences:          &asgtypes.RefreshPreferences{MinHealthyPercentage: aws.Int32(50), InstanceWarmup: aws.Int32(60)}})
	if err != nil {
		return fmt.Errorf("StartInstanceRefresh to $Latest: %w", err)
	}
	err = env.Wait(ctx, updateTimeout, func(ctx context.Context) (bool, error) {
		d, err := api.DescribeInstanceRefreshes(ctx, &autoscaling.DescribeInstanceRefreshesInput{AutoScalingGroupName: &group, InstanceRefreshIds: []string{aws.ToString(out.InstanceRefreshId)}})
		if err != nil || len(d.InstanceRefreshes) != 1 {
			return false, err
		}
		return d.InstanceRefreshes[0].Status == asgtypes.InstanceRefreshStatusSuccessful, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the refresh to $Latest: %w", err)
	}
	g, err = api.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{group}})
	if err != nil {
		return err
	}
	want := fmt.Sprint(aws.ToInt64(v.VersionNumber))
	if got := aws.ToString(g.AutoScalingGroups[0].LaunchTemplate.Version); got != want {
		return fmt.Errorf("group's launch template version %s after the refresh, want %s", got, want)
	}
	for _, in := range g.AutoScalingGroups[0].Instances {
		if got, img := aws.ToString(in.LaunchTemplate.Version), aws.ToString(in.ImageId); got != want || img != env.NextImage() {
			return fmt.Errorf("instance %s runs launch template version %s, image %s after the refresh, want %s and %s", aws.ToString(in.InstanceId), got, img, want, env.NextImage())
		}
	}
	return nil
}

// asgRequiredMembers: a group has the CreatedTime the model requires, not
// after its instances' launch and unmoved by a refresh (aws-apis.md §3.2);
// a refresh's Preferences echo the checkpoints, their delay and the bake
// time it was started with (§3.3).
func asgRequiredMembers(ctx context.Context, env AutoScalingEnv) error {
	api, group := env.AutoScaling(), env.Groups()[0]
	describe := func() (asgtypes.AutoScalingGroup, error) { return describeGroup(ctx, api, group) }
	g, err := describe()
	if err != nil {
		return err
	}
	if g.CreatedTime == nil || g.CreatedTime.IsZero() {
		return fmt.Errorf("group %s has no CreatedTime", group)
	}
	start := &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: &group,
		Preferences: &asgtypes.RefreshPreferences{MinHealthyPercentage: aws.Int32(50), InstanceWarmup: aws.Int32(60),
			CheckpointPercentages: []int32{50, 100}, CheckpointDelay: aws.Int32(30), BakeTime: aws.Int32(20)}}
	out, err := api.StartInstanceRefresh(ctx, start)
	if err != nil {
		return fmt.Errorf("StartInstanceRefresh %s: %w", group, err)
	}
	d, err := api.DescribeInstanceRefreshes(ctx, &autoscaling.DescribeInstanceRefreshesInput{AutoScalingGroupName: &group, InstanceRefreshIds: []string{aws.ToString(out.InstanceRefreshId)}})
	if err != nil || len(d.InstanceRefreshes) != 1 {
		return fmt.Errorf("DescribeInstanceRefreshes: %v, %v", d, err)
	}
	p := d.InstanceRefreshes[0].Preferences
	if p == nil || !slices.Equal(p.CheckpointPercentages, []int32{50, 100}) || aws.ToInt32(p.CheckpointDelay) != 30 || aws.ToInt32(p.BakeTime) != 20 {
		return fmt.Errorf("refresh preferences %+v, want CheckpointPercentages [50 100], CheckpointDelay 30, BakeTime 20", p)
	}
	after, err := describe()
	if err != nil {
		return err
	}
	if after.CreatedTime == nil || !after.CreatedTime.Equal(*g.CreatedTime) {
		return fmt.Errorf("CreatedTime %v after a refresh started, was %v", after.CreatedTime, g.CreatedTime)
	}
	return nil
}

// asgLaunchTemplateMembers: a group's launch template has an id even when
// the group names it by name, and callers may address it by that id; a
// created version has its CreateTime and DefaultVersion (aws-apis.md §4).
func asgLaunchTemplateMembers(ctx context.Context, env AutoScalingEnv) error {
	group := env.Groups()[0]
	g, err := env.AutoScaling().DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{group}})
	if err != nil || len(g.AutoScalingGroups) != 1 || g.AutoScalingGroups[0].LaunchTemplate == nil {
		return fmt.Errorf("DescribeAutoScalingGroups %s: %v, %v; want its launch template", group, g, err)
	}
	name := g.AutoScalingGroups[0].LaunchTemplate.LaunchTemplateName
	lts := env.LaunchTemplates()
	out, err := lts.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateName: name,
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(env.NextImage())}})
	if err != nil {
		return fmt.Errorf("CreateLaunchTemplateVersion %s: %w", aws.ToString(name), err)
	}
	v := out.LaunchTemplateVersion
	if aws.ToString(v.LaunchTemplateId) == "" || v.CreateTime == nil || v.DefaultVersion == nil || *v.DefaultVersion {
		return fmt.Errorf("created version: id %q, CreateTime %v, DefaultVersion %v; want an id, a time, false",
			aws.ToString(v.LaunchTemplateId), v.CreateTime, v.DefaultVersion)
	}
	d, err := lts.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateId: v.LaunchTemplateId,
		Versions: []string{"$Latest"}})
	if err != nil || len(d.LaunchTemplateVersions) != 1 || aws.ToInt64(d.LaunchTemplateVersions[0].VersionNumber) != aws.ToInt64(v.VersionNumber) {
		return fmt.Errorf("DescribeLaunchTemplateVersions by id %s: %v, %v; want version %d", aws.ToString(v.LaunchTemplateId), d, err, aws.ToInt64(v.VersionNumber))
	}
	return nil
}

// asgSurgeAndTerminate: how Ladder replaces a group's instances itself
// (--strategy ladder): SetDesiredCapacity above MaxSize is a
// ValidationError; one more instance is launched and comes InService;
// TerminateInstanceInAutoScalingGroup with ShouldDecrementDesiredCapacity
// takes an old instance out with its capacity (an activity of its group,
// naming the instance) and nothing replaces it; terminating it again is a
// ValidationError.
func asgSurgeAndTerminate(ctx context.Context, env AutoScalingEnv) error {
	api, group := env.AutoScaling(), env.Groups()[1]
	describe := func() (asgtypes.AutoScalingGroup, error) { return describeGroup(ctx, api, group) }
	g, err := describe()
	if err != nil {
		return err
	}
	desired, max := aws.ToInt32(g.DesiredCapacity), aws.ToInt32(g.MaxSize)
	if desired >= max {
		return fmt.Errorf("group %s: desired %d, max %d; the suite needs room for one more", group, desired, max)
	}
	_, err = api.SetDesiredCapacity(ctx, &autoscaling.SetDesiredCapacityInput{AutoScalingGroupName: &group, DesiredCapacity: aws.Int32(max + 1)})
	if err := wantCode("SetDesiredCapacity above MaxSize", err, "ValidationError"); err != nil {
		return err
	}
	old := instanceIDs(g)
	if _, err := api.SetDesiredCapacity(ctx, &autoscaling.SetDesiredCapacityInput{AutoScalingGroupName: &group, DesiredCapacity: aws.Int32(desired + 1)}); err != nil {
		return fmt.Errorf("SetDesiredCapacity %d: %w", desired+1, err)
	}
	inService := func(want int, gone string) kubeport.Condition {
		return func(ctx context.Context) (bool, error) {
			g, err := describe()
			if err != nil {
				return false, err
			}
			n := 0
			for _, in := range g.Instances {
				if aws.ToString(in.InstanceId) == gone {
					return false, nil
				}
				if in.LifecycleState == asgtypes.LifecycleStateInService {
					n++
				}
			}
			return n == want && len(g.Instances) == want, nil
		}
	}
	if err := env.Wait(ctx, updateTimeout, inService(int(desired)+1, "")); err != nil {
		return fmt.Errorf("waiting for %d instances in service: %w", desired+1, err)
	}
	out, err := api.TerminateInstanceInAutoScalingGroup(ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{InstanceId: &old[0], ShouldDecrementDesiredCapacity: aws.Bool(true)})
	if err != nil {
		return fmt.Errorf("TerminateInstanceInAutoScalingGroup %s: %w", old[0], err)
	}
	if a := out.Activity; a == nil || aws.ToString(a.AutoScalingGroupName) != group || a.ActivityId == nil || !strings.Contains(aws.ToString(a.Description), old[0]) {
		return fmt.Errorf("TerminateInstanceInAutoScalingGroup %s: activity %+v, want one of group %s naming the instance", old[0], a, group)
	}
	if g, err = describe(); err != nil || aws.ToInt32(g.DesiredCapacity) != desired {
		return fmt.Errorf("after a decrementing termination: desired %d (%v), want %d", aws.ToInt32(g.DesiredCapacity), err, desired)
	}
	if err := env.Wait(ctx, updateTimeout, inService(int(desired), old[0])); err != nil {
		return fmt.Errorf("waiting for %s to leave with no replacement: %w", old[0], err)
	}
	_, err = api.TerminateInstanceInAutoScalingGroup(ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{InstanceId: &old[0], ShouldDecrementDesiredCapacity: aws.Bool(true)})
	return wantCode("TerminateInstanceInAutoScalingGroup of a terminated instance", err, "ValidationError")
}

// describeGroup is DescribeAutoScalingGroups of the one group.
func describeGroup(ctx context.Context, api awsport.AutoScaling, group string) (asgtypes.AutoScalingGroup, error) {
	out, err := api.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{group}})
	if err != nil || len(out.AutoScalingGroups) != 1 {
		return asgtypes.AutoScalingGroup{}, fmt.Errorf("DescribeAutoScalingGroups %s: %v, %v", group, out, err)
	}
	return out.AutoScalingGroups[0], nil
}
