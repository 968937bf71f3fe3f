package twinaws

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/smithy-go"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/rules/instancerefresh"
	"github.com/ladder-eks/ladder/internal/twin/asg"
)

// asgMaxRecords is Auto Scaling's page limit (MaxRecords, default 50, at
// most 100; aws-apis.md §3.1).
const (
	asgDefaultRecords = 50
	asgMaxRecords     = 100
)

// AutoScaling is awsport.AutoScaling on the Auto Scaling twin (twin/asg):
// self-managed node groups, their instance refreshes (semantics.md §C,
// aws-apis.md §3.3) and terminating lifecycle hooks (§3.4).
type AutoScaling struct {
	asg *asg.ASG
	// past are the refreshes each group finished before its current one,
	// newest first: the twin keeps only a group's last refresh.
	past map[string][]asgtypes.InstanceRefresh
	// current holds each group's current refresh as last built for
	// DescribeInstanceRefreshes, rebuilt only when its progress changes:
	// the executor polls a refresh after every twin event.
	current map[string]builtRefresh
	// lts is the account's launch templates (launchtemplates.go), shared
	// with the EKS port's once EKS.LaunchTemplates joins them.
	lts *launchTemplates
	// created is each group's CreatedTime, which the model requires
	// (aws-apis.md §3.2): its first instances' launch, kept from the first
	// look so that a refresh's new instances do not move it.
	created map[string]time.Time
	// activities numbers the scaling activities the port started, for
	// their ids.
	activities uint64
}

var _ awsport.AutoScaling = (*AutoScaling)(nil)

// NewAutoScaling returns the Auto Scaling port of the twin a.
func NewAutoScaling(a *asg.ASG) *AutoScaling {
	s := &AutoScaling{asg: a, past: map[string][]asgtypes.InstanceRefresh{}, current: map[string]builtRefresh{}, created: map[string]time.Time{}}
	s.lts = newLaunchTemplates(s.groupTemplates)
	for _, name := range a.Groups() {
		if st, err := a.Status(name); err == nil {
			s.createdTime(st)
		}
	}
	return s
}

// WithClock gives the port's launch templates the twin's clock, for the
// CreateTime of the versions CreateLaunchTemplateVersion makes; New's ports
// have the EKS engine's. It returns a.
func (a *AutoScaling) WithClock(now func() time.Time) *AutoScaling {
	a.lts.now = now
	return a
}

// asgError is an Auto Scaling error as the SDK returns it: a modelled
// fault as its typed struct, ValidationError (unmodelled) as a
// smithy.GenericAPIError (aws-apis.md §3.5). The twin's messages start with
// the code when it is not a ValidationError.
func asgError(err error) error {
	msg := err.Error()
	code, rest, ok := strings.Cut(msg, ": ")
	if !ok {
		code, rest = "ValidationError", msg
	}
	switch code {
	case "InstanceRefreshInProgress":
		return &asgtypes.InstanceRefreshInProgressFault{Message: &rest}
	case "ActiveInstanceRefreshNotFound":
		return &asgtypes.ActiveInstanceRefreshNotFoundFault{Message: &rest}
	case "ValidationError":
		return &smithy.GenericAPIError{Code: "ValidationError", Message: rest, Fault: smithy.FaultClient}
	}
	return &smithy.GenericAPIError{Code: "ValidationError", Message: msg, Fault: smithy.FaultClient}
}

func groupNotFound(name string) error {
	return &smithy.GenericAPIError{Code: "ValidationError", Message: "AutoScalingGroup name not found - " + name, Fault: smithy.FaultClient}
}

func (a *AutoScaling) status(name string) (asg.GroupStatus, error) {
	st, err := a.asg.Status(name)
	if err != nil {
		return st, groupNotFound(name)
	}
	return st, nil
}

