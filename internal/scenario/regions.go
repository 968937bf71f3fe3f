package scenario

import (
	"slices"
	"strings"
)

// regions are the AWS Regions of the SDK's partition table
// (aws-sdk-go-v2 v1.42.1 internal/endpoints/awsrulesfn/partitions.go, which
// the EKS client resolves endpoints with; the table is internal to the
// SDK, so it is copied here): a cluster's region must be one of them.
var regions = []string{
	"af-south-1", "ap-east-1", "ap-east-2", "ap-northeast-1", "ap-northeast-2", "ap-northeast-3",
	"ap-south-1", "ap-south-2", "ap-southeast-1", "ap-southeast-2", "ap-southeast-3", "ap-southeast-4",
	"ap-southeast-5", "ap-southeast-6", "ap-southeast-7", "ca-central-1", "ca-west-1",
	"cn-north-1", "cn-northwest-1", "eu-central-1", "eu-central-2", "eu-isoe-west-1", "eu-north-1",
	"eu-south-1", "eu-south-2", "eu-west-1", "eu-west-2", "eu-west-3", "eusc-de-east-1",
	"il-central-1", "me-central-1", "me-south-1", "mx-central-1", "sa-east-1",
	"us-east-1", "us-east-2", "us-gov-east-1", "us-gov-west-1", "us-iso-east-1", "us-iso-west-1",
	"us-isob-east-1", "us-isob-west-1", "us-isof-east-1", "us-isof-south-1", "us-west-1", "us-west-2",
}

// knownRegion reports whether region is an AWS Region.
func knownRegion(region string) bool { return slices.Contains(regions, region) }

// regionsNear lists the regions that share region's geography prefix
// ("eu" for "eu-wset-1"), for a hint; "" when none does.
func regionsNear(region string) string {
	prefix, _, _ := strings.Cut(region, "-")
	var near []string
	for _, r := range regions {
		if strings.HasPrefix(r, prefix+"-") {
			near = append(near, r)
		}
	}
	return strings.Join(near, ", ")
}
