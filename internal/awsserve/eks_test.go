package awsserve_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/smithy-go"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/awsport/conformance"
	"github.com/ladder-eks/ladder/internal/awsserve"
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
	_, err := c.client.DescribeIdentityProviderConfig(t.Context(), &eks.DescribeIdentityProviderConfigInput{ClusterName: aws.String("wire"),
		IdentityProviderConfig: &ekstypes.IdentityProviderConfig{Name: aws.String("oidc"), Type: aws.String("oidc")}})
	var ae interface{ ErrorCode() string }
	if !errors.As(err, &ae) || ae.ErrorCode() != "UnknownOperationException" {
		t.Fatalf("DescribeIdentityProviderConfig: %v, want UnknownOperationException", err)
	}
	var re interface{ HTTPStatusCode() int }
	if !errors.As(err, &re) || re.HTTPStatusCode() != http.StatusNotFound {
		t.Errorf("DescribeIdentityProviderConfig: status %v, want 404", err)
	}
}

// EKS's exceptions cross with their httpError status (aws-apis.md §2.2) —
// 404 for an unknown cluster, 400 for a version two minors up, 409 while an
// update runs — and the x-amzn-RequestId the SDK reports.
func TestEKSErrorStatuses(t *testing.T) {
	c := newWireCluster(t)
	ctx := t.Context()
	status := func(err error) (code string, status int, requestID string) {
		var ae smithy.APIError
		var re *awshttp.ResponseError
		if errors.As(err, &ae) && errors.As(err, &re) {
			return ae.ErrorCode(), re.HTTPStatusCode(), re.ServiceRequestID()
		}
		return fmt.Sprint(err), 0, ""
	}
	_, err := c.client.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("missing")})
	if code, st, id := status(err); code != "ResourceNotFoundException" || st != http.StatusNotFound || id == "" {
		t.Errorf("DescribeCluster of a missing cluster: %s %d request %q, want ResourceNotFoundException 404 with a request id", code, st, id)
	}
	_, err = c.client.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: aws.String("wire"), Version: aws.String("1.32")})
	if code, st, _ := status(err); code != "InvalidParameterException" || st != http.StatusBadRequest {
		t.Errorf("UpdateClusterVersion 1.30 → 1.32: %s %d, want InvalidParameterException 400", code, st)
	}
	if _, err := c.client.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: aws.String("wire"), Version: aws.String("1.31")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.client.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: aws.String("wire"), Version: aws.String("1.31")})
	if code, st, _ := status(err); code != "ResourceInUseException" || st != http.StatusConflict {
		t.Errorf("UpdateClusterVersion during an update: %s %d, want ResourceInUseException 409", code, st)
	}
}

// ListClusters, served because the twins' port lists clusters, names the
// one cluster behind the endpoint.
func TestListClusters(t *testing.T) {
	c := newWireCluster(t)
	out, err := c.client.ListClusters(t.Context(), &eks.ListClustersInput{})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(out.Clusters) != "[wire]" {
		t.Errorf("ListClusters = %v, want [wire]", out.Clusters)
	}
}

// GET /healthz answers without a signature, and holds no lock the twins
// hold: a supervisor learns the server is up while an update runs. Any
// other unsigned request is still refused.
func TestHealthz(t *testing.T) {
	var mu sync.Mutex
	srv := serve(t, map[string]http.Handler{awsserve.ServiceEKS: http.NotFoundHandler()}, &mu)
	mu.Lock()
	defer mu.Unlock()
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, awsserve.HealthPath, http.StatusOK},
		{http.MethodHead, awsserve.HealthPath, http.StatusOK},
		{http.MethodPost, awsserve.HealthPath, http.StatusForbidden},
		{http.MethodGet, "/clusters/wire", http.StatusForbidden},
	} {
		req, err := http.NewRequestWithContext(t.Context(), tc.method, srv.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s unsigned: %s %s, want %d", tc.method, tc.path, resp.Status, body, tc.want)
		}
		if tc.want == http.StatusOK && tc.method == http.MethodGet && string(body) != "ok" {
			t.Errorf("%s %s: body %q, want ok", tc.method, tc.path, body)
		}
	}
}
