package executor

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// ImageAPI is EC2's DescribeImages (awsport.Images): what an AMI the
// catalog does not know is.
type ImageAPI interface {
	DescribeImages(ctx context.Context, params *ec2.DescribeImagesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error)
}

// ParameterAPI is SSM's GetParameter (awsport.Parameters): the public
// parameters naming the recommended EKS-optimized AMIs.
type ParameterAPI interface {
	GetParameter(ctx context.Context, params *ssm.GetParameterInput, optFns ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

// image is an AMI as the executor needs it: id, name, family, arch.
type image struct{ id, name, family, arch string }

// identify says what an AMI is: the catalog's entry (or the scenario's),
// else EC2's DescribeImages — its name spells the family.
func (e *Executor) identify(ctx context.Context, id string) (image, error) {
	if a, ok := e.AMIs.LookupAMI(id); ok {
		return image{id: a.ID, name: a.Name, family: a.Family, arch: a.Arch}, nil
	}
	if e.Ports.Images == nil {
		return image{}, fmt.Errorf("image %s is not in the catalog", id)
	}
	out, err := e.Ports.Images.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{id}})
	if err != nil {
		return image{}, fmt.Errorf("image %s: %v", id, cliError("DescribeImages", err))
	}
	if len(out.Images) == 0 {
		return image{}, fmt.Errorf("image %s: DescribeImages does not know it", id)
	}
	img := out.Images[0]
	im := image{id: id, name: aws.ToString(img.Name), family: catalog.FamilyOfName(aws.ToString(img.Name))}
	if arch, ok := catalog.AMIArch(string(img.Architecture)); ok {
		im.arch = arch
	}
	if im.family == "" {
		return image{}, fmt.Errorf("image %s (%s) is not an EKS-optimized AMI: give the group's launch template the hop's AMI yourself", id, im.name)
	}
	return im, nil
}

// hopAMI is the AMI a group on cur moves to for the hop: the recommended
// EKS-optimized AMI of cur's family and architecture for `to` — SSM's
// public parameter when the executor has SSM (what AWS recommends today,
// aws-apis.md §5), else the embedded catalog's newest as of the port's
// clock (the twin's SSM answers the same).
func (e *Executor) hopAMI(ctx context.Context, cur image, to kubeversion.Minor) (image, error) {
	if e.Ports.Parameters == nil {
		next, err := catalog.ResolveAlias(cur.family+"@latest", to.String(), cur.arch, e.Ports.Kube.Now())
		if err != nil {
			return image{}, fmt.Errorf("no %s AMI for Kubernetes %s: %v", cur.family, to, err)
		}
		return image{id: next.ID, name: next.Name, family: next.Family, arch: next.Arch}, nil
	}
	name := catalog.RecommendedParameter(cur.family, cur.arch, to.String())
	out, err := e.Ports.Parameters.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name)})
	if err != nil {
		return image{}, fmt.Errorf("no %s AMI for Kubernetes %s: %v", cur.family, to, cliError("GetParameter "+name, err))
	}
	next, err := e.identify(ctx, aws.ToString(out.Parameter.Value))
	if err != nil {
		return image{}, err
	}
	return next, nil
}
