package executor

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// AutoScalingAPI is the part of the Auto Scaling API (awsport.AutoScaling)
// the self-managed steps call.
type AutoScalingAPI interface {
	DescribeAutoScalingGroups(ctx context.Context, params *autoscaling.DescribeAutoScalingGroupsInput, optFns ...func(*autoscaling.Options)) (*autoscaling.DescribeAutoScalingGroupsOutput, error)
	StartInstanceRefresh(ctx context.Context, params *autoscaling.StartInstanceRefreshInput, optFns ...func(*autoscaling.Options)) (*autoscaling.StartInstanceRefreshOutput, error)
	DescribeInstanceRefreshes(ctx context.Context, params *autoscaling.DescribeInstanceRefreshesInput, optFns ...func(*autoscaling.Options)) (*autoscaling.DescribeInstanceRefreshesOutput, error)
	// The calls of Ladder's own replacement (surge.go).
	UpdateAutoScalingGroup(ctx context.Context, params *autoscaling.UpdateAutoScalingGroupInput, optFns ...func(*autoscaling.Options)) (*autoscaling.UpdateAutoScalingGroupOutput, error)
	SetDesiredCapacity(ctx context.Context, params *autoscaling.SetDesiredCapacityInput, optFns ...func(*autoscaling.Options)) (*autoscaling.SetDesiredCapacityOutput, error)
	TerminateInstanceInAutoScalingGroup(ctx context.Context, params *autoscaling.TerminateInstanceInAutoScalingGroupInput, optFns ...func(*autoscaling.Options)) (*autoscaling.TerminateInstanceInAutoScalingGroupOutput, error)
}

// selfManagedLabel is the label eksctl puts on a self-managed node group's
// nodes: the group's name.
const selfManagedLabel = "alpha.eksctl.io/nodegroup-name"

// RefreshGroup is a self-managed node group's hop, as the workshop does it
// (§6.4; semantics.md §C): the group's launch template gets a new version
// with the newest AMI of its family for the hop's version, then an
// instance refresh to $Latest replaces the instances set by set, with
// prefs (nil: Auto Scaling's defaults). The step waits until
// DescribeInstanceRefreshes says the refresh ended, then until every node
// of the group runs the hop's kubelet. A group already on that AMI is
// refreshed as it is.
func (e *Executor) RefreshGroup(ctx context.Context, group string, prefs *asgtypes.RefreshPreferences, to kubeversion.Minor) error {
	id, _, err := e.once("StartInstanceRefresh", func(token *string) (string, error) { return e.startRefresh(ctx, group, prefs, to, token) })
	if err != nil {
		return err
	}
	var refresh asgtypes.InstanceRefresh
	in := &autoscaling.DescribeInstanceRefreshesInput{AutoScalingGroupName: aws.String(group), InstanceRefreshIds: []string{id}}
	if err := e.WaitFor(ctx, kubeport.Until{What: "instance refresh " + id, Holds: func(ctx context.Context) (bool, error) {
		out, err := e.Ports.AutoScaling.DescribeInstanceRefreshes(ctx, in)
		if err != nil {
			return false, fmt.Errorf("node group %s: %v", group, apiError(err))
		}
		if len(out.InstanceRefreshes) == 0 {
			return false, fmt.Errorf("node group %s: instance refresh %s not found", group, id)
		}
		refresh = out.InstanceRefreshes[0]
		return refreshEnded(refresh.Status), nil
	}}); err != nil {
		return err
	}
	if refresh.Status != asgtypes.InstanceRefreshStatusSuccessful {
		return fmt.Errorf("node group %s: instance refresh %s: %s", group, refresh.Status, aws.ToString(refresh.StatusReason))
	}
	return e.WaitFor(ctx, kubeport.NodesAtMinor{Label: selfManagedLabel, Value: group, Minor: to})
}

