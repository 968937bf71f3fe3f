package twinaws

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/aws/smithy-go"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/catalog"
)

// AMIs is the EC2 DescribeImages and SSM GetParameter(s) ports over the
// embedded catalog of EKS-optimized AMIs (internal/catalog): the public
// parameters under /aws/service/eks/optimized-ami/... and
// /aws/service/bottlerocket/... resolve as Karpenter resolves its aliases
// (aws-apis.md §5), at the twin's current time, so an AMI released after
// "now" is not yet published.
type AMIs struct {
	now func() time.Time
	// extra are images beyond the catalog (a scenario's custom AMIs).
	extra []catalog.AMI
}

var (
	_ awsport.Images     = (*AMIs)(nil)
	_ awsport.Parameters = (*AMIs)(nil)
)

// NewAMIs returns the AMI ports; now is the twin's clock, extra the
// scenario's own AMIs.
func NewAMIs(now func() time.Time, extra ...catalog.AMI) *AMIs {
	return &AMIs{now: now, extra: extra}
}

// amazonOwner is the account that publishes the EKS-optimized AMIs in most
// regions (us-west-2 among them).
const amazonOwner = "602401143452"

// ec2MaxResults bounds DescribeImages' pages (MaxResults 5-1000).
const ec2MaxResults = 1000

func (a *AMIs) images() []catalog.AMI {
	all := append(catalog.AMIs(), a.extra...)
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all
}

// DescribeImages implements awsport.Images: by ImageIds and by the
// filters Karpenter and upgrade tools send (name, image-id, state,
// architecture; '*' and '?' wildcards), sorted by id and paginated. An
// ImageId that is not an image is InvalidAMIID.NotFound, one that is not
// shaped like one InvalidAMIID.Malformed (EC2 models no errors: they are
// smithy.GenericAPIError codes, aws-apis.md §4).
func (a *AMIs) DescribeImages(_ context.Context, in *ec2.DescribeImagesInput, _ ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error) {
	byID := map[string]catalog.AMI{}
	for _, img := range a.images() {
		byID[img.ID] = img
	}
	for _, id := range in.ImageIds {
		if !strings.HasPrefix(id, "ami-") {
			return nil, &smithy.GenericAPIError{Code: "InvalidAMIID.Malformed", Message: fmt.Sprintf("Invalid id: %q (expecting \"ami-...\")", id)}
		}
		if _, ok := byID[id]; !ok {
			return nil, &smithy.GenericAPIError{Code: "InvalidAMIID.NotFound", Message: fmt.Sprintf("The image id '[%s]' does not exist", id)}
		}
	}
	var out []ec2types.Image
	for _, img := range a.images() {
		if len(in.ImageIds) > 0 && !contains(in.ImageIds, img.ID) {
			continue
		}
		if len(in.Owners) > 0 && !contains(in.Owners, "amazon") && !contains(in.Owners, amazonOwner) {
			continue
		}
		d := describeImage(img)
		if !matchesFilters(d, in.Filters) {
			continue
		}
		out = append(out, d)
	}
	if in.MaxResults != nil && (*in.MaxResults < 5 || *in.MaxResults > ec2MaxResults) {
		return nil, &smithy.GenericAPIError{Code: "InvalidParameterValue", Message: fmt.Sprintf("Value ( %d ) for parameter maxResults is invalid. Parameter must be between 5 and 1000.", *in.MaxResults)}
	}
	items, next, err := page(out, in.MaxResults, in.NextToken, ec2MaxResults)
	if err != nil {
		return nil, &smithy.GenericAPIError{Code: "InvalidPaginationToken", Message: err.Error()}
	}
	return &ec2.DescribeImagesOutput{Images: items, NextToken: next}, nil
}

func describeImage(img catalog.AMI) ec2types.Image {
	return ec2types.Image{
		ImageId:         ptr(img.ID),
		Name:            ptr(img.Name),
		State:           ec2types.ImageStateAvailable,
		CreationDate:    ptr(img.ReleaseDate.Format("2006-01-02T15:04:05.000Z")),
		Architecture:    ec2types.ArchitectureValues(img.Arch),
		OwnerId:         ptr(amazonOwner),
		ImageOwnerAlias: ptr("amazon"),
		PlatformDetails: ptr("Linux/UNIX"),
		RootDeviceType:  ec2types.DeviceTypeEbs,
		Public:          ptr(true),
	}
}