// DescribeAutoScalingGroups implements awsport.AutoScaling: the named
// groups (unknown names are left out, as the API does) or all of them, in
// name order, paginated by MaxRecords/NextToken.
func (a *AutoScaling) DescribeAutoScalingGroups(_ context.Context, in *autoscaling.DescribeAutoScalingGroupsInput, _ ...func(*autoscaling.Options)) (*autoscaling.DescribeAutoScalingGroupsOutput, error) {
	names := a.asg.Groups()
	if len(in.AutoScalingGroupNames) > 0 {
		names = nil
		for _, n := range a.asg.Groups() {
			if contains(in.AutoScalingGroupNames, n) {
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	max := in.MaxRecords
	if max == nil {
		max = aws.Int32(asgDefaultRecords)
	}
	page, next, err := page(names, max, in.NextToken, asgMaxRecords)
	if err != nil {
		return nil, &asgtypes.InvalidNextToken{Message: ptr(err.Error())}
	}
	out := &autoscaling.DescribeAutoScalingGroupsOutput{AutoScalingGroups: []asgtypes.AutoScalingGroup{}, NextToken: next}
	for _, n := range page {
		st, err := a.status(n)
		if err != nil {
			return nil, err
		}
		out.AutoScalingGroups = append(out.AutoScalingGroups, describeGroup(st, a.createdTime(st)))
	}
	return out, nil
}

func launchTemplate(lt asg.LaunchTemplate) *asgtypes.LaunchTemplateSpecification {
	return &asgtypes.LaunchTemplateSpecification{LaunchTemplateName: ptr(lt.Name), Version: ptr(lt.Version)}
}

// createdTime is the group's CreatedTime: the earliest launch among its
// instances when the port first sees it.
func (a *AutoScaling) createdTime(st asg.GroupStatus) time.Time {
	if t, ok := a.created[st.Name]; ok {
		return t
	}
	var t time.Time
	for _, in := range st.Instances {
		if t.IsZero() || in.LaunchTime.Before(t) {
			t = in.LaunchTime
		}
	}
	a.created[st.Name] = t
	return t
}

func describeGroup(st asg.GroupStatus, created time.Time) asgtypes.AutoScalingGroup {
	g := asgtypes.AutoScalingGroup{
		AutoScalingGroupName: ptr(st.Name),
		CreatedTime:          ptr(created),
		MinSize:              ptr(int32(st.Min)),
		MaxSize:              ptr(int32(st.Max)),
		DesiredCapacity:      ptr(int32(st.Desired)),
		DefaultCooldown:      ptr(int32(300)),
		AvailabilityZones:    append([]string{}, st.Zones...),
		HealthCheckType:      ptr("EC2"),
		LaunchTemplate:       launchTemplate(st.LaunchTemplate),
		Instances:            []asgtypes.Instance{},
	}
	for _, in := range st.Instances {
		g.Instances = append(g.Instances, asgtypes.Instance{
			InstanceId:           ptr(in.ID),
			InstanceType:         ptr(st.InstanceType),
			ImageId:              ptr(in.ImageID),
			AvailabilityZone:     ptr(in.Zone),
			LifecycleState:       asgtypes.LifecycleState(in.State),
			HealthStatus:         ptr("Healthy"),
			ProtectedFromScaleIn: ptr(false),
			LaunchTemplate:       launchTemplate(in.LaunchTemplate),
		})
	}
	return g
}

// StartInstanceRefresh implements awsport.AutoScaling: a Rolling refresh
// with the request's preferences. DesiredConfiguration's launch template
// version (by name; $Latest, $Default or a number, with the image
// CreateLaunchTemplateVersion gave it) becomes the group's before the
// refresh starts (the twin rolls out the group's own template, as the API
// does when the refresh succeeds); a refresh already active is
// InstanceRefreshInProgressFault.
func (a *AutoScaling) StartInstanceRefresh(_ context.Context, in *autoscaling.StartInstanceRefreshInput, _ ...func(*autoscaling.Options)) (*autoscaling.StartInstanceRefreshOutput, error) {
	name := aws.ToString(in.AutoScalingGroupName)
	before, refreshed, err := a.asg.RefreshRecord(name)
	if err != nil {
		return nil, groupNotFound(name)
	}
	if in.Strategy != "" && in.Strategy != asgtypes.RefreshStrategyRolling {
		return nil, asgError(fmt.Errorf("ValidationError: the twin models the Rolling strategy only, not %s", in.Strategy))
	}
	if refreshed && active(before.Status) {
		return nil, asgError(fmt.Errorf("InstanceRefreshInProgress: An Instance Refresh is already in progress and blocks the execution of this Instance Refresh (group %s)", name))
	}
	// A refused refresh leaves the group as it was: its launch template
	// goes back when the twin refuses the preferences.
	var restore func()
	if dc := in.DesiredConfiguration; dc != nil && dc.LaunchTemplate != nil {
		lt, err := a.desiredLaunchTemplate(aws.ToString(dc.LaunchTemplate.LaunchTemplateName), aws.ToString(dc.LaunchTemplate.Version))
		if err != nil {
			return nil, err
		}
		st, err := a.status(name)
		if err != nil {
			return nil, err
		}
		if err := a.asg.SetLaunchTemplate(name, lt); err != nil {
			return nil, asgError(err)
		}
		restore = func() { _ = a.asg.SetLaunchTemplate(name, st.LaunchTemplate) }
	}
	prefs := instancerefresh.Preferences{}
	if p := in.Preferences; p != nil {
		prefs.MinHealthyPercentage = intOf(p.MinHealthyPercentage)
		prefs.MaxHealthyPercentage = intOf(p.MaxHealthyPercentage)
		prefs.InstanceWarmup = secondsOf(p.InstanceWarmup)
		prefs.CheckpointDelay = secondsOf(p.CheckpointDelay)
		for _, c := range p.CheckpointPercentages {
			prefs.CheckpointPercentages = append(prefs.CheckpointPercentages, int(c))
		}
		prefs.SkipMatching = aws.ToBool(p.SkipMatching)
		if d := secondsOf(p.BakeTime); d != nil {
			prefs.BakeTime = *d
		}
	}
	if err := a.asg.StartInstanceRefresh(name, prefs, nil); err != nil {
		if restore != nil {
			restore()
		}
		return nil, asgError(err)
	}
	if refreshed {
		a.past[name] = append([]asgtypes.InstanceRefresh{describeRefresh(before)}, a.past[name]...)
	}
	started, _, _ := a.asg.RefreshRecord(name)
	return &autoscaling.StartInstanceRefreshOutput{InstanceRefreshId: ptr(started.ID)}, nil
}

func intOf(p *int32) *int {
	if p == nil {
		return nil
	}
	v := int(*p)
	return &v
}

func secondsOf(p *int32) *time.Duration {
	if p == nil {
		return nil
	}
	d := time.Duration(*p) * time.Second
	return &d
}

// active reports whether a refresh status is one of the active ones, at
// most one per group (aws-apis.md §3.3).
func active(s asg.RefreshStatus) bool {
	switch asgtypes.InstanceRefreshStatus(s) {
	case asgtypes.InstanceRefreshStatusPending, asgtypes.InstanceRefreshStatusInProgress, asgtypes.InstanceRefreshStatusCancelling,
		asgtypes.InstanceRefreshStatusRollbackInProgress, asgtypes.InstanceRefreshStatusBaking:
		return true
	}
	return false
}

func describeRefresh(r asg.InstanceRefresh) asgtypes.InstanceRefresh {
	out := asgtypes.InstanceRefresh{
		InstanceRefreshId:    ptr(r.ID),
		AutoScalingGroupName: ptr(r.Group),
		Status:               asgtypes.InstanceRefreshStatus(r.Status),
		PercentageComplete:   ptr(int32(r.PercentageComplete)),
		InstancesToUpdate:    ptr(int32(r.InstancesToUpdate)),
		StartTime:            ptr(r.StartTime),
		Strategy:             asgtypes.RefreshStrategyRolling,
		DesiredConfiguration: &asgtypes.DesiredConfiguration{LaunchTemplate: launchTemplate(r.DesiredConfiguration)},
		Preferences: &asgtypes.RefreshPreferences{
			MinHealthyPercentage: ptr(int32(r.Settings.MinHealthyPercentage)),
			MaxHealthyPercentage: ptr(int32(r.Settings.MaxHealthyPercentage)),
			InstanceWarmup:       ptr(int32(r.Settings.InstanceWarmup / time.Second)),
			SkipMatching:         ptr(r.Settings.SkipMatching),
		},
	}
	// Checkpoints and bake time are echoed as they were asked for
	// (aws-apis.md §3.3): CheckpointDelay only with checkpoints, where it
	// applies, BakeTime when there is one.
	if cps := r.Settings.CheckpointPercentages; len(cps) > 0 {
		for _, c := range cps {
			out.Preferences.CheckpointPercentages = append(out.Preferences.CheckpointPercentages, int32(c))
		}
		out.Preferences.CheckpointDelay = ptr(int32(r.Settings.CheckpointDelay / time.Second))
	}
	if r.Settings.BakeTime > 0 {
		out.Preferences.BakeTime = ptr(int32(r.Settings.BakeTime / time.Second))
	}
	if r.StatusReason != "" {
		out.StatusReason = ptr(r.StatusReason)
	}
	if !r.EndTime.IsZero() {
		out.EndTime = ptr(r.EndTime)
	}
	return out
}

// builtRefresh is a group's current refresh as DescribeInstanceRefreshes
// last returned it, with the record's fields it was built from.
type builtRefresh struct {
	id, reason        string
	status            asg.RefreshStatus
	percent, toUpdate int
	refresh           asgtypes.InstanceRefresh
}

// describeCurrent is the group's current refresh, rebuilt only when the
// record has moved on since the last call.
func (a *AutoScaling) describeCurrent(name string, rec asg.InstanceRefresh) asgtypes.InstanceRefresh {
	b, ok := a.current[name]
	if !ok || b.id != rec.ID || b.status != rec.Status || b.reason != rec.StatusReason || b.percent != rec.PercentageComplete || b.toUpdate != rec.InstancesToUpdate {
		b = builtRefresh{id: rec.ID, reason: rec.StatusReason, status: rec.Status, percent: rec.PercentageComplete, toUpdate: rec.InstancesToUpdate,
			refresh: describeRefresh(rec)}
		a.current[name] = b
	}
	return b.refresh
}

// DescribeInstanceRefreshes implements awsport.AutoScaling: the group's
// refreshes, newest first, optionally by id, paginated. An unknown group
// is a ValidationError. It reads the group's refresh record
// (asg.RefreshRecord), never its instances, so polling it after every twin
// event costs nothing in the group's size.
func (a *AutoScaling) DescribeInstanceRefreshes(_ context.Context, in *autoscaling.DescribeInstanceRefreshesInput, _ ...func(*autoscaling.Options)) (*autoscaling.DescribeInstanceRefreshesOutput, error) {
	name := aws.ToString(in.AutoScalingGroupName)
	rec, refreshed, err := a.asg.RefreshRecord(name)
	if err != nil {
		return nil, groupNotFound(name)
	}
	// One slice of the right size: the executor's gate calls this after
	// every twin event.
	past := a.past[name]
	sel := make([]asgtypes.InstanceRefresh, 0, 1+len(past))
	wanted := func(id *string) bool {
		return len(in.InstanceRefreshIds) == 0 || contains(in.InstanceRefreshIds, aws.ToString(id))
	}
	if refreshed && wanted(&rec.ID) {
		sel = append(sel, a.describeCurrent(name, rec))
	}
	for _, r := range past {
		if wanted(r.InstanceRefreshId) {
			sel = append(sel, r)
		}
	}
	max := in.MaxRecords
	if max == nil {
		max = aws.Int32(asgDefaultRecords)
	}
	items, next, err := page(sel, max, in.NextToken, asgMaxRecords)
	if err != nil {
		return nil, &asgtypes.InvalidNextToken{Message: ptr(err.Error())}
	}
	if items == nil {
		items = []asgtypes.InstanceRefresh{}
	}
	return &autoscaling.DescribeInstanceRefreshesOutput{InstanceRefreshes: items, NextToken: next}, nil
}

// terminatingTransition is the only lifecycle transition the twin models.
const terminatingTransition = "autoscaling:EC2_INSTANCE_TERMINATING"

// DescribeLifecycleHooks implements awsport.AutoScaling.
func (a *AutoScaling) DescribeLifecycleHooks(_ context.Context, in *autoscaling.DescribeLifecycleHooksInput, _ ...func(*autoscaling.Options)) (*autoscaling.DescribeLifecycleHooksOutput, error) {
	name := aws.ToString(in.AutoScalingGroupName)
	h, ok, err := a.asg.LifecycleHook(name)
	if err != nil {
		return nil, groupNotFound(name)
	}
	out := &autoscaling.DescribeLifecycleHooksOutput{LifecycleHooks: []asgtypes.LifecycleHook{}}
	if ok && (len(in.LifecycleHookNames) == 0 || contains(in.LifecycleHookNames, h.Name)) {
		heartbeat := int32(h.HeartbeatTimeout / time.Second)
		out.LifecycleHooks = append(out.LifecycleHooks, asgtypes.LifecycleHook{
			AutoScalingGroupName: &name,
			LifecycleHookName:    ptr(h.Name),
			LifecycleTransition:  ptr(terminatingTransition),
			HeartbeatTimeout:     &heartbeat,
			GlobalTimeout:        ptr(min(172800, 100*heartbeat)),
			DefaultResult:        ptr(h.DefaultResult),
		})
	}
	return out, nil
}

// PutLifecycleHook implements awsport.AutoScaling for terminating hooks
// (the twin's Node Termination Handler consumes them); a launching hook is
// refused with ValidationError.
func (a *AutoScaling) PutLifecycleHook(_ context.Context, in *autoscaling.PutLifecycleHookInput, _ ...func(*autoscaling.Options)) (*autoscaling.PutLifecycleHookOutput, error) {
	name := aws.ToString(in.AutoScalingGroupName)
	if t := aws.ToString(in.LifecycleTransition); t != terminatingTransition {
		return nil, asgError(fmt.Errorf("ValidationError: the twin models %s hooks only, not %q", terminatingTransition, t))
	}
	h := asg.LifecycleHook{Name: aws.ToString(in.LifecycleHookName), DefaultResult: aws.ToString(in.DefaultResult)}
	if in.HeartbeatTimeout != nil {
		h.HeartbeatTimeout = time.Duration(*in.HeartbeatTimeout) * time.Second
	}
	if _, err := a.status(name); err != nil {
		return nil, err
	}
	if err := a.asg.PutLifecycleHook(name, h); err != nil {
		return nil, asgError(err)
	}
	return &autoscaling.PutLifecycleHookOutput{}, nil
}

// CompleteLifecycleAction implements awsport.AutoScaling by InstanceId
// (the twin issues no action tokens).
func (a *AutoScaling) CompleteLifecycleAction(_ context.Context, in *autoscaling.CompleteLifecycleActionInput, _ ...func(*autoscaling.Options)) (*autoscaling.CompleteLifecycleActionOutput, error) {
	name := aws.ToString(in.AutoScalingGroupName)
	if _, err := a.status(name); err != nil {
		return nil, err
	}
	if in.InstanceId == nil {
		return nil, asgError(fmt.Errorf("ValidationError: No active Lifecycle Action found with token %s", aws.ToString(in.LifecycleActionToken)))
	}
	if err := a.asg.CompleteLifecycleAction(name, aws.ToString(in.LifecycleHookName), *in.InstanceId, aws.ToString(in.LifecycleActionResult)); err != nil {
		return nil, asgError(err)
	}
	return &autoscaling.CompleteLifecycleActionOutput{}, nil
}
