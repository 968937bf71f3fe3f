package rehearse

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/eks"
)

// TestClusterAPI: the control plane's twin answers as EKS does — UPDATING
// and InProgress for the update's duration, then ACTIVE at the new version
// and Successful; a second minor at once is the InvalidParameterException
// the twin's rule words; unknown clusters and updates are
// ResourceNotFoundException.
func TestClusterAPI(t *testing.T) {
	ctx := context.Background()
	eng := sim.New(time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC), 1)
	api := &clusterAPI{cp: eks.New(eng, "demo", "us-west-2", kubeversion.MustParse("1.30"), 10*time.Minute), name: "demo"}
	describe := func() (string, ekstypes.ClusterStatus) {
		t.Helper()
		out, err := api.DescribeCluster(ctx, &awseks.DescribeClusterInput{Name: aws.String("demo")})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.Cluster.Version), out.Cluster.Status
	}
	_, err := api.UpdateClusterVersion(ctx, &awseks.UpdateClusterVersionInput{Name: aws.String("demo"), Version: aws.String("1.32")})
	var invalid *ekstypes.InvalidParameterException
	if !errors.As(err, &invalid) {
		t.Fatalf("update to 1.32 from 1.30 = %v, want InvalidParameterException", err)
	}
	up, err := api.UpdateClusterVersion(ctx, &awseks.UpdateClusterVersionInput{Name: aws.String("demo"), Version: aws.String("1.31")})
	if err != nil {
		t.Fatal(err)
	}
	id := up.Update.Id
	if v, s := describe(); v != "1.30" || s != ekstypes.ClusterStatusUpdating || up.Update.Status != ekstypes.UpdateStatusInProgress {
		t.Errorf("during the update: cluster %s %s, update %s; want 1.30 UPDATING, InProgress", v, s, up.Update.Status)
	}
	eng.RunUntil(eng.Now().Add(10 * time.Minute))
	got, err := api.DescribeUpdate(ctx, &awseks.DescribeUpdateInput{Name: aws.String("demo"), UpdateId: id})
	if err != nil {
		t.Fatal(err)
	}
	if v, s := describe(); v != "1.31" || s != ekstypes.ClusterStatusActive || got.Update.Status != ekstypes.UpdateStatusSuccessful {
		t.Errorf("after 10 minutes: cluster %s %s, update %s; want 1.31 ACTIVE, Successful", v, s, got.Update.Status)
	}
	var notFound *ekstypes.ResourceNotFoundException
	if _, err := api.DescribeUpdate(ctx, &awseks.DescribeUpdateInput{Name: aws.String("demo"), UpdateId: aws.String("nope")}); !errors.As(err, &notFound) {
		t.Errorf("DescribeUpdate of an unknown id = %v, want ResourceNotFoundException", err)
	}
	if _, err := api.DescribeCluster(ctx, &awseks.DescribeClusterInput{Name: aws.String("other")}); !errors.As(err, &notFound) {
		t.Errorf("DescribeCluster of another cluster = %v, want ResourceNotFoundException", err)
	}
}