// matchesFilters applies EC2's filters: every filter must match, any of a
// filter's values may. A filter the twin does not know matches nothing.
func matchesFilters(img ec2types.Image, filters []ec2types.Filter) bool {
	for _, f := range filters {
		var field string
		switch aws.ToString(f.Name) {
		case "name":
			field = aws.ToString(img.Name)
		case "image-id":
			field = aws.ToString(img.ImageId)
		case "state":
			field = string(img.State)
		case "architecture":
			field = string(img.Architecture)
		case "owner-alias":
			field = aws.ToString(img.ImageOwnerAlias)
		default:
			return false
		}
		ok := false
		for _, v := range f.Values {
			if m, err := path.Match(v, field); err == nil && m {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// GetParameter implements awsport.Parameters for the EKS-optimized AMI
// parameters; any other name is ParameterNotFound.
func (a *AMIs) GetParameter(_ context.Context, in *ssm.GetParameterInput, _ ...func(*ssm.Options)) (*ssm.GetParameterOutput, error) {
	p, ok := a.parameter(aws.ToString(in.Name))
	if !ok {
		return nil, &ssmtypes.ParameterNotFound{Message: ptr(fmt.Sprintf("Parameter %s not found.", aws.ToString(in.Name)))}
	}
	return &ssm.GetParameterOutput{Parameter: p}, nil
}

// GetParameters implements awsport.Parameters: names not found are listed
// in InvalidParameters, not an error; more than ten names is a
// ValidationException.
func (a *AMIs) GetParameters(_ context.Context, in *ssm.GetParametersInput, _ ...func(*ssm.Options)) (*ssm.GetParametersOutput, error) {
	if len(in.Names) < 1 || len(in.Names) > 10 {
		return nil, &smithy.GenericAPIError{Code: "ValidationException",
			Message: fmt.Sprintf("1 validation error detected: Value at 'names' failed to satisfy constraint: Member must have length less than or equal to 10 and greater than or equal to 1 (got %d)", len(in.Names))}
	}
	out := &ssm.GetParametersOutput{Parameters: []ssmtypes.Parameter{}, InvalidParameters: []string{}}
	for _, name := range in.Names {
		if p, ok := a.parameter(name); ok {
			out.Parameters = append(out.Parameters, *p)
		} else {
			out.InvalidParameters = append(out.InvalidParameters, name)
		}
	}
	return out, nil
}

// parameter resolves a public AMI parameter's image_id.
func (a *AMIs) parameter(name string) (*ssmtypes.Parameter, bool) {
	alias, minor, arch, ok := parseAMIParameter(name)
	if !ok {
		return nil, false
	}
	img, err := catalog.ResolveAlias(alias, minor, arch, a.now())
	if err != nil {
		return nil, false
	}
	return &ssmtypes.Parameter{
		Name:             ptr(name),
		Type:             ssmtypes.ParameterTypeString,
		Value:            ptr(img.ID),
		Version:          1,
		DataType:         ptr("text"),
		LastModifiedDate: ptr(img.ReleaseDate),
		ARN:              ptr("arn:aws:ssm:us-west-2::parameter" + name),
	}, true
}

// parseAMIParameter reads an EKS-optimized AMI parameter name as the alias
// it stands for (aws-apis.md §5, the formats of karpenter-provider-aws
// pkg/providers/amifamily):
//
//	/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id
//	/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.31-v20250101/image_id
//	/aws/service/eks/optimized-ami/1.31/amazon-linux-2[-arm64]/recommended/image_id
//	/aws/service/eks/optimized-ami/1.31/amazon-linux-2[-arm64]/amazon-eks[-arm64]-node-1.31-v20250101/image_id
//	/aws/service/bottlerocket/aws-k8s-1.31/x86_64/latest/image_id
//	/aws/service/bottlerocket/aws-k8s-1.31/x86_64/1.20.0/image_id
func parseAMIParameter(name string) (alias, minor, arch string, ok bool) {
	p := strings.Split(strings.TrimPrefix(name, "/"), "/")
	if len(p) < 7 || p[0] != "aws" || p[1] != "service" || p[len(p)-1] != "image_id" {
		return "", "", "", false
	}
	// pinned is the release of a pinned AMI name, "v20250101".
	pinned := func(s string) string {
		if i := strings.LastIndex(s, "-v"); i >= 0 {
			return s[i+1:]
		}
		return ""
	}
	switch {
	case len(p) == 10 && p[2] == "eks" && p[3] == "optimized-ami" && p[5] == "amazon-linux-2023" && p[7] == "standard":
		v := catalog.AliasVersionLatest
		if p[8] != "recommended" {
			v = pinned(p[8])
		}
		return catalog.FamilyAL2023 + "@" + v, p[4], p[6], v != ""
	case len(p) == 8 && p[2] == "eks" && p[3] == "optimized-ami" && (p[5] == "amazon-linux-2" || p[5] == "amazon-linux-2-arm64"):
		arch = catalog.ArchX8664
		if p[5] == "amazon-linux-2-arm64" {
			arch = catalog.ArchARM64
		}
		v := catalog.AliasVersionLatest
		if p[6] != "recommended" {
			v = pinned(p[6])
		}
		return catalog.FamilyAL2 + "@" + v, p[4], arch, v != ""
	case len(p) == 7 && p[2] == "bottlerocket" && strings.HasPrefix(p[3], "aws-k8s-"):
		v := p[5]
		if v != catalog.AliasVersionLatest {
			v = "v" + strings.TrimPrefix(v, "v")
		}
		return catalog.FamilyBottlerocket + "@" + v, strings.TrimPrefix(p[3], "aws-k8s-"), p[4], true
	}
	return "", "", "", false
}
