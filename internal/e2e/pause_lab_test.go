//go:build lab

package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestPDBDeadlockPausesOnTheLab: the built-in pdb-deadlock scenario (orders
// has one replica and a PDB demanding one available) on the lab. `ladder
// upgrade --approve` upgrades the control plane, then blue-mng's update
// fails after EKS's eviction retries with PodEvictionFailure: the run
// pauses with exit status 2, naming the pod and the PDB that held it, and
// says how to go on.
func TestPDBDeadlockPausesOnTheLab(t *testing.T) {
	l := startLab(t, "pdb-deadlock")
	settle(t, l)
	began := time.Now()
	// Without the progress lines a run without a terminal writes on
	// standard error (internal/cli tests those): the pause alone.
	code, out, errs := ladder(t, l.env, "upgrade", "--to", "1.31", "--approve", "--progress", "none")
	t.Logf("ladder upgrade --to 1.31 --approve on pdb-deadlock: exit %d in %s", code, time.Since(began).Round(time.Millisecond))
	t.Logf("stderr: %s", errs)
	if code != 2 {
		t.Fatalf("exit %d, want 2 (paused)\n%s\n%s", code, out, errs)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`upgrade paused: .*PodEvictionFailure`),
		regexp.MustCompile(`pod orders/orders-[a-z0-9]+-[a-z0-9]+ did not leave node \S+ within 15m0s, blocked by PodDisruptionBudget orders/orders-pdb`),
		regexp.MustCompile(`run ladder upgrade --to 1.31 --approve again`),
	} {
		if !want.MatchString(errs) {
			t.Errorf("stderr does not match %s:\n%s", want, errs)
		}
	}
	if n := strings.Count(strings.TrimSpace(errs), "\n"); n > 0 {
		t.Errorf("the pause is %d lines, want one:\n%s", n+1, errs)
	}
	if t.Failed() {
		t.Logf("stdout:\n%s", out)
	}
}
