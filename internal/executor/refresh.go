package executor

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// RefreshGroup is a self-managed node group's hop, as the workshop does it
// (§6.4; semantics.md §C): the launch template gets a new version with the
// newest AMI of its family for the hop's version, then an instance refresh
// to that version replaces the instances batch by batch, and the step waits
// until DescribeInstanceRefreshes says the refresh ended and every node of
// the group (nodeLabel=group) runs the hop's kubelet. prefs are the
// refresh's preferences (nil: Auto Scaling's defaults).
func (e *Executor) RefreshGroup(ctx context.Context, group, nodeLabel string, prefs *asgtypes.RefreshPreferences, to kubeversion.Minor) error {
	out, err := e.Ports.AutoScaling.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{group}})
	if err != nil {
		return apiError(err)
	}
	if len(out.AutoScalingGroups) == 0 || out.AutoScalingGroups[0].LaunchTemplate == nil {
		return fmt.Errorf("node group %s: no Auto Scaling group of that name with a launch template", group)
	}
	lt := out.AutoScalingGroups[0].LaunchTemplate
	versions, err := e.Ports.LaunchTemplates.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{
		LaunchTemplateId: lt.LaunchTemplateId, LaunchTemplateName: lt.LaunchTemplateName, Versions: []string{aws.ToString(lt.Version)}})
	if err != nil {
		return apiError(err)
	}
	image := ""
	if len(versions.LaunchTemplateVersions) > 0 && versions.LaunchTemplateVersions[0].LaunchTemplateData != nil {
		image = aws.ToString(versions.LaunchTemplateVersions[0].LaunchTemplateData.ImageId)
	}
	cur, ok := e.AMIs.LookupAMI(image)
	if !ok {
		return fmt.Errorf("node group %s: launch template image %s is not in the catalog", group, image)
	}
	next, err := catalog.ResolveAlias(cur.Family+"@latest", to.String(), cur.Arch, e.Ports.Kube.Now())
	if err != nil {
		return fmt.Errorf("node group %s: no %s AMI for Kubernetes %s: %v", group, cur.Family, to, err)
	}
	start := &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: aws.String(group), Preferences: prefs}
	if next.ID != cur.ID {
		e.Observer.Event("Normal", "LaunchTemplateUpdated", fmt.Sprintf("node group %s: launch template %s gets image %s (%s)", group, aws.ToString(lt.LaunchTemplateName), next.ID, next.Name))
		if _, err := e.Ports.LaunchTemplates.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{
			LaunchTemplateId: lt.LaunchTemplateId, LaunchTemplateName: lt.LaunchTemplateName, SourceVersion: lt.Version,
			LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(next.ID)}}); err != nil {
			return apiError(err)
		}
		start.DesiredConfiguration = &asgtypes.DesiredConfiguration{LaunchTemplate: &asgtypes.LaunchTemplateSpecification{
			LaunchTemplateId: lt.LaunchTemplateId, LaunchTemplateName: lt.LaunchTemplateName, Version: aws.String("$Latest")}}
	}
	started, err := e.Ports.AutoScaling.StartInstanceRefresh(ctx, start)
	if err != nil {
		return fmt.Errorf("node group %s: %v", group, apiError(err))
	}
	id := aws.ToString(started.InstanceRefreshId)
	var refresh asgtypes.InstanceRefresh
	if err := e.WaitFor(ctx, kubeport.Until{What: "instance refresh " + id, Holds: func(ctx context.Context) (bool, error) {
		out, err := e.Ports.AutoScaling.DescribeInstanceRefreshes(ctx, &autoscaling.DescribeInstanceRefreshesInput{AutoScalingGroupName: aws.String(group), InstanceRefreshIds: []string{id}})
		if err != nil || len(out.InstanceRefreshes) == 0 {
			return false, apiError(err)
		}
		refresh = out.InstanceRefreshes[0]
		return refreshEnded(refresh.Status), nil
	}}); err != nil {
		return err
	}
	if refresh.Status != asgtypes.InstanceRefreshStatusSuccessful {
		return fmt.Errorf("node group %s: instance refresh %s: %s", group, refresh.Status, aws.ToString(refresh.StatusReason))
	}
	return e.WaitFor(ctx, kubeport.NodesAtMinor{Label: nodeLabel, Value: group, Minor: to})
}

// refreshEnded is an instance refresh status no longer active (aws-apis.md
// §3.3).
func refreshEnded(s asgtypes.InstanceRefreshStatus) bool {
	switch s {
	case asgtypes.InstanceRefreshStatusPending, asgtypes.InstanceRefreshStatusInProgress, asgtypes.InstanceRefreshStatusCancelling,
		asgtypes.InstanceRefreshStatusRollbackInProgress, asgtypes.InstanceRefreshStatusBaking:
		return false
	}
	return true
}
