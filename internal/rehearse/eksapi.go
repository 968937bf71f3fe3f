package rehearse

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/ladder-eks/ladder/internal/executor"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/twin/eks"
)

// clusterAPI answers the executor's EKS calls on the control plane's twin:
// DescribeCluster, UpdateClusterVersion and DescribeUpdate, with the SDK's
// types and exceptions (aws-apis.md §2). Update ids are UUID-shaped and
// derived from the cluster and the update's number, so that they are the
// same on every run without drawing on the engine's random source.
type clusterAPI struct {
	cp   *eks.ControlPlane
	name string
	// updates maps an update id to its target; current is the id of the
	// latest.
	updates map[string]kubeversion.Minor
	current string
	// run applies an add-on's new images to its workloads (UpdateAddon).
	run *run
}

var _ executor.ClusterAPI = (*clusterAPI)(nil)

func (c *clusterAPI) notFound(name string) error {
	return &ekstypes.ResourceNotFoundException{Message: aws.String(fmt.Sprintf("No cluster found for name: %s.", name)), ClusterName: aws.String(name)}
}

// DescribeCluster: the version, UPDATING while an update runs, the
// endpoint and the OIDC issuer.
func (c *clusterAPI) DescribeCluster(_ context.Context, in *awseks.DescribeClusterInput, _ ...func(*awseks.Options)) (*awseks.DescribeClusterOutput, error) {
	if aws.ToString(in.Name) != c.name {
		return nil, c.notFound(aws.ToString(in.Name))
	}
	status := ekstypes.ClusterStatusActive
	if c.cp.Updating() {
		status = ekstypes.ClusterStatusUpdating
	}
	return &awseks.DescribeClusterOutput{Cluster: &ekstypes.Cluster{
		Name: aws.String(c.name), Version: aws.String(c.cp.Version().String()), Status: status,
		Endpoint: aws.String(c.cp.Endpoint()),
		Identity: &ekstypes.Identity{Oidc: &ekstypes.OIDC{Issuer: aws.String(c.cp.OIDCIssuer())}},
	}}, nil
}

// UpdateClusterVersion starts the twin's update; its refusals become the
// exceptions their codes name.
func (c *clusterAPI) UpdateClusterVersion(_ context.Context, in *awseks.UpdateClusterVersionInput, _ ...func(*awseks.Options)) (*awseks.UpdateClusterVersionOutput, error) {
	if aws.ToString(in.Name) != c.name {
		return nil, c.notFound(aws.ToString(in.Name))
	}
	target, err := kubeversion.Parse(aws.ToString(in.Version))
	if err != nil {
		return nil, &ekstypes.InvalidParameterException{Message: aws.String(err.Error()), ClusterName: aws.String(c.name)}
	}
	if err := c.cp.Update(target, nil); err != nil {
		return nil, eksException(err, c.name)
	}
	c.current = c.newUpdate(target)
	return &awseks.UpdateClusterVersionOutput{Update: c.update(c.current)}, nil
}

// newUpdate records an update and returns its id.
func (c *clusterAPI) newUpdate(target kubeversion.Minor) string {
	if c.updates == nil {
		c.updates = map[string]kubeversion.Minor{}
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/update/%d", c.name, len(c.updates))))
	id := fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
	c.updates[id] = target
	return id
}

// UpdateAddon checks the update with EKS's rules (eks.CheckAddonUpdate)
// and applies the version's images to the add-on's workloads, which then
// roll out by their own strategies. The version the add-on reports moves
// once they have (the executor's AddonVersion).
func (c *clusterAPI) UpdateAddon(_ context.Context, in *awseks.UpdateAddonInput, _ ...func(*awseks.Options)) (*awseks.UpdateAddonOutput, error) {
	if aws.ToString(in.ClusterName) != c.name {
		return nil, c.notFound(aws.ToString(in.ClusterName))
	}
	name, to := aws.ToString(in.AddonName), aws.ToString(in.AddonVersion)
	if err := eks.CheckAddonUpdate(name, c.run.addonVersion(name), to, c.cp.Version(), c.cp.Kubelets()); err != nil {
		return nil, &ekstypes.InvalidParameterException{Message: aws.String(err.Error()), ClusterName: aws.String(c.name), AddonName: in.AddonName}
	}
	v, _ := eks.ParseAddonVersion(to)
	if err := c.run.applyAddonImages(name, v); err != nil {
		return nil, err
	}
	id := c.newUpdate(c.cp.Version())
	return &awseks.UpdateAddonOutput{Update: &ekstypes.Update{Id: aws.String(id), Status: ekstypes.UpdateStatusInProgress, Type: ekstypes.UpdateTypeAddonUpdate,
		Params: []ekstypes.UpdateParam{{Type: ekstypes.UpdateParamTypeAddonVersion, Value: aws.String(to)}}}}, nil
}

// DescribeUpdate: InProgress until the twin's update completes.
func (c *clusterAPI) DescribeUpdate(_ context.Context, in *awseks.DescribeUpdateInput, _ ...func(*awseks.Options)) (*awseks.DescribeUpdateOutput, error) {
	if aws.ToString(in.Name) != c.name {
		return nil, c.notFound(aws.ToString(in.Name))
	}
	id := aws.ToString(in.UpdateId)
	if _, ok := c.updates[id]; !ok || in.NodegroupName != nil || in.AddonName != nil {
		return nil, &ekstypes.ResourceNotFoundException{Message: aws.String(fmt.Sprintf("No update found for ID: %s.", id)), ClusterName: aws.String(c.name)}
	}
	return &awseks.DescribeUpdateOutput{Update: c.update(id)}, nil
}

func (c *clusterAPI) update(id string) *ekstypes.Update {
	status := ekstypes.UpdateStatusSuccessful
	if id == c.current && c.cp.Updating() {
		status = ekstypes.UpdateStatusInProgress
	}
	return &ekstypes.Update{Id: aws.String(id), Status: status, Type: ekstypes.UpdateTypeVersionUpdate,
		Params: []ekstypes.UpdateParam{{Type: ekstypes.UpdateParamTypeVersion, Value: aws.String(c.updates[id].String())}}}
}

// eksException turns the twin's "Code: message" refusal into the SDK's
// exception of that code; a refusal without a code stays as it is.
func eksException(err error, cluster string) error {
	code, msg, ok := strings.Cut(err.Error(), ": ")
	if !ok {
		return err
	}
	switch code {
	case "InvalidParameterException":
		return &ekstypes.InvalidParameterException{Message: aws.String(msg), ClusterName: aws.String(cluster)}
	case "InvalidRequestException":
		return &ekstypes.InvalidRequestException{Message: aws.String(msg), ClusterName: aws.String(cluster)}
	case "ResourceInUseException":
		return &ekstypes.ResourceInUseException{Message: aws.String(msg), ClusterName: aws.String(cluster)}
	}
	return err
}
