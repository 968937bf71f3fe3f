// Package conformance is one suite of cases run against every
// implementation of the Kubernetes port (internal/kubeport): the twin in
// plain `go test`, a real API server with `-tags lab`. Each case builds its
// own fixture — a namespace, its own nodes, Deployments, PDBs — and asserts
// what the API answers, down to the HTTP code, reason, message and causes
// where Kubernetes documents them (semantics.md §D), so that the twin and
// real Kubernetes cannot drift apart unnoticed.
//
// An implementation may declare a case a known difference, with the reason.
// The case still runs: while it fails on what it asserts, it is reported as
// skipped with the reason and the observed mismatch; once it passes, the
// suite fails and asks for the entry to be removed.
package conformance

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/kubeport"
)

// Harness makes environments on one implementation of the port.
type Harness interface {
	// NewEnv returns a fresh environment for one case: an empty namespace
	// and nothing else of the case's. It registers its cleanup with t and
	// fails t itself when it cannot start.
	NewEnv(t *testing.T) Env
	// KnownDifferences maps the names of the cases this implementation is
	// known to get wrong to why (see the package comment).
	KnownDifferences() map[string]string
}

// Env is one case's world: the port under test plus what only a test
// needs, building the fixture as a user and a kubelet would.
type Env interface {
	kubeport.Port
	// Namespace is the case's namespace, created empty. Node names the
	// suite makes start with it, so they are unique across cases too.
	Namespace() string
	// AddNode registers a node as its kubelet would and returns once the
	// node is Ready.
	AddNode(ctx context.Context, node *corev1.Node) error
	// Create creates a namespaced object: a Deployment, StatefulSet,
	// DaemonSet, PodDisruptionBudget or Pod.
	Create(ctx context.Context, obj metav1.Object) error
	// SetPodReady sets a Running pod's Ready condition, as its kubelet does
	// when a readiness probe fails or passes.
	SetPodReady(ctx context.Context, namespace, name string, ready bool) error
}

// caseTimeout bounds a whole case on the wall clock; waitTimeout bounds each
// wait on the port's clock (virtual in the twin).
const (
	caseTimeout = 2 * time.Minute
	waitTimeout = 60 * time.Second
)

type testCase struct {
	name string
	run  func(f *fixture) error
}

// allCases lists every case, evictions first, in the order of
// semantics.md §D.
func allCases() []testCase {
	var out []testCase
	out = append(out, evictionCases()...)
	out = append(out, drainCases()...)
	out = append(out, apiCases()...)
	out = append(out, workloadCases()...)
	out = append(out, objectCases()...)
	return out
}

// CaseNames lists the suite's cases, for harnesses that name known
// differences.
func CaseNames() []string {
	var names []string
	for _, c := range allCases() {
		names = append(names, c.name)
	}
	sort.Strings(names)
	return names
}

// Run runs every case against h, each as a parallel subtest.
func Run(t *testing.T, h Harness) {
	var cases []suiteCase
	for _, c := range allCases() {
		cases = append(cases, suiteCase{c.name, func(t *testing.T, ctx context.Context) error {
			env := h.NewEnv(t)
			return c.run(&fixture{ctx: ctx, env: env, ns: env.Namespace()})
		}})
	}
	runSuite(t, cases, h.KnownDifferences())
}

// suiteCase is one case of a suite, ready to run in its own subtest.
type suiteCase struct {
	name string
	run  func(t *testing.T, ctx context.Context) error
}

// runSuite runs cases as parallel subtests, each within caseTimeout,
// reporting the known differences as the package comment says.
func runSuite(t *testing.T, cases []suiteCase, known map[string]string) {
	names := map[string]bool{}
	for _, c := range cases {
		names[c.name] = true
	}
	for name := range known {
		if !names[name] {
			t.Errorf("KnownDifferences names %q, which is not a case of the suite (see the suite's case names)", name)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), caseTimeout)
			defer cancel()
			err := c.run(t, ctx)
			reason, isKnown := known[c.name]
			var mm *mismatch
			switch {
			case err == nil && isKnown:
				t.Errorf("known difference no longer reproduces, remove it from KnownDifferences: %s", reason)
			case err == nil:
			case isKnown && errors.As(err, &mm):
				t.Skipf("known difference: %s\nobserved: %v", reason, err)
			default:
				t.Fatal(err)
			}
		})
	}
}

// mismatch is a failed assertion: the implementation answered otherwise
// than Kubernetes does. Other errors are failures to build the fixture.
type mismatch struct{ msg string }

func (m *mismatch) Error() string { return m.msg }

func mismatchf(format string, args ...any) error {
	return &mismatch{msg: fmt.Sprintf(format, args...)}
}