// startRefresh writes the hop's AMI into a new version of the group's
// launch template (when it changes) and starts the instance refresh; it
// returns the refresh's id.
func (e *Executor) startRefresh(ctx context.Context, group string, prefs *asgtypes.RefreshPreferences, to kubeversion.Minor, token *string) (string, error) {
	_, desired, err := e.hopLaunchTemplate(ctx, group, to, token)
	if err != nil {
		return "", err
	}
	start := &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: aws.String(group), Preferences: prefs}
	if desired != nil {
		// The refresh rolls the new version out; "after success the
		// group settings are updated to the desired configuration"
		// (semantics.md §C).
		start.DesiredConfiguration = &asgtypes.DesiredConfiguration{LaunchTemplate: desired}
	}
	started, err := e.Ports.AutoScaling.StartInstanceRefresh(ctx, start)
	if err != nil {
		return "", fmt.Errorf("node group %s: %v", group, apiError(err))
	}
	return aws.ToString(started.InstanceRefreshId), nil
}

// hopLaunchTemplate reads the self-managed group and, when its launch
// template's image is not the newest of its family for the hop, creates
// the template's version with that image (with token) and returns it as
// $Latest in desired; desired is nil when the group's image is already
// the hop's.
func (e *Executor) hopLaunchTemplate(ctx context.Context, group string, to kubeversion.Minor, token *string) (g *asgtypes.AutoScalingGroup, desired *asgtypes.LaunchTemplateSpecification, err error) {
	groups, err := e.Ports.AutoScaling.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{group}})
	if err != nil {
		return nil, nil, fmt.Errorf("node group %s: %v", group, apiError(err))
	}
	if len(groups.AutoScalingGroups) == 0 || groups.AutoScalingGroups[0].LaunchTemplate == nil {
		return nil, nil, fmt.Errorf("node group %s: no Auto Scaling group of that name with a launch template", group)
	}
	g = &groups.AutoScalingGroups[0]
	lt := g.LaunchTemplate
	versions, err := e.Ports.LaunchTemplates.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{
		LaunchTemplateId: lt.LaunchTemplateId, LaunchTemplateName: lt.LaunchTemplateName, Versions: []string{aws.ToString(lt.Version)}})
	if err != nil {
		return nil, nil, fmt.Errorf("node group %s: %v", group, apiError(err))
	}
	image := ""
	if v := versions.LaunchTemplateVersions; len(v) > 0 && v[0].LaunchTemplateData != nil {
		image = aws.ToString(v[0].LaunchTemplateData.ImageId)
	}
	cur, err := e.identify(ctx, image)
	if err != nil {
		return nil, nil, fmt.Errorf("node group %s: launch template %v", group, err)
	}
	next, err := e.hopAMI(ctx, cur, to)
	if err != nil {
		return nil, nil, fmt.Errorf("node group %s: %v", group, err)
	}
	if next.id == cur.id {
		return g, nil, nil
	}
	e.Observer.Event("Normal", "LaunchTemplateUpdated", fmt.Sprintf("node group %s: launch template %s gets image %s (%s)", group, aws.ToString(lt.LaunchTemplateName), next.id, next.name))
	if _, err := e.Ports.LaunchTemplates.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{
		LaunchTemplateId: lt.LaunchTemplateId, LaunchTemplateName: lt.LaunchTemplateName, SourceVersion: lt.Version, ClientToken: token,
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(next.id)}}); err != nil {
		return nil, nil, fmt.Errorf("node group %s: %v", group, apiError(err))
	}
	return g, &asgtypes.LaunchTemplateSpecification{LaunchTemplateId: lt.LaunchTemplateId, LaunchTemplateName: lt.LaunchTemplateName, Version: aws.String("$Latest")}, nil
}

// refreshEnded reports whether an instance refresh is no longer active:
// Pending, InProgress, Baking, Cancelling and RollbackInProgress are (at
// most one per group; aws-apis.md §3.3).
func refreshEnded(s asgtypes.InstanceRefreshStatus) bool {
	switch s {
	case asgtypes.InstanceRefreshStatusPending, asgtypes.InstanceRefreshStatusInProgress, asgtypes.InstanceRefreshStatusBaking,
		asgtypes.InstanceRefreshStatusCancelling, asgtypes.InstanceRefreshStatusRollbackInProgress:
		return false
	}
	return true
}
