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
// group steps call.
type NodegroupAPI interface {
	DescribeNodegroup(ctx context.Context, params *eks.DescribeNodegroupInput, optFns ...func(*eks.Options)) (*eks.DescribeNodegroupOutput, error)
	UpdateNodegroupVersion(ctx context.Context, params *eks.UpdateNodegroupVersionInput, optFns ...func(*eks.Options)) (*eks.UpdateNodegroupVersionOutput, error)
	CreateNodegroup(ctx context.Context, params *eks.CreateNodegroupInput, optFns ...func(*eks.Options)) (*eks.CreateNodegroupOutput, error)
	DeleteNodegroup(ctx context.Context, params *eks.DeleteNodegroupInput, optFns ...func(*eks.Options)) (*eks.DeleteNodegroupOutput, error)
}

// nodegroupLabel is the label EKS puts on a managed node group's nodes.
const nodegroupLabel = "eks.amazonaws.com/nodegroup"

// UpdateNodegroup is a managed node group's in-place hop (semantics.md
// §B). On an EKS AMI: UpdateNodegroupVersion to the hop's version. On a
// custom AMI (its launch template names an image), a version bump does not
// reach the nodes: the launch template gets a new version with the hop's
// AMI and the group is updated to it (managed_customami.go). Either way
// the step waits until DescribeUpdate is no longer InProgress — EKS surges
// new nodes, drains the old ones a few at a time and fails the update with
// PodEvictionFailure when a PDB holds a pod past its retries (force skips
// that) — and every node of the group runs the hop's kubelet.
func (e *Executor) UpdateNodegroup(ctx context.Context, name string, force bool, to kubeversion.Minor) error {
	// The launch template version a custom AMI needs is part of the
	// operation: a resumed run makes neither again.
	id, _, err := e.once("UpdateNodegroupVersion", func(token *string) (string, error) {
		ng, err := e.describeNodegroup(ctx, name)
		if err != nil {
			return "", err
		}
		in := &eks.UpdateNodegroupVersionInput{ClusterName: aws.String(e.Cluster), NodegroupName: aws.String(name), Force: force, ClientRequestToken: token}
		lt, image, err := e.nodegroupImage(ctx, ng)
		if err != nil {
			return "", err
		}
		if image == "" {
			in.Version = aws.String(to.String())
		} else if in.LaunchTemplate, err = e.customAMIVersion(ctx, name, lt, image, to, token); err != nil {
			return "", err
		}
		up, err := e.Ports.EKS.UpdateNodegroupVersion(ctx, in)
		if err != nil {
			return "", cliError("UpdateNodegroupVersion", err)
		}
		return aws.ToString(up.Update.Id), nil
	})
	if err != nil {
		return err
	}
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

// describeNodegroup is DescribeNodegroup's node group.
func (e *Executor) describeNodegroup(ctx context.Context, name string) (*ekstypes.Nodegroup, error) {
	out, err := e.Ports.EKS.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String(e.Cluster), NodegroupName: aws.String(name)})
	if err != nil {
		return nil, cliError("DescribeNodegroup", err)
	}
	return out.Nodegroup, nil
}
