package twinaws

import (
	"errors"
	"strings"

	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
)

// EKS's errors are the SDK's typed exceptions (aws-apis.md §2.2), so that a
// caller's errors.As works on the twin as on the service.

func clusterNotFound(name string) error {
	return &ekstypes.ResourceNotFoundException{Message: ptr("No cluster found for name: " + name + "."), ClusterName: &name}
}

func nodegroupNotFound(cluster, ng string) error {
	return &ekstypes.ResourceNotFoundException{Message: ptr("No node group found for name: " + ng + "."), ClusterName: &cluster, NodegroupName: &ng}
}

func addonNotFound(cluster, addon string) error {
	return &ekstypes.ResourceNotFoundException{Message: ptr("No addon: " + addon + " found in cluster: " + cluster), ClusterName: &cluster, AddonName: &addon}
}

func fargateProfileNotFound(cluster, profile string) error {
	return &ekstypes.ResourceNotFoundException{Message: ptr("No Fargate Profile found with name: " + profile + "."), ClusterName: &cluster, FargateProfileName: &profile}
}

func updateNotFound(id string) error {
	return &ekstypes.ResourceNotFoundException{Message: ptr("No update found for ID: " + id)}
}

func invalidParameter(cluster, msg string) error {
	return &ekstypes.InvalidParameterException{Message: &msg, ClusterName: &cluster}
}

// eksError turns a twin's refusal into the exception EKS raises for it.
// The twins name the exception: *nodegroup.Error carries its code, and the
// control plane's messages start with "<Exception>: ". A refusal without
// one (a kubelet outside the skew policy) is a request the cluster's state
// does not allow: InvalidRequestException.
func eksError(cluster, group string, err error) error {
	code, msg := nodegroup.InvalidRequestException, err.Error()
	var me *nodegroup.Error
	if errors.As(err, &me) {
		code, msg = me.Code, me.Message
	} else if c, rest, ok := strings.Cut(msg, ": "); ok && strings.HasSuffix(c, "Exception") {
		code, msg = c, rest
	}
	var ng *string
	if group != "" {
		ng = &group
	}
	switch code {
	case nodegroup.InvalidParameterException:
		return &ekstypes.InvalidParameterException{Message: &msg, ClusterName: &cluster, NodegroupName: ng}
	case nodegroup.ResourceInUseException:
		return &ekstypes.ResourceInUseException{Message: &msg, ClusterName: &cluster, NodegroupName: ng}
	case nodegroup.ResourceNotFoundException:
		return &ekstypes.ResourceNotFoundException{Message: &msg, ClusterName: &cluster, NodegroupName: ng}
	default:
		return &ekstypes.InvalidRequestException{Message: &msg, ClusterName: &cluster, NodegroupName: ng}
	}
}
