package twinaws

import (
	"fmt"
	"hash/fnv"

	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
)

// The twin's node groups live in Availability Zones; EKS's API names
// subnets. Each zone of the cluster has one subnet, with an id derived from
// the cluster and the zone, so a node group's subnets read back from
// DescribeNodegroup can be passed to CreateNodegroup, as a blue/green
// upgrade does with the blue group's.

// SubnetID is the id of the cluster's subnet in zone.
func SubnetID(cluster, zone string) string {
	h := fnv.New64a()
	h.Write([]byte(cluster + "/" + zone))
	return fmt.Sprintf("subnet-%017x", h.Sum64()&0xfffffffffffffff)
}

// subnetIDs are the subnets of zones.
func (e *EKS) subnetIDs(zones []string) []string {
	out := make([]string, len(zones))
	for i, z := range zones {
		out[i] = SubnetID(e.opts.Cluster, z)
	}
	return out
}

// subnetZones are the zones of subnets: CreateNodegroup's subnets are
// required, and each must be one of the cluster's.
func (e *EKS) subnetZones(name string, subnets []string) ([]string, error) {
	if len(subnets) == 0 {
		return nil, &ekstypes.InvalidParameterException{ClusterName: &e.opts.Cluster, NodegroupName: &name,
			Message: ptr("subnets: specify at least one subnet for the node group")}
	}
	byID := map[string]string{}
	for _, z := range e.opts.Nodegroups.Zones() {
		byID[SubnetID(e.opts.Cluster, z)] = z
	}
	zones := make([]string, 0, len(subnets))
	for _, id := range subnets {
		z, ok := byID[id]
		if !ok {
			return nil, &ekstypes.InvalidParameterException{ClusterName: &e.opts.Cluster, NodegroupName: &name,
				Message: ptr(fmt.Sprintf("The subnet ID '%s' does not exist", id))}
		}
		zones = append(zones, z)
	}
	return zones, nil
}
