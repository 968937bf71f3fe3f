package executor

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// LaunchTemplateAPI is the part of EC2's launch template API
// (awsport.LaunchTemplates) the executor calls.
type LaunchTemplateAPI interface {
	DescribeLaunchTemplateVersions(ctx context.Context, params *ec2.DescribeLaunchTemplateVersionsInput, optFns ...func(*ec2.Options)) (*ec2.DescribeLaunchTemplateVersionsOutput, error)
	CreateLaunchTemplateVersion(ctx context.Context, params *ec2.CreateLaunchTemplateVersionInput, optFns ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateVersionOutput, error)
}

// nodegroupImage is the launch template behind a managed node group and
// the image its version names: "" for a group on an EKS AMI, with or
// without a launch template (semantics.md §B "Custom launch template /
// AMI": with an image id in the template, EKS reports the AMI type CUSTOM
// and leaves the AMI to the user).
func (e *Executor) nodegroupImage(ctx context.Context, ng *ekstypes.Nodegroup) (*ekstypes.LaunchTemplateSpecification, string, error) {
	lt := ng.LaunchTemplate
	if lt == nil {
		return nil, "", nil
	}
	name := aws.ToString(ng.NodegroupName)
	out, err := e.Ports.LaunchTemplates.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{
		LaunchTemplateId: lt.Id, LaunchTemplateName: lt.Name, Versions: []string{aws.ToString(lt.Version)}})
	if err != nil {
		return nil, "", fmt.Errorf("node group %s: %v", name, cliError("DescribeLaunchTemplateVersions", err))
	}
	if v := out.LaunchTemplateVersions; len(v) > 0 && v[0].LaunchTemplateData != nil {
		return lt, aws.ToString(v[0].LaunchTemplateData.ImageId), nil
	}
	return lt, "", nil
}

// customAMIVersion gives a custom-AMI group's launch template a new
// version with the hop's AMI — the newest of the current image's family
// and architecture for the hop's Kubernetes version, as the workshop bumps
// custom-Y's ami_id by hand (§6.1) — and returns the launch template
// UpdateNodegroupVersion or CreateNodegroup names. token, when set, is
// EC2's client token: the operation made again after a lost record gets
// the version it made then.
func (e *Executor) customAMIVersion(ctx context.Context, group string, lt *ekstypes.LaunchTemplateSpecification, image string, to kubeversion.Minor, token *string) (*ekstypes.LaunchTemplateSpecification, error) {
	cur, err := e.identify(ctx, image)
	if err != nil {
		return nil, fmt.Errorf("node group %s: launch template %v", group, err)
	}
	next, err := e.hopAMI(ctx, cur, to)
	if err != nil {
		return nil, fmt.Errorf("node group %s: %v", group, err)
	}
	out, err := e.Ports.LaunchTemplates.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{
		LaunchTemplateId: lt.Id, LaunchTemplateName: lt.Name, SourceVersion: lt.Version, ClientToken: token,
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(next.id)}})
	if err != nil {
		return nil, fmt.Errorf("node group %s: %v", group, cliError("CreateLaunchTemplateVersion", err))
	}
	version := strconv.FormatInt(aws.ToInt64(out.LaunchTemplateVersion.VersionNumber), 10)
	template := aws.ToString(lt.Name)
	if template == "" {
		template = aws.ToString(lt.Id)
	}
	e.Observer.Event("Normal", "LaunchTemplateUpdated", fmt.Sprintf("node group %s (custom AMI): launch template %s version %s with image %s (%s)", group, template, version, next.id, next.name))
	return &ekstypes.LaunchTemplateSpecification{Id: lt.Id, Name: lt.Name, Version: aws.String(version)}, nil
}
