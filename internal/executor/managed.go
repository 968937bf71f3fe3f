package executor

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// NodegroupAPI is the part of the EKS API (awsport.EKS) the managed node
// group step calls.
type NodegroupAPI interface {
	UpdateNodegroupVersion(ctx context.Context, params *eks.UpdateNodegroupVersionInput, optFns ...func(*eks.Options)) (*eks.UpdateNodegroupVersionOutput, error)
}

// nodegroupLabel is the label EKS puts on a managed node group's nodes.
const nodegroupLabel = "eks.amazonaws.com/nodegroup"

// UpdateNodegroup is a managed node group's in-place hop on an EKS AMI
// (semantics.md §B): UpdateNodegroupVersion to the hop's version, then
// DescribeUpdate until it is no longer InProgress — EKS surges new nodes,
// drains the old ones a few at a time and fails the update with
// PodEvictionFailure when a PDB holds a pod past its retries (force skips
// that) — and every node of the group at the hop's kubelet.
func (e *Executor) UpdateNodegroup(ctx context.Context, name string, force bool, to kubeversion.Minor) error {
	up, err := e.Ports.EKS.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: aws.String(e.Cluster), NodegroupName: aws.String(name),
		Version: aws.String(to.String()), Force: force})
	if err != nil {
		return cliError("UpdateNodegroupVersion", err)
	}
	id := aws.ToString(up.Update.Id)
	update, err := e.waitForUpdate(ctx, "node group "+name+" update "+id,
		&eks.DescribeUpdateInput{Name: aws.String(e.Cluster), NodegroupName: aws.String(name), UpdateId: aws.String(id)},
		func(err error) error { return cliError("DescribeUpdate", err) })
	if err != nil {
		return err
	}
	if update.Status != ekstypes.UpdateStatusSuccessful {
		return fmt.Errorf("node group %s: update %s: %s", name, update.Status, updateErrors(update))
	}
	return e.WaitFor(ctx, kubeport.NodesAtMinor{Label: nodegroupLabel, Value: name, Minor: to})
}
