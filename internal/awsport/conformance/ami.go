package conformance

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/aws/smithy-go"

	"github.com/ladder-eks/ladder/internal/awsport"
)

// AMIEnv is an account's EC2 images and SSM public parameters.
type AMIEnv interface {
	Images() awsport.Images
	Parameters() awsport.Parameters
	// Minor is a Kubernetes minor with EKS-optimized AL2023 x86_64 AMIs
	// published.
	Minor() string
}

// RunAMI runs the AMI suite (EC2 DescribeImages, SSM GetParameter(s),
// aws-apis.md §4, §5) against env.
func RunAMI(t *testing.T, env AMIEnv) {
	runCases(t, []namedCase[AMIEnv]{
		{"ami/recommended-parameter-is-an-image", amiRecommended},
		{"ami/not-found", amiNotFound},
		{"ami/name-filter-pagination", amiPagination},
	}, false, func(*testing.T) AMIEnv { return env })
}

func al2023Parameter(minor string) string {
	return "/aws/service/eks/optimized-ami/" + minor + "/amazon-linux-2023/x86_64/standard/recommended/image_id"
}

// amiRecommended: the recommended AL2023 parameter names an available
// x86_64 image of that minor, which DescribeImages describes.
func amiRecommended(ctx context.Context, env AMIEnv) error {
	name := al2023Parameter(env.Minor())
	out, err := env.Parameters().GetParameter(ctx, &ssm.GetParameterInput{Name: &name})
	if err != nil {
		return fmt.Errorf("GetParameter %s: %w", name, err)
	}
	id := aws.ToString(out.Parameter.Value)
	if !strings.HasPrefix(id, "ami-") || out.Parameter.Type != ssmtypes.ParameterTypeString {
		return fmt.Errorf("GetParameter %s = %q (%s), want an ami- id of type String", name, id, out.Parameter.Type)
	}
	imgs, err := env.Images().DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{id}})
	if err != nil {
		return fmt.Errorf("DescribeImages %s: %w", id, err)
	}
	if len(imgs.Images) != 1 {
		return fmt.Errorf("DescribeImages %s: %d images, want 1", id, len(imgs.Images))
	}
	img := imgs.Images[0]
	n := aws.ToString(img.Name)
	if img.State != ec2types.ImageStateAvailable || img.Architecture != ec2types.ArchitectureValuesX8664 ||
		!strings.Contains(n, "al2023") || !strings.Contains(n, "-"+env.Minor()+"-") || aws.ToString(img.CreationDate) == "" {
		return fmt.Errorf("image %s: %s %s %q created %q; want an available x86_64 al2023 %s image with a creation date", id, img.State, img.Architecture, n, aws.ToString(img.CreationDate), env.Minor())
	}
	return nil
}

// amiNotFound: an unknown parameter is ParameterNotFound from GetParameter
// and an InvalidParameters entry from GetParameters; an unknown image is
// the code InvalidAMIID.NotFound.
func amiNotFound(ctx context.Context, env AMIEnv) error {
	missing := "/aws/service/eks/optimized-ami/" + env.Minor() + "/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-" + env.Minor() + "-v19990101/image_id"
	_, err := env.Parameters().GetParameter(ctx, &ssm.GetParameterInput{Name: &missing})
	if _, err := wantError[*ssmtypes.ParameterNotFound]("GetParameter of a missing parameter", err); err != nil {
		return err
	}
	good := al2023Parameter(env.Minor())
	out, err := env.Parameters().GetParameters(ctx, &ssm.GetParametersInput{Names: []string{good, missing}})
	if err != nil {
		return fmt.Errorf("GetParameters: %w (a missing name is not an error)", err)
	}
	if len(out.Parameters) != 1 || aws.ToString(out.Parameters[0].Name) != good || !slices.Equal(out.InvalidParameters, []string{missing}) {
		return fmt.Errorf("GetParameters: %d parameters, invalid %v; want %s found and %s invalid", len(out.Parameters), out.InvalidParameters, good, missing)
	}
	_, err = env.Images().DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{"ami-00000000000000000"}})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "InvalidAMIID.NotFound" {
		return fmt.Errorf("DescribeImages of a missing image: %v, want the code InvalidAMIID.NotFound", err)
	}
	return nil
}

// amiPagination: a name filter with wildcards selects only matching
// images, page by page (MaxResults 5), the recommended one among them.
func amiPagination(ctx context.Context, env AMIEnv) error {
	pattern := "amazon-eks-node-al2023-x86_64-standard-" + env.Minor() + "-*"
	name := al2023Parameter(env.Minor())
	rec, err := env.Parameters().GetParameter(ctx, &ssm.GetParameterInput{Name: &name})
	if err != nil {
		return err
	}
	var ids []string
	var token *string
	for pages := 0; ; pages++ {
		if pages > 100 {
			return fmt.Errorf("DescribeImages: more than 100 pages")
		}
		out, err := env.Images().DescribeImages(ctx, &ec2.DescribeImagesInput{
			Filters:    []ec2types.Filter{{Name: aws.String("name"), Values: []string{pattern}}, {Name: aws.String("state"), Values: []string{"available"}}},
			MaxResults: aws.Int32(5), NextToken: token,
		})
		if err != nil {
			return fmt.Errorf("DescribeImages page %d: %w", pages+1, err)
		}
		if len(out.Images) > 5 {
			return fmt.Errorf("DescribeImages with MaxResults 5 returned %d images", len(out.Images))
		}
		for _, img := range out.Images {
			if ok, _ := path.Match(pattern, aws.ToString(img.Name)); !ok {
				return fmt.Errorf("DescribeImages name=%s returned %s", pattern, aws.ToString(img.Name))
			}
			ids = append(ids, aws.ToString(img.ImageId))
		}
		if out.NextToken == nil {
			break
		}
		token = out.NextToken
	}
	if !slices.Contains(ids, aws.ToString(rec.Parameter.Value)) {
		return fmt.Errorf("DescribeImages name=%s: %v lacks the recommended %s", pattern, ids, aws.ToString(rec.Parameter.Value))
	}
	return nil
}
