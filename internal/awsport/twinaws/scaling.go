package twinaws

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
)

// UpdateAutoScalingGroup implements awsport.AutoScaling for the group's
// launch template (by name; $Latest, $Default or a number) and its desired
// capacity — what a surge of new instances needs; the other settings are
// refused with ValidationError, since the twin models none of them as
// changeable.
func (a *AutoScaling) UpdateAutoScalingGroup(_ context.Context, in *autoscaling.UpdateAutoScalingGroupInput, _ ...func(*autoscaling.Options)) (*autoscaling.UpdateAutoScalingGroupOutput, error) {
	name := aws.ToString(in.AutoScalingGroupName)
	if _, err := a.status(name); err != nil {
		return nil, err
	}
	if in.MinSize != nil || in.MaxSize != nil || in.MixedInstancesPolicy != nil || len(in.AvailabilityZones) > 0 || in.VPCZoneIdentifier != nil {
		return nil, asgError(fmt.Errorf("ValidationError: the twin changes only a group's launch template and desired capacity"))
	}
	if lt := in.LaunchTemplate; lt != nil {
		spec, err := a.desiredLaunchTemplate(aws.ToString(lt.LaunchTemplateName), aws.ToString(lt.Version))
		if err != nil {
			return nil, err
		}
		if err := a.asg.SetLaunchTemplate(name, spec); err != nil {
			return nil, asgError(err)
		}
	}
	if in.DesiredCapacity != nil {
		if err := a.asg.SetDesiredCapacity(name, int(*in.DesiredCapacity)); err != nil {
			return nil, asgError(err)
		}
	}
	return &autoscaling.UpdateAutoScalingGroupOutput{}, nil
}

// SetDesiredCapacity implements awsport.AutoScaling: the group launches or
// terminates instances to the new capacity; outside MinSize..MaxSize it is
// a ValidationError.
func (a *AutoScaling) SetDesiredCapacity(_ context.Context, in *autoscaling.SetDesiredCapacityInput, _ ...func(*autoscaling.Options)) (*autoscaling.SetDesiredCapacityOutput, error) {
	name := aws.ToString(in.AutoScalingGroupName)
	if _, err := a.status(name); err != nil {
		return nil, err
	}
	if err := a.asg.SetDesiredCapacity(name, int(aws.ToInt32(in.DesiredCapacity))); err != nil {
		return nil, asgError(err)
	}
	return &autoscaling.SetDesiredCapacityOutput{}, nil
}

// TerminateInstanceInAutoScalingGroup implements awsport.AutoScaling: the
// instance goes through its group's termination (the lifecycle hook, when
// there is one), with the desired capacity decremented or a replacement
// launched; the activity is InProgress. An instance of no group, or one
// already terminating, is a ValidationError.
func (a *AutoScaling) TerminateInstanceInAutoScalingGroup(_ context.Context, in *autoscaling.TerminateInstanceInAutoScalingGroupInput, _ ...func(*autoscaling.Options)) (*autoscaling.TerminateInstanceInAutoScalingGroupOutput, error) {
	id := aws.ToString(in.InstanceId)
	group, cause, err := a.asg.TerminateInstance(id, aws.ToBool(in.ShouldDecrementDesiredCapacity))
	if err != nil {
		return nil, asgError(err)
	}
	a.activities++
	return &autoscaling.TerminateInstanceInAutoScalingGroupOutput{Activity: &asgtypes.Activity{
		ActivityId:           ptr(fmt.Sprintf("%08x-0000-4000-8000-%012x", a.activities, a.activities)),
		AutoScalingGroupName: ptr(group),
		Cause:                ptr(fmt.Sprintf("At %s %s.", a.asg.Now().UTC().Format("2006-01-02T15:04:05Z"), cause)),
		Description:          ptr("Terminating EC2 instance: " + id),
		StartTime:            ptr(a.asg.Now()),
		StatusCode:           asgtypes.ScalingActivityStatusCodeInProgress,
		Progress:             ptr(int32(0)),
	}}, nil
}
