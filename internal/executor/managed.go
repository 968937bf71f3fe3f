package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/smithy-go"

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
	var update *ekstypes.Update
	if err := e.WaitFor(ctx, kubeport.Until{What: "node group " + name + " update " + id, Holds: func(ctx context.Context) (bool, error) {
		out, err := e.Ports.EKS.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: aws.String(e.Cluster), NodegroupName: aws.String(name), UpdateId: aws.String(id)})
		if err != nil {
			return false, cliError("DescribeUpdate", err)
		}
		update = out.Update
		return update.Status != ekstypes.UpdateStatusInProgress, nil
	}}); err != nil {
		return err
	}
	if update.Status != ekstypes.UpdateStatusSuccessful {
		var errs []string
		for _, d := range update.Errors {
			errs = append(errs, fmt.Sprintf("%s: %s", d.ErrorCode, aws.ToString(d.ErrorMessage)))
		}
		return fmt.Errorf("node group %s: update %s: %s", name, update.Status, strings.Join(errs, "; "))
	}
	return e.WaitFor(ctx, kubeport.NodesAtMinor{Label: nodegroupLabel, Value: name, Minor: to})
}

// cliError words an AWS API error as the AWS CLI prints it:
// "An error occurred (Code) when calling the Op operation: message".
func cliError(op string, err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return fmt.Errorf("An error occurred (%s) when calling the %s operation: %s", ae.ErrorCode(), op, ae.ErrorMessage())
	}
	return err
}
