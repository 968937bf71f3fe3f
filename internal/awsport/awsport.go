// Package awsport is the AWS API as an EKS upgrade uses it: the EKS, Auto
// Scaling, EC2 and SSM operations Ladder calls, as interfaces whose method
// sets are subsets of aws-sdk-go-v2's clients. *eks.Client, *autoscaling.Client,
// *ec2.Client and *ssm.Client satisfy them with no adapter (aws-apis.md §1.11,
// the SDK's own advice for testing: "define an interface with the methods you
// call"), and internal/awsport/twinaws implements them over Ladder's twins.
//
// Requests and responses are the SDK's types, so a caller written against a
// port reads exactly like one written against the SDK. Errors are the SDK's
// too: the modelled exceptions as their typed structs
// (*ekstypes.ResourceNotFoundException, *asgtypes.InstanceRefreshInProgressFault,
// *ssmtypes.ParameterNotFound), the unmodelled ones (Auto Scaling's
// ValidationError, every EC2 error) as *smithy.GenericAPIError, so
// errors.As and smithy.APIError's ErrorCode work the same on both sides.
//
// Nothing here waits. An update is accepted at once and read back with its
// Describe operation; a caller polls it inside kubeport.Port's Wait, which
// advances the twin's virtual clock and polls a real account.
// internal/awsport/conformance runs one suite against any implementation.
// docs/ports.md maps each method to its operation and lists what the twin
// leaves out.
package awsport

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
)

// EKS is the EKS control-plane API (aws-apis.md §2): the cluster and its
// version updates, managed node groups, add-ons, Fargate profiles, insights
// and the version calendar. Updates are scoped (§2.6): DescribeUpdate of a
// node group or add-on update must name it in NodegroupName or AddonName.
type EKS interface {
	DescribeCluster(ctx context.Context, params *eks.DescribeClusterInput, optFns ...func(*eks.Options)) (*eks.DescribeClusterOutput, error)
	UpdateClusterVersion(ctx context.Context, params *eks.UpdateClusterVersionInput, optFns ...func(*eks.Options)) (*eks.UpdateClusterVersionOutput, error)
	DescribeUpdate(ctx context.Context, params *eks.DescribeUpdateInput, optFns ...func(*eks.Options)) (*eks.DescribeUpdateOutput, error)

	ListNodegroups(ctx context.Context, params *eks.ListNodegroupsInput, optFns ...func(*eks.Options)) (*eks.ListNodegroupsOutput, error)
	DescribeNodegroup(ctx context.Context, params *eks.DescribeNodegroupInput, optFns ...func(*eks.Options)) (*eks.DescribeNodegroupOutput, error)
	UpdateNodegroupVersion(ctx context.Context, params *eks.UpdateNodegroupVersionInput, optFns ...func(*eks.Options)) (*eks.UpdateNodegroupVersionOutput, error)
	CreateNodegroup(ctx context.Context, params *eks.CreateNodegroupInput, optFns ...func(*eks.Options)) (*eks.CreateNodegroupOutput, error)
	DeleteNodegroup(ctx context.Context, params *eks.DeleteNodegroupInput, optFns ...func(*eks.Options)) (*eks.DeleteNodegroupOutput, error)

	ListAddons(ctx context.Context, params *eks.ListAddonsInput, optFns ...func(*eks.Options)) (*eks.ListAddonsOutput, error)
	DescribeAddon(ctx context.Context, params *eks.DescribeAddonInput, optFns ...func(*eks.Options)) (*eks.DescribeAddonOutput, error)
	DescribeAddonVersions(ctx context.Context, params *eks.DescribeAddonVersionsInput, optFns ...func(*eks.Options)) (*eks.DescribeAddonVersionsOutput, error)
	UpdateAddon(ctx context.Context, params *eks.UpdateAddonInput, optFns ...func(*eks.Options)) (*eks.UpdateAddonOutput, error)

	ListFargateProfiles(ctx context.Context, params *eks.ListFargateProfilesInput, optFns ...func(*eks.Options)) (*eks.ListFargateProfilesOutput, error)
	DescribeFargateProfile(ctx context.Context, params *eks.DescribeFargateProfileInput, optFns ...func(*eks.Options)) (*eks.DescribeFargateProfileOutput, error)
	ListInsights(ctx context.Context, params *eks.ListInsightsInput, optFns ...func(*eks.Options)) (*eks.ListInsightsOutput, error)
	DescribeClusterVersions(ctx context.Context, params *eks.DescribeClusterVersionsInput, optFns ...func(*eks.Options)) (*eks.DescribeClusterVersionsOutput, error)
}

