// Package twinserve puts a scenario's twins behind the AWS endpoints
// (internal/awsserve): the cluster twinbuild makes of the scenario, its
// AWS ports (internal/awsport/twinaws), and its engine advanced with the
// wall clock — TimeScale virtual seconds per second — so that an update
// started with the AWS CLI or an SDK runs while the client polls it, in
// the order and ratios of the twin.
package twinserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/ladder-eks/ladder/internal/awsport/twinaws"
	"github.com/ladder-eks/ladder/internal/awsserve"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/eks"
	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// The lab's dummy account: the only credentials its endpoints accept.
const (
	AccessKeyID     = "AKIALADDERLAB0000000"
	SecretAccessKey = "ladder-lab-dummy-secret-access-key"
)

// DefaultTimeScale is how much faster than the wall clock the twin runs:
// a 10-minute control-plane update takes 10 seconds.
const DefaultTimeScale = 60

// Twin is a scenario's twins behind an awsserve.Server.
type Twin struct {
	// Region is the scenario's region, the one clients sign for.
	Region string
	// Cluster is the scenario's cluster name.
	Cluster string

	handler   http.Handler
	mu        sync.Mutex
	eng       *sim.Engine
	timeScale float64
}

// New builds sc's twins and their endpoints. sc must have passed
// Validate. timeScale <= 0 is DefaultTimeScale.
func New(sc *scenario.Scenario, timeScale float64) (*Twin, error) {
	tw, err := twinbuild.Build(sc, twinbuild.Options{})
	if err != nil {
		return nil, err
	}
	return FromTwin(tw, timeScale, nil), nil
}

// FromTwin puts twins already built behind the endpoints. timeScale <= 0
// is DefaultTimeScale. workloads is where an accepted UpdateAddon rolls
// the add-on's workloads out (eks.ApplyAddon); nil: the update succeeds at
// once.
func FromTwin(tw *twinbuild.Twin, timeScale float64, workloads eks.AddonKube) *Twin {
	sc := tw.Scenario
	if timeScale <= 0 {
		timeScale = DefaultTimeScale
	}
	var applyAddon func(name, version string) (func() bool, error)
	if workloads != nil {
		applyAddon = func(name, version string) (func() bool, error) { return eks.ApplyAddon(workloads, name, version) }
	}
	c := sc.Spec.Cluster
	var addons []twinaws.Addon
	for _, a := range sc.Spec.Addons {
		addons = append(addons, twinaws.Addon{Name: a.Name, Version: a.Version, Versions: a.Versions})
	}
	ports := twinaws.New(twinaws.EKSOptions{Engine: tw.Engine, Cluster: c.Name, Region: c.Region,
		ControlPlane: tw.ControlPlane, Nodegroups: tw.MNG, Fargate: tw.Fargate, Addons: addons, ApplyAddon: applyAddon}, tw.ASG, sc.ExtraAMIs())
	t := &Twin{Region: c.Region, Cluster: c.Name, eng: tw.Engine, timeScale: timeScale}
	handlers := map[string]http.Handler{
		awsserve.ServiceEKS: awsserve.NewEKS(ports.EKS),
		awsserve.ServiceEC2: awsserve.NewEC2(ports.Images, ports.LaunchTemplates),
		awsserve.ServiceSSM: awsserve.NewSSM(ports.Parameters),
	}
	// Auto Scaling only for a cluster with self-managed groups: without
	// them the twin has no port, and the endpoint refuses the service.
	if ports.AutoScaling != nil {
		handlers[awsserve.ServiceAutoScaling] = awsserve.NewAutoScaling(ports.AutoScaling)
	}
	// One lock for every service: all four ports share the twin's engine.
	t.handler = awsserve.New(handlers, awsserve.Options{AccessKeyID: AccessKeyID, SecretAccessKey: SecretAccessKey, Region: c.Region, Lock: &t.mu})
	return t
}

// SetPolicy evaluates p, an IAM policy, on every request (awsserve.Policy):
// the endpoints refuse what it does not allow, as AWS refuses a role
// without the permission. Call it before serving.
func (t *Twin) SetPolicy(p *awsserve.Policy) { t.handler.(*awsserve.Server).SetPolicy(p) }

// Locked runs fn holding the lock the endpoints and the engine's advance
// hold, for a caller that tells the twins of a change from outside.
func (t *Twin) Locked(fn func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fn()
}

// TimeScale is how many virtual seconds pass per wall-clock second.
func (t *Twin) TimeScale() float64 { return t.timeScale }

// ServeHTTP answers an AWS request.
func (t *Twin) ServeHTTP(w http.ResponseWriter, r *http.Request) { t.handler.ServeHTTP(w, r) }

// Run advances the twin's engine with the wall clock until ctx ends,
// every tick catching up to TimeScale times the wall time since Run began.
func (t *Twin) Run(ctx context.Context, tick time.Duration) {
	t.mu.Lock()
	start := t.eng.Now()
	t.mu.Unlock()
	began := time.Now()
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			virtual := time.Duration(float64(time.Since(began)) * t.timeScale)
			t.mu.Lock()
			t.eng.RunUntil(start.Add(virtual))
			t.mu.Unlock()
		}
	}
}

// tick is how often Serve's engine catches up with the wall clock.
const tick = 50 * time.Millisecond

// Serve answers on ln until ctx ends, after printing to out the exports
// that point the AWS CLI, boto3 and aws-sdk-go-v2 at it (aws-apis.md
// §1.8): one URL for every service, the region, the dummy credentials.
func (t *Twin) Serve(ctx context.Context, ln net.Listener, out io.Writer) error {
	return Serve(ctx, ln, out, t.Region, t.Cluster, t, t.Run)
}

// Timeouts are the endpoints' HTTP server's: a client that sends its
// headers or its body slowly, or does not read its answer, or holds an
// idle connection, is cut off after them (its own connection only: the
// answer is written outside the twins' lock, awsserve.Server). Read
// covers the body, at most awsserve.MaxBody; Write the wait for the lab's
// nodes before a first answer (labserve), seconds in practice.
var Timeouts = struct{ ReadHeader, Read, Write, Idle time.Duration }{
	ReadHeader: 10 * time.Second,
	Read:       time.Minute,
	Write:      2 * time.Minute,
	Idle:       2 * time.Minute,
}

// maxHeaderBytes bounds a request's headers: a SigV4-signed AWS request's
// are under 2 KiB.
const maxHeaderBytes = 64 << 10

// Serve answers h's endpoints for cluster in region on ln, running run
// until ctx ends, after printing the exports to out; Twin.Serve is it for
// the twins.
func Serve(ctx context.Context, ln net.Listener, out io.Writer, region, cluster string, h http.Handler, run func(context.Context, time.Duration)) error {
	url := "http://" + ln.Addr().String()
	awsserve.WriteExports(out, awsserve.ClientEnv(url, region, AccessKeyID, SecretAccessKey))
	fmt.Fprintf(out, "# then: aws eks describe-cluster --name %s\n", cluster)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: Timeouts.ReadHeader, ReadTimeout: Timeouts.Read,
		WriteTimeout: Timeouts.Write, IdleTimeout: Timeouts.Idle, MaxHeaderBytes: maxHeaderBytes}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	run(ctx, tick)
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
