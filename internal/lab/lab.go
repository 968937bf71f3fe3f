// Package lab runs a real Kubernetes control plane on the local machine,
// built from Go modules: etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler of a Kubernetes release, and KWOK playing the kubelets of
// fake nodes. The twin rehearses an upgrade in virtual time; the lab is
// where its answers can be checked against the real controllers, the real
// scheduler and the real Eviction API, and where Ladder's own commands
// can run against a real API server.
//
// Build compiles the binaries once into the user cache (about 15 minutes
// on 2 cores, then seconds). Up starts them detached, on free loopback
// ports, with TLS, token authentication and RBAC, and records them in
// DIR/lab.json; Status and Down find them there. Down signals only the
// processes it can prove are the ones Up started.
//
// The measured recipe this follows, with its gotchas, is
// shared/reference/lab.md; docs/lab.md is the user's guide.
package lab

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ladder-eks/ladder/internal/progress"
)

// DefaultDir is where a lab runs when no directory is given: the user
// cache directory's ladder/lab/default, next to the binaries.
func DefaultDir() (string, error) {
	cache, err := DefaultCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "default"), nil
}

// Options say which lab to start and where.
type Options struct {
	// Dir holds the lab's state, credentials, etcd data and logs;
	// DefaultDir if empty.
	Dir     string
	Release Release
	// Binaries to run; nil builds (or reuses) the release's with CacheDir
	// and Go, as Build does.
	Binaries *Binaries
	CacheDir string
	Go       string
	// APIServerPort is the apiserver's port; 0 picks a free one. Every
	// other port is always picked free.
	APIServerPort int
	// Out receives progress lines; nil discards them.
	Out io.Writer
	// Progress shows the build's steps live (BuildOptions.Progress).
	Progress *progress.Reporter
	// ReadyTimeout bounds each start step (etcd; the apiserver; the
	// controllers, scheduler and kwok; the first ServiceAccount); 2 minutes
	// if zero.
	ReadyTimeout time.Duration
	// StopTimeout is how long a process has after SIGTERM before SIGKILL;
	// 15 seconds if zero.
	StopTimeout time.Duration
	// AWS, if set, starts the AWS endpoints of a scenario too.
	AWS *AWSOptions

	// freePorts picks n free loopback ports; tests replace it to force a
	// port conflict.
	freePorts func(n int) ([]int, error)
}

// AWSOptions say which AWS endpoints a lab serves: `ladder lab aws-serve`
// for a scenario, on a free loopback port.
type AWSOptions struct {
	// Scenario is a built-in scenario's name or a scenario file's absolute
	// path: the child runs in the lab's directory.
	Scenario string
	// Region and Cluster are the scenario's, which clients sign for and
	// name (recorded for `ladder lab env`).
	Region, Cluster string
	// TimeScale is passed to aws-serve's --time-scale.
	TimeScale float64
	// Ladder is the ladder binary to run; the running one if empty.
	Ladder string
}

// Lab is a running lab.
type Lab struct {
	State
	l layout
}

// Dir is the lab's directory.
func (lb *Lab) Dir() string { return lb.l.dir }

// RESTConfig is the lab's admin client configuration (system:masters).
func (lb *Lab) RESTConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", lb.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading the lab kubeconfig: %w", err)
	}
	return cfg, nil
}

// AlreadyRunningError is an Up in a directory whose lab still runs.
type AlreadyRunningError struct {
	Dir     string
	Server  string
	Running []ProcessState
}

func (e *AlreadyRunningError) Error() string {
	var pids []string
	for _, p := range e.Running {
		pids = append(pids, fmt.Sprintf("%s %d", p.Name, p.PID))
	}
	return fmt.Sprintf("a lab is already running in %s (%s; pids: %s): use it, or stop it with `ladder lab down --dir %s`",
		e.Dir, e.Server, strings.Join(pids, ", "), e.Dir)
}

// StartupError is a component that did not come up. Up has stopped the
// lab's other processes when it returns one.
type StartupError struct {
	Component Component
	// Problem completes "<component> ...": "exited during startup (exit
	// status 1)", "was not healthy within 2m0s (...)".
	Problem string
	Log     string
	Tail    []string
}

func (e *StartupError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s; the lab's other processes were stopped; log: %s", e.Component, e.Problem, e.Log)
	if len(e.Tail) > 0 {
		b.WriteString("\nlast lines of the log:")
		for _, l := range e.Tail {
			b.WriteString("\n    " + l)
		}
	}
	return b.String()
}

// PortInUseError is an apiserver port that another program holds.
type PortInUseError struct {
	Port int
	Err  error
}

func (e *PortInUseError) Error() string {
	return fmt.Sprintf("kube-apiserver port %d on 127.0.0.1 is in use (%v): choose another --port, or leave --port out to get a free one", e.Port, e.Err)
}
