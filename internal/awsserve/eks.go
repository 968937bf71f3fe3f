package awsserve

import (
	"net/http"

	"github.com/aws/aws-sdk-go-v2/service/eks/schemas"

	"github.com/ladder-eks/ladder/internal/awsport"
)

// NewEKS serves the EKS operations of awsport.EKS over api in restJson1
// (aws-apis.md §2.1): each at its method and URI, its input read where the
// SDK writes it, its answer and its typed errors — ResourceInUseException
// 409, InvalidParameterException 400, ResourceNotFoundException 404, with
// the port's messages (§2.2) — written as the SDK reads them.
func NewEKS(api awsport.EKS) http.Handler {
	m := newRestJSONMux()
	restJSONRoute(m, schemas.DescribeCluster, schemas.DescribeClusterRequest, api.DescribeCluster)
	restJSONRoute(m, schemas.UpdateClusterVersion, schemas.UpdateClusterVersionRequest, api.UpdateClusterVersion)
	restJSONRoute(m, schemas.DescribeUpdate, schemas.DescribeUpdateRequest, api.DescribeUpdate)

	restJSONRoute(m, schemas.ListNodegroups, schemas.ListNodegroupsRequest, api.ListNodegroups)
	restJSONRoute(m, schemas.DescribeNodegroup, schemas.DescribeNodegroupRequest, api.DescribeNodegroup)
	restJSONRoute(m, schemas.UpdateNodegroupVersion, schemas.UpdateNodegroupVersionRequest, api.UpdateNodegroupVersion)
	restJSONRoute(m, schemas.CreateNodegroup, schemas.CreateNodegroupRequest, api.CreateNodegroup)
	restJSONRoute(m, schemas.DeleteNodegroup, schemas.DeleteNodegroupRequest, api.DeleteNodegroup)

	restJSONRoute(m, schemas.ListAddons, schemas.ListAddonsRequest, api.ListAddons)
	restJSONRoute(m, schemas.DescribeAddon, schemas.DescribeAddonRequest, api.DescribeAddon)
	restJSONRoute(m, schemas.DescribeAddonVersions, schemas.DescribeAddonVersionsRequest, api.DescribeAddonVersions)
	restJSONRoute(m, schemas.UpdateAddon, schemas.UpdateAddonRequest, api.UpdateAddon)

	restJSONRoute(m, schemas.ListFargateProfiles, schemas.ListFargateProfilesRequest, api.ListFargateProfiles)
	restJSONRoute(m, schemas.DescribeFargateProfile, schemas.DescribeFargateProfileRequest, api.DescribeFargateProfile)
	restJSONRoute(m, schemas.ListInsights, schemas.ListInsightsRequest, api.ListInsights)
	restJSONRoute(m, schemas.DescribeClusterVersions, schemas.DescribeClusterVersionsRequest, api.DescribeClusterVersions)
	// ListClusters only where the port can answer it: a client that finds
	// its cluster by listing them (Ladder with no cluster name) gets the
	// one cluster the endpoints serve.
	if l, ok := api.(awsport.ClusterLister); ok {
		restJSONRoute(m, schemas.ListClusters, schemas.ListClustersRequest, l.ListClusters)
	}
	return m
}
