package executor

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
)

// account is SSM and EC2 of a real account whose recommended AMI for 1.31
// is newer than the embedded catalog knows.
type account struct {
	params map[string]string
	images map[string]ec2types.Image
	asked  []string
}

func (a *account) GetParameter(_ context.Context, in *ssm.GetParameterInput, _ ...func(*ssm.Options)) (*ssm.GetParameterOutput, error) {
	a.asked = append(a.asked, aws.ToString(in.Name))
	v, ok := a.params[aws.ToString(in.Name)]
	if !ok {
		return nil, &ssmtypes.ParameterNotFound{Message: aws.String("Parameter " + aws.ToString(in.Name) + " not found.")}
	}
	return &ssm.GetParameterOutput{Parameter: &ssmtypes.Parameter{Name: in.Name, Value: aws.String(v)}}, nil
}

func (a *account) DescribeImages(_ context.Context, in *ec2.DescribeImagesInput, _ ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error) {
	out := &ec2.DescribeImagesOutput{}
	for _, id := range in.ImageIds {
		if img, ok := a.images[id]; ok {
			out.Images = append(out.Images, img)
		}
	}
	return out, nil
}

// TestHopAMIFromSSM: with SSM, a custom-AMI group's new launch template
// version gets the AMI AWS recommends today — read from the public
// parameter of the current image's family and architecture — not the
// catalog's; an image the catalog does not know is identified by
// DescribeImages; one that is no EKS-optimized AMI is refused, saying what
// to do.
func TestHopAMIFromSSM(t *testing.T) {
	tw := newManagedTwin(t)
	const newer = "ami-0fffffffffffffff1"
	acct := &account{
		params: map[string]string{"/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id": newer},
		images: map[string]ec2types.Image{
			newer:          {ImageId: aws.String(newer), Name: aws.String("amazon-eks-node-al2023-x86_64-standard-1.31-v20270101"), Architecture: ec2types.ArchitectureValuesX8664},
			"ami-0golden1": {ImageId: aws.String("ami-0golden1"), Name: aws.String("acme-golden-2026"), Architecture: ec2types.ArchitectureValuesX8664},
		},
	}
	tw.ex.Ports.Parameters, tw.ex.Ports.Images = acct, acct
	ctx := context.Background()
	lt := &ekstypes.LaunchTemplateSpecification{Name: aws.String("custom"), Version: aws.String("1")}
	spec, err := tw.ex.customAMIVersion(ctx, "custom", lt, ami130, v131, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tw.ex.Ports.LaunchTemplates.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{
		LaunchTemplateName: aws.String("custom"), Versions: []string{aws.ToString(spec.Version)}})
	if err != nil || len(out.LaunchTemplateVersions) != 1 || aws.ToString(out.LaunchTemplateVersions[0].LaunchTemplateData.ImageId) != newer {
		t.Fatalf("version %s: %+v, %v; want image %s", aws.ToString(spec.Version), out, err, newer)
	}
	if len(acct.asked) != 1 {
		t.Errorf("parameters read: %q", acct.asked)
	}
	if ev := strings.Join(tw.events(), "\n"); !strings.Contains(ev, "with image "+newer+" (amazon-eks-node-al2023-x86_64-standard-1.31-v20270101)") {
		t.Errorf("events: %s", ev)
	}
	if _, err := tw.ex.customAMIVersion(ctx, "custom", lt, "ami-0golden1", v131, nil); err == nil || !strings.Contains(err.Error(), "ami-0golden1 (acme-golden-2026) is not an EKS-optimized AMI: give the group's launch template the hop's AMI yourself") {
		t.Errorf("a golden image: %v", err)
	}
}
