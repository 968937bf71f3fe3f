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

// ClusterAPI is the part of the EKS API (awsport.EKS) the control-plane
// step calls: the cluster, UpdateClusterVersion and DescribeUpdate.
type ClusterAPI interface {
	DescribeCluster(ctx context.Context, params *eks.DescribeClusterInput, optFns ...func(*eks.Options)) (*eks.DescribeClusterOutput, error)
	UpdateClusterVersion(ctx context.Context, params *eks.UpdateClusterVersionInput, optFns ...func(*eks.Options)) (*eks.UpdateClusterVersionOutput, error)
	DescribeUpdate(ctx context.Context, params *eks.DescribeUpdateInput, optFns ...func(*eks.Options)) (*eks.DescribeUpdateOutput, error)
}

// UpgradeControlPlane is UpdateClusterVersion to `to`, then DescribeUpdate
// until the update is no longer InProgress (semantics.md §E: one minor at a
// time, pods are not restarted, the endpoint and OIDC issuer stay). EKS's
// refusal is returned as "Code: message".
func (e *Executor) UpgradeControlPlane(ctx context.Context, to kubeversion.Minor) error {
	before, err := e.describeCluster(ctx)
	if err != nil {
		return err
	}
	id, resumed, err := e.once("UpdateClusterVersion", func(token *string) (string, error) {
		up, err := e.Ports.EKS.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: aws.String(e.Cluster), Version: aws.String(to.String()), ClientRequestToken: token})
		if err != nil {
			return "", apiError(err)
		}
		return aws.ToString(up.Update.Id), nil
	})
	if err != nil {
		return err
	}
	if !resumed {
		e.Observer.Event("Normal", "ControlPlaneUpdating", fmt.Sprintf("updating the control plane from %s to %s (status UPDATING; pods are not restarted)", aws.ToString(before.Version), to))
	}
	update, err := e.waitForUpdate(ctx, "control-plane update "+id, &eks.DescribeUpdateInput{Name: aws.String(e.Cluster), UpdateId: aws.String(id)}, apiError)
	if err != nil {
		return err
	}
	if update.Status != ekstypes.UpdateStatusSuccessful {
		return fmt.Errorf("control-plane update %s to %s: %s: %s", id, to, update.Status, updateErrors(update))
	}
	after, err := e.describeCluster(ctx)
	if err != nil {
		return err
	}
	kept := "endpoint and OIDC issuer unchanged"
	if aws.ToString(after.Endpoint) != aws.ToString(before.Endpoint) || oidcIssuer(after) != oidcIssuer(before) {
		kept = fmt.Sprintf("endpoint %s, OIDC issuer %s", aws.ToString(after.Endpoint), oidcIssuer(after))
	}
	e.Observer.Event("Normal", "ControlPlaneUpdated", fmt.Sprintf("control plane updated to %s (status %s; %s)", aws.ToString(after.Version), after.Status, kept))
	return nil
}

// waitForUpdate polls DescribeUpdate (in is sent on every poll: the twin
// reads the gate after each of its events) until the update is no longer
// InProgress; wrap words the API's errors.
func (e *Executor) waitForUpdate(ctx context.Context, what string, in *eks.DescribeUpdateInput, wrap func(error) error) (*ekstypes.Update, error) {
	var update *ekstypes.Update
	err := e.WaitFor(ctx, kubeport.Until{What: what, Holds: func(ctx context.Context) (bool, error) {
		out, err := e.Ports.EKS.DescribeUpdate(ctx, in)
		if err != nil {
			return false, wrap(err)
		}
		update = out.Update
		return update.Status != ekstypes.UpdateStatusInProgress, nil
	}})
	return update, err
}

// updateErrors lists a failed update's errors as "Code: message; ...".
func updateErrors(u *ekstypes.Update) string {
	errs := make([]string, 0, len(u.Errors))
	for _, d := range u.Errors {
		errs = append(errs, fmt.Sprintf("%s: %s", d.ErrorCode, aws.ToString(d.ErrorMessage)))
	}
	return strings.Join(errs, "; ")
}

func (e *Executor) describeCluster(ctx context.Context) (*ekstypes.Cluster, error) {
	out, err := e.Ports.EKS.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(e.Cluster)})
	if err != nil {
		return nil, apiError(err)
	}
	return out.Cluster, nil
}

func oidcIssuer(c *ekstypes.Cluster) string {
	if c.Identity == nil || c.Identity.Oidc == nil {
		return ""
	}
	return aws.ToString(c.Identity.Oidc.Issuer)
}

// apiError words an AWS API error as the console and the CLI show it,
// "InvalidParameterException: message", without the SDK's "api error"
// prefix and operation wrapping; other errors pass unchanged.
func apiError(err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return errors.New(ae.ErrorCode() + ": " + ae.ErrorMessage())
	}
	return err
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
