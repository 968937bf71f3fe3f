package cli

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// `ladder lab aws-serve --scenario workshop` prints the exports of its
// endpoint, and aws-sdk-go-v2's EKS client configured from them alone
// upgrades the workshop's control plane one minor: accepted, UPDATING,
// then — the twin running 6,000 times faster than the wall clock — ACTIVE
// at the next minor, as the SDK's ClusterActive waiter sees it.
func TestLabAWSServe(t *testing.T) {
	sc, err := scenario.Resolve("workshop")
	if err != nil {
		t.Fatal(err)
	}
	cluster := sc.Spec.Cluster.Name
	cmd := newLabAWSServeCommand()
	cmd.SetArgs([]string{"--scenario", "workshop", "--time-scale", "6000"})
	out, w := io.Pipe()
	cmd.SetOut(w)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- cmd.ExecuteContext(ctx)
		w.Close()
	}()

	env := map[string]string{}
	lines := bufio.NewScanner(out)
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "#") {
		if k, v, ok := strings.Cut(strings.TrimPrefix(lines.Text(), "export "), "="); ok {
			env[k] = v
		}
	}
	go io.Copy(io.Discard, out)
	if env["AWS_ENDPOINT_URL_EKS"] == "" || env["AWS_REGION"] != sc.Spec.Cluster.Region || env["AWS_ACCESS_KEY_ID"] == "" {
		t.Fatalf("exports %v: want AWS_ENDPOINT_URL_EKS, AWS_REGION=%s and the credentials", env, sc.Spec.Cluster.Region)
	}
	client := eks.New(eks.Options{Region: env["AWS_REGION"], BaseEndpoint: aws.String(env["AWS_ENDPOINT_URL_EKS"]),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: env["AWS_ACCESS_KEY_ID"], SecretAccessKey: env["AWS_SECRET_ACCESS_KEY"]}, nil
		})})

	desc, err := client.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: &cluster})
	if err != nil {
		t.Fatal(err)
	}
	next := kubeversion.MustParse(aws.ToString(desc.Cluster.Version)).Next().String()
	upd, err := client.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: &cluster, Version: &next})
	if err != nil {
		t.Fatalf("UpdateClusterVersion to %s: %v", next, err)
	}
	if upd.Update.Status != ekstypes.UpdateStatusInProgress {
		t.Errorf("accepted update %s, want InProgress", upd.Update.Status)
	}
	after, err := eks.NewClusterActiveWaiter(client).WaitForOutput(ctx, &eks.DescribeClusterInput{Name: &cluster}, time.Minute,
		func(o *eks.ClusterActiveWaiterOptions) {
			o.MinDelay, o.MaxDelay = 20*time.Millisecond, 100*time.Millisecond
		})
	if err != nil {
		t.Fatalf("ClusterActive after UpdateClusterVersion: %v", err)
	}
	if v := aws.ToString(after.Cluster.Version); v != next {
		t.Errorf("cluster ACTIVE at %s, want %s", v, next)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("aws-serve after its context ended: %v", err)
	}
}
