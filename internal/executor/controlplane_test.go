package executor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/sim"
)

// fakeEKS is a control plane on the twin's clock: an update is InProgress
// for took, then Successful (or Failed with an error detail).
type fakeEKS struct {
	NodegroupAPI // not called by these tests
	eng          *sim.Engine
	version      string
	took         time.Duration
	updating     bool
	refuse       error
	fail         bool
	// applyAddon is what UpdateAddon does to the cluster.
	applyAddon func(version string) error
}

func (f *fakeEKS) DescribeCluster(context.Context, *eks.DescribeClusterInput, ...func(*eks.Options)) (*eks.DescribeClusterOutput, error) {
	status := ekstypes.ClusterStatusActive
	if f.updating {
		status = ekstypes.ClusterStatusUpdating
	}
	return &eks.DescribeClusterOutput{Cluster: &ekstypes.Cluster{Name: aws.String("demo"), Version: aws.String(f.version), Status: status, Endpoint: aws.String("https://demo.example")}}, nil
}

func (f *fakeEKS) UpdateClusterVersion(_ context.Context, in *eks.UpdateClusterVersionInput, _ ...func(*eks.Options)) (*eks.UpdateClusterVersionOutput, error) {
	if f.refuse != nil {
		return nil, f.refuse
	}
	f.updating = true
	f.eng.After(f.took, func() {
		f.updating = false
		if !f.fail {
			f.version = aws.ToString(in.Version)
		}
	})
	return &eks.UpdateClusterVersionOutput{Update: &ekstypes.Update{Id: aws.String("u-1"), Status: ekstypes.UpdateStatusInProgress}}, nil
}

func (f *fakeEKS) DescribeUpdate(_ context.Context, in *eks.DescribeUpdateInput, _ ...func(*eks.Options)) (*eks.DescribeUpdateOutput, error) {
	u := &ekstypes.Update{Id: in.UpdateId, Status: ekstypes.UpdateStatusSuccessful}
	switch {
	case f.updating:
		u.Status = ekstypes.UpdateStatusInProgress
	case f.fail:
		u.Status = ekstypes.UpdateStatusFailed
		u.Errors = []ekstypes.ErrorDetail{{ErrorCode: ekstypes.ErrorCodeIpNotAvailable, ErrorMessage: aws.String("subnet-1 has no free address")}}
	}
	return &eks.DescribeUpdateOutput{Update: u}, nil
}

// TestUpgradeControlPlaneErrors: EKS's refusal reads as the console shows
// it (code: message, not the SDK's "api error" wrapping), and a Failed
// update names its status and error details.
func TestUpgradeControlPlaneErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		refuse error
		fail   bool
		want   string
	}{
		{name: "refused", refuse: &ekstypes.InvalidParameterException{Message: aws.String("unsupported Kubernetes minor version update from 1.30 to 1.32")},
			want: "InvalidParameterException: unsupported Kubernetes minor version update from 1.30 to 1.32"},
		{name: "failed", fail: true, want: "control-plane update u-1 to 1.31: Failed: IpNotAvailable: subnet-1 has no free address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			ex, api := executor(t, rec, time.Hour)
			api.refuse, api.fail = tc.refuse, tc.fail
			err := ex.UpgradeControlPlane(context.Background(), kubeversion.MustParse("1.31"))
			if fmt.Sprint(err) != tc.want {
				t.Errorf("UpgradeControlPlane = %v, want %s", err, tc.want)
			}
		})
	}
}

// UpdateAddon is EKS applying the add-on's manifests: coredns's Deployment
// gets the version's image.
func (f *fakeEKS) UpdateAddon(ctx context.Context, in *eks.UpdateAddonInput, _ ...func(*eks.Options)) (*eks.UpdateAddonOutput, error) {
	if f.refuse != nil {
		return nil, f.refuse
	}
	return &eks.UpdateAddonOutput{Update: &ekstypes.Update{Id: aws.String("u-2"), Status: ekstypes.UpdateStatusInProgress}}, f.applyAddon(aws.ToString(in.AddonVersion))
}
