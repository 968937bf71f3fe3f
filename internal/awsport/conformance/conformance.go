// Package conformance is one suite of cases for every implementation of
// the AWS ports (internal/awsport): the twins (internal/awsport/twinaws) in
// plain `go test`, and the SDK's clients against an emulated endpoint
// (httptest, the lab) once they exist. Each case asserts what the API
// answers as aws-apis.md §2 describes it: the update state machine, the
// typed errors a caller matches with errors.As, pagination and the
// idempotency of clientRequestToken.
package conformance

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/kubeport"
)

// EKSHarness makes environments for the EKS suite.
type EKSHarness interface {
	// NewEKSEnv returns a fresh cluster for one case (see EKSEnv), failing
	// t itself when it cannot.
	NewEKSEnv(t *testing.T) EKSEnv
}

// EKSEnv is one case's cluster: ACTIVE, with its control plane, two
// managed node groups and one add-on, all at the control plane's minor,
// which has a next minor EKS offers.
type EKSEnv interface {
	EKS() awsport.EKS
	// Cluster is the cluster's name.
	Cluster() string
	// Nodegroups are the two managed node groups.
	Nodegroups() [2]string
	// Addon is an installed add-on and a version UpdateAddon accepts for it.
	Addon() (name, next string)
	// Wait polls cond until it holds, as kubeport.Port.Wait does: the twin
	// advances its virtual clock, a real account is polled.
	Wait(ctx context.Context, timeout time.Duration, cond kubeport.Condition) error
}

// updateTimeout bounds a wait for an update on the port's clock: EKS
// control-plane updates take tens of minutes.
const updateTimeout = 2 * time.Hour

// namedCase is one case of a suite over environments of type E.
type namedCase[E any] struct {
	name string
	run  func(ctx context.Context, env E) error
}

// runCases runs each case in a subtest (in parallel when each gets a
// fresh environment from newEnv) within caseTimeout of wall time.
func runCases[E any](t *testing.T, cases []namedCase[E], parallel bool, newEnv func(*testing.T) E) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			ctx, cancel := context.WithTimeout(t.Context(), caseTimeout)
			defer cancel()
			if err := c.run(ctx, newEnv(t)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// caseTimeout bounds a whole case on the wall clock.
const caseTimeout = 5 * time.Minute

// RunEKS runs the EKS suite against h, each case in a parallel subtest.
func RunEKS(t *testing.T, h EKSHarness) { runCases(t, eksCases(), true, h.NewEKSEnv) }

// wantError checks that err is, through errors.As, a T, and returns it.
func wantError[T error](call string, err error) (T, error) {
	var target T
	if err == nil {
		return target, fmt.Errorf("%s: want %T, got success", call, target)
	}
	if !errors.As(err, &target) {
		return target, fmt.Errorf("%s: want %T, got %T: %v", call, target, err, err)
	}
	return target, nil
}
