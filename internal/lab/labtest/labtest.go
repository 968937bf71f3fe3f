// Package labtest gives tests a real Kubernetes control plane: one lab
// (internal/lab) per test binary, started on first use and stopped after
// the package's last test.
//
// Use it from tests behind the `lab` build tag, so that plain `go test
// ./...` stays fast and needs no binaries:
//
//	//go:build lab
//
//	package mypkg
//
//	func TestMain(m *testing.M) { labtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		cfg := labtest.Start(t)            // admin (system:masters) *rest.Config
//		ns := labtest.Namespace(t, cfg)    // a fresh namespace, deleted after t
//		...
//	}
//
// Run them with `go test -tags lab ./...` (or `make test`). The first run
// builds the binaries (15 to 25 minutes on 2 cores, see docs/lab.md): run
// `ladder lab build` (or `make lab-build`) first, or give go test a
// -timeout longer than its default 10 minutes. Later runs start a lab in
// about 5 seconds.
//
// Main is what makes the lab shared and stops it after the last test;
// without it, Start gives each test a lab of its own (5 seconds each).
// The lab is shared by the package's tests: isolate each test in its own
// Namespace, and clean up cluster-scoped objects (nodes, CRDs) it creates.
// Its nodes are KWOK nodes: annotate a node with kwok.x-k8s.io/node=fake
// (lab.KwokNodeAnnotation) and it becomes Ready, and its pods Running.
//
// Each lab runs in a new directory under $LADDER_LABTEST_DIR (or the
// system temporary directory), so a test binary that dies without running
// Main's cleanup (a -timeout panic) leaves a directory that `ladder lab
// down --dir` cleans; the Makefile does that for every directory under its
// LADDER_LABTEST_DIR.
package labtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ladder-eks/ladder/internal/lab"
)

// DirEnv names the directory labs of tests are created in.
const DirEnv = "LADDER_LABTEST_DIR"

// VersionEnv picks the Kubernetes minor of the labs ("1.36"); the default
// is lab.DefaultMinor.
const VersionEnv = "LADDER_LAB_KUBERNETES"

var (
	mu       sync.Mutex
	mainRan  bool
	started  *lab.Lab
	cfg      *rest.Config
	startErr error
)

// Main runs the package's tests and then stops the lab, if a test started
// one, and removes its directory. Call it from TestMain.
func Main(m *testing.M) {
	mu.Lock()
	mainRan = true
	mu.Unlock()
	code := m.Run()
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, "labtest:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// Start returns the admin configuration of the test binary's lab,
// starting the lab on the first call (and building its binaries if they
// are missing). If the lab cannot start, every test that calls Start fails
// with the reason; the start is not retried.
//
// Without Main in TestMain there is no "after the last test" to stop a
// shared lab at, so Start then gives the calling test a lab of its own,
// stopped when the test ends: correct, but 5 seconds per test.
func Start(t testing.TB) *rest.Config {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if !mainRan {
		t.Log("labtest: no labtest.Main in TestMain, so this test gets a lab of its own; add `func TestMain(m *testing.M) { labtest.Main(m) }` to share one")
		lb, c, err := start(t)
		if err != nil {
			t.Fatalf("labtest: the lab did not start: %v", err)
		}
		t.Cleanup(func() {
			if err := stopLab(lb); err != nil {
				t.Errorf("labtest: %v", err)
			}
		})
		return c
	}
	if started == nil && startErr == nil {
		started, cfg, startErr = start(t)
	}
	if startErr != nil {
		t.Fatalf("labtest: the lab did not start: %v", startErr)
	}
	return rest.CopyConfig(cfg)
}

// Lab is the shared lab (its directory, kubeconfig path and ports), for
// tests that run a command against it, started if need be; it needs Main.
func Lab(t testing.TB) *lab.Lab {
	t.Helper()
	mu.Lock()
	ran := mainRan
	mu.Unlock()
	if !ran {
		t.Fatal("labtest.Lab needs `func TestMain(m *testing.M) { labtest.Main(m) }` in this package's tests")
	}
	Start(t)
	mu.Lock()
	defer mu.Unlock()
	return started
}

func start(t testing.TB) (*lab.Lab, *rest.Config, error) {
	release, err := lab.LookupRelease(os.Getenv(VersionEnv))
	if err != nil {
		return nil, nil, err
	}
	dir, err := NewDir()
	if err != nil {
		return nil, nil, err
	}
	// The build may take 15 minutes the first time; the start, seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	began := time.Now()
	// Progress goes to stderr at once rather than to the test log, which
	// shows only when the test ends: a first build is 15 minutes long.
	lb, err := lab.Up(ctx, lab.Options{Dir: dir, Release: release, Out: os.Stderr})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	t.Logf("labtest: lab %s up in %s at %s (dir %s)", release.Kubernetes, time.Since(began).Round(time.Millisecond), lb.Server, dir)
	c, err := lb.RESTConfig()
	if err != nil {
		return nil, nil, errors.Join(err, stopLab(lb))
	}
	// Tests create objects in bursts; client-go's default 5 QPS would make
	// them wait on the client, not on the cluster.
	c.QPS, c.Burst = 200, 400
	return lb, c, nil
}

// NewDir makes a new directory for a lab under $LADDER_LABTEST_DIR (or
// the system temporary directory), where the Makefile stops every lab a
// dying test binary leaves: for a test that starts a lab of its own, with
// `ladder lab up --dir`.
func NewDir() (string, error) {
	base := os.Getenv(DirEnv)
	if base != "" {
		if err := os.MkdirAll(base, 0o755); err != nil {
			return "", err
		}
	}
	return os.MkdirTemp(base, "lab-")
}

func stop() error {
	mu.Lock()
	defer mu.Unlock()
	if started == nil {
		return nil
	}
	lb := started
	started = nil
	return stopLab(lb)
}

// stopLab stops a lab and removes its directory.
func stopLab(lb *lab.Lab) error {
	if err := lab.Down(context.Background(), lab.DownOptions{Dir: lb.Dir()}); err != nil {
		return err
	}
	return os.RemoveAll(lb.Dir())
}

// Namespace creates a namespace for t and deletes it when t ends. It
// returns once the namespace's default ServiceAccount exists, so pods can
// be created in it at once.
func Namespace(t testing.TB, cfg *rest.Config) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "labtest-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("labtest: creating a namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("labtest: deleting namespace %s: %v", ns.Name, err)
		}
	})
	err = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("labtest: namespace %s has no default ServiceAccount after a minute: is kube-controller-manager running? (%v)", ns.Name, err)
	}
	return ns.Name
}