// ClusterLister is EKS's ListClusters (aws-apis.md §2.4): the clusters of
// the account in the region, by name. Apart from EKS because the upgrade
// never needs it — only finding the cluster does, when nothing names it.
type ClusterLister interface {
	ListClusters(ctx context.Context, params *eks.ListClustersInput, optFns ...func(*eks.Options)) (*eks.ListClustersOutput, error)
}

// AutoScaling is the EC2 Auto Scaling API for self-managed node groups
// (aws-apis.md §3): groups and their instances, instance refreshes (§3.3),
// lifecycle hooks (§3.4) and the group's capacity.
type AutoScaling interface {
	DescribeAutoScalingGroups(ctx context.Context, params *autoscaling.DescribeAutoScalingGroupsInput, optFns ...func(*autoscaling.Options)) (*autoscaling.DescribeAutoScalingGroupsOutput, error)
	StartInstanceRefresh(ctx context.Context, params *autoscaling.StartInstanceRefreshInput, optFns ...func(*autoscaling.Options)) (*autoscaling.StartInstanceRefreshOutput, error)
	DescribeInstanceRefreshes(ctx context.Context, params *autoscaling.DescribeInstanceRefreshesInput, optFns ...func(*autoscaling.Options)) (*autoscaling.DescribeInstanceRefreshesOutput, error)
	DescribeLifecycleHooks(ctx context.Context, params *autoscaling.DescribeLifecycleHooksInput, optFns ...func(*autoscaling.Options)) (*autoscaling.DescribeLifecycleHooksOutput, error)
	PutLifecycleHook(ctx context.Context, params *autoscaling.PutLifecycleHookInput, optFns ...func(*autoscaling.Options)) (*autoscaling.PutLifecycleHookOutput, error)
	CompleteLifecycleAction(ctx context.Context, params *autoscaling.CompleteLifecycleActionInput, optFns ...func(*autoscaling.Options)) (*autoscaling.CompleteLifecycleActionOutput, error)
	// UpdateAutoScalingGroup, SetDesiredCapacity and
	// TerminateInstanceInAutoScalingGroup are Ladder's own replacement of a
	// group's instances (--strategy ladder): the new launch template
	// version, a surge of new instances, then each old one terminated
	// with the capacity decremented once Ladder has drained its node.
	UpdateAutoScalingGroup(ctx context.Context, params *autoscaling.UpdateAutoScalingGroupInput, optFns ...func(*autoscaling.Options)) (*autoscaling.UpdateAutoScalingGroupOutput, error)
	SetDesiredCapacity(ctx context.Context, params *autoscaling.SetDesiredCapacityInput, optFns ...func(*autoscaling.Options)) (*autoscaling.SetDesiredCapacityOutput, error)
	TerminateInstanceInAutoScalingGroup(ctx context.Context, params *autoscaling.TerminateInstanceInAutoScalingGroupInput, optFns ...func(*autoscaling.Options)) (*autoscaling.TerminateInstanceInAutoScalingGroupOutput, error)
}

// Images is EC2's DescribeImages (aws-apis.md §4): what an AMI id is, its
// name, creation date and architecture.
type Images interface {
	DescribeImages(ctx context.Context, params *ec2.DescribeImagesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error)
}

// LaunchTemplates is EC2's launch template versions (aws-apis.md §4): how
// a self-managed node group gets a new AMI — a new version of its launch
// template with the new ImageId (SourceVersion copies the rest), which an
// instance refresh then rolls out as its DesiredConfiguration.
type LaunchTemplates interface {
	CreateLaunchTemplateVersion(ctx context.Context, params *ec2.CreateLaunchTemplateVersionInput, optFns ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateVersionOutput, error)
	DescribeLaunchTemplateVersions(ctx context.Context, params *ec2.DescribeLaunchTemplateVersionsInput, optFns ...func(*ec2.Options)) (*ec2.DescribeLaunchTemplateVersionsOutput, error)
}

// Parameters is SSM's GetParameter(s) (aws-apis.md §5), through which AWS
// publishes the EKS-optimized AMI ids under /aws/service/eks/optimized-ami/...
// and /aws/service/bottlerocket/....
type Parameters interface {
	GetParameter(ctx context.Context, params *ssm.GetParameterInput, optFns ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
	GetParameters(ctx context.Context, params *ssm.GetParametersInput, optFns ...func(*ssm.Options)) (*ssm.GetParametersOutput, error)
}

// Ports are the AWS ports of one cluster's account and region.
type Ports struct {
	EKS             EKS
	AutoScaling     AutoScaling
	LaunchTemplates LaunchTemplates
	Images          Images
	Parameters      Parameters
}
