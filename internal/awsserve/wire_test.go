package awsserve_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/awsport/twinaws"
	"github.com/ladder-eks/ladder/internal/awsserve"
	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/ec2"
	twineks "github.com/ladder-eks/ladder/internal/twin/eks"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/mng"
	"github.com/ladder-eks/ladder/internal/twin/worker"
)

// The lab's dummy account: the only key the test servers accept.
const (
	region    = "us-west-2"
	accessKey = "AKIDLADDERLAB0000001"
	secretKey = "ladder-lab-secret-access-key-000000000001"
)

// t0 is a day on which EKS offers 1.30 and 1.31, with AMIs for both.
var t0 = time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)

// staticCredentials are the lab's dummy credentials, as a client's
// credential provider.
func staticCredentials(id, secret string) aws.CredentialsProvider {
	return aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: id, SecretAccessKey: secret, Source: "lab"}, nil
	})
}

// eksClient is aws-sdk-go-v2's EKS client pointed at url as aws-apis.md
// §1.8 says: a base endpoint, a region, static credentials.
func eksClient(url string, creds aws.CredentialsProvider) *eks.Client {
	return eks.New(eks.Options{Region: region, BaseEndpoint: aws.String(url), Credentials: creds})
}

func ssmClient(url string, creds aws.CredentialsProvider) *ssm.Client {
	return ssm.New(ssm.Options{Region: region, BaseEndpoint: aws.String(url), Credentials: creds})
}

// serve starts a server for handlers on 127.0.0.1 with the lab's account,
// holding mu around every call into the twins.
func serve(t *testing.T, handlers map[string]http.Handler, mu sync.Locker) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(awsserve.New(handlers, awsserve.Options{
		AccessKeyID: accessKey, SecretAccessKey: secretKey, Region: region, Lock: mu,
	}))
	t.Cleanup(srv.Close)
	return srv
}

// wireCluster is one cluster's twins — a 1.30 control plane, two managed
// node groups of two nodes each and vpc-cni — behind a server, and the
// SDK's EKS client talking to it.
type wireCluster struct {
	mu     sync.Mutex
	eng    *sim.Engine
	client *eks.Client
}

// addonRollout is how long the twin's vpc-cni rollout takes.
const addonRollout = 2 * time.Minute

func newWireCluster(t *testing.T) *wireCluster {
	t.Helper()
	eng, api := newTwinEKS(t)
	c := &wireCluster{eng: eng}
	srv := serve(t, map[string]http.Handler{awsserve.ServiceEKS: awsserve.NewEKS(api)}, &c.mu)
	c.client = eksClient(srv.URL, staticCredentials(accessKey, secretKey))
	return c
}

// newTwinEKS is the EKS port over the twins of the cluster "wire", and the
// engine that runs them.
func newTwinEKS(t *testing.T) (*sim.Engine, awsport.EKS) {
	t.Helper()
	zones := []string{region + "a", region + "b", region + "c"}
	eng := sim.New(t0, 1)
	kc := kube.New(eng, kube.Options{Region: region, Zones: zones})
	cp := twineks.New(eng, "wire", region, kubeversion.MustParse("1.30"), 0)
	groups := mng.New(eng, kc, worker.New(eng, kc, ec2.New(region, zones, eng.Rand()), worker.Timings{}), mng.Options{
		InstanceTypes: catalog.InstanceTypes(), Zones: zones, ControlPlaneVersion: cp.Version,
	})
	cp.NodeGroupVersions = groups.Versions
	for _, name := range []string{"system", "apps"} {
		if err := groups.Adopt(nodegroup.Spec{Name: name, InstanceTypes: []string{"m5.large"}, Desired: 2, Min: 1, Max: 4}, 24*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	api := twinaws.NewEKS(twinaws.EKSOptions{
		Engine: eng, Cluster: "wire", Region: region, ControlPlane: cp, Nodegroups: groups,
		Addons: []twinaws.Addon{{Name: "vpc-cni", Version: "v1.18.3-eksbuild.1"}},
		ApplyAddon: func(string, string) (func() bool, error) {
			start := eng.Now()
			return func() bool { return eng.Now().Sub(start) >= addonRollout }, nil
		},
	})
	return eng, api
}

// pollInterval is the virtual time Wait lets pass between two polls.
const pollInterval = 10 * time.Second

// Wait polls cond over the wire and, between polls, advances the twin's
// engine under the server's lock — what kubeport/twinport's Wait does, with
// the engine behind an HTTP server.
func (c *wireCluster) Wait(ctx context.Context, timeout time.Duration, cond kubeport.Condition) error {
	c.mu.Lock()
	deadline := c.eng.Now().Add(timeout)
	c.mu.Unlock()
	for {
		done, err := cond(ctx)
		if err != nil || done {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", kubeport.ErrWaitTimeout, ctx.Err())
		}
		c.mu.Lock()
		now := c.eng.Now()
		if !now.Before(deadline) {
			c.mu.Unlock()
			return fmt.Errorf("%w after %s of virtual time", kubeport.ErrWaitTimeout, timeout)
		}
		next := now.Add(pollInterval)
		if next.After(deadline) {
			next = deadline
		}
		c.eng.RunUntil(next)
		c.mu.Unlock()
	}
}

// The exports, evaluated by a POSIX shell, set each variable to exactly
// its value — spaces, quotes and $ included — and plain values are
// written unquoted, as a user would type them.
func TestWriteExports(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	env := []awsserve.EnvVar{
		{"PLAIN", "http://127.0.0.1:4566"},
		{"SPACED", "/tmp/my lab/kubeconfig"},
		{"QUOTED", `it's "$HOME" and \n`},
		{"EMPTY", ""},
	}
	var b bytes.Buffer
	if err := awsserve.WriteExports(&b, env); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "export PLAIN=http://127.0.0.1:4566\n") {
		t.Errorf("a plain value is quoted:\n%s", b.String())
	}
	for _, v := range env {
		out, err := exec.Command(sh, "-c", `eval "$1"; printf %s "$`+v.Name+`"`, "sh", b.String()).Output()
		if err != nil {
			t.Fatalf("sh: %v\n%s", err, b.String())
		}
		if string(out) != v.Value {
			t.Errorf("after eval, %s=%q, want %q\nexports:\n%s", v.Name, out, v.Value, b.String())
		}
	}
}
