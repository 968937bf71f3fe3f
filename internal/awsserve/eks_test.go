package awsserve_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/awsport/conformance"
)

type eksHarness struct{}

func (eksHarness) NewEKSEnv(t *testing.T) conformance.EKSEnv { return newWireCluster(t) }

func (c *wireCluster) EKS() awsport.EKS           { return c.client }
func (c *wireCluster) Cluster() string            { return "wire" }
func (c *wireCluster) Nodegroups() [2]string      { return [2]string{"system", "apps"} }
func (c *wireCluster) Addon() (name, next string) { return "vpc-cni", "v1.19.2-eksbuild.1" }

// TestEKSConformanceOverTheWire runs the EKS port's conformance suite
// through aws-sdk-go-v2's EKS client against the server in front of the
// twins: every answer and every typed error crosses restJson1 as the SDK
// reads it.
func TestEKSConformanceOverTheWire(t *testing.T) {
	conformance.RunEKS(t, eksHarness{})
}

// The SDK's own waiter (aws-apis.md §1.10) sees the cluster ACTIVE again
// after its version update. The waiter sleeps on the wall clock between
// attempts, so the twin first finishes the update in virtual time.
func TestClusterActiveWaiter(t *testing.T) {
	c := newWireCluster(t)
	ctx := t.Context()
	out, err := c.client.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: aws.String("wire"), Version: aws.String("1.31")})
	if err != nil {
		t.Fatal(err)
	}
	err = eks.NewClusterActiveWaiter(c.client).Wait(ctx, &eks.DescribeClusterInput{Name: aws.String("wire")}, time.Millisecond,
		func(o *eks.ClusterActiveWaiterOptions) { o.MinDelay, o.MaxDelay = time.Millisecond, time.Millisecond })
	if err == nil {
		t.Fatal("ClusterActiveWaiter succeeded while the cluster is UPDATING")
	}
	err = c.Wait(ctx, 2*time.Hour, func(ctx context.Context) (bool, error) {
		u, err := c.client.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: aws.String("wire"), UpdateId: out.Update.Id})
		return err == nil && u.Update.Status == ekstypes.UpdateStatusSuccessful, err
	})
	if err != nil {
		t.Fatal(err)
	}
	desc, err := eks.NewClusterActiveWaiter(c.client).WaitForOutput(ctx, &eks.DescribeClusterInput{Name: aws.String("wire")}, time.Second)
	if err != nil {
		t.Fatalf("ClusterActiveWaiter after the update: %v", err)
	}
	if v := aws.ToString(desc.Cluster.Version); v != "1.31" {
		t.Errorf("cluster version %s after the update, want 1.31", v)
	}
}

// An operation EKS has but the server does not serve, and a path EKS does
// not have, are UnknownOperationException, which the SDK hands back as a
// generic API error with that code.
func TestEKSUnknownOperation(t *testing.T) {
	c := newWireCluster(t)
	_, err := c.client.ListClusters(t.Context(), &eks.ListClustersInput{})
	var ae interface{ ErrorCode() string }
	if !errors.As(err, &ae) || ae.ErrorCode() != "UnknownOperationException" {
		t.Fatalf("ListClusters: %v, want UnknownOperationException", err)
	}
	var re interface{ HTTPStatusCode() int }
	if !errors.As(err, &re) || re.HTTPStatusCode() != http.StatusNotFound {
		t.Errorf("ListClusters: status %v, want 404", err)
	}
}
