package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// controlPlane are the components a control-plane upgrade replaces, in the
// order they start: the apiserver first, as kubeadm and EKS upgrade it, so
// that kube-controller-manager and kube-scheduler never talk to an
// apiserver older than themselves (the version skew policy).
var controlPlane = []Component{APIServer, ControllerManager, Scheduler}

// UpgradeControlPlane moves the running lab in dir (DefaultDir if "") to
// the next Kubernetes minor, version ("1.37", "v1.37" or "1.37.2"), as an
// EKS control-plane update does: kube-apiserver, kube-controller-manager
// and kube-scheduler are stopped and started again on the new release's
// binaries, with the same ports, PKI, tokens and flags, against the same
// etcd, whose data is kept. etcd, kwok and the AWS endpoints keep running,
// so nodes, pods and every other object stay as they were (same UIDs), and
// clients keep their kubeconfig. It returns once the new components are
// healthy and lab.json records the new version. The new release's
// binaries must already be built (it does not build them: that takes
// minutes, and a caller in the middle of an UpdateClusterVersion must not
// block for that). Progress lines go to out (nil discards them).
//
// It refuses, with one line saying what to do, a directory where no lab
// runs, a version that is not exactly one minor above the lab's, and a
// version whose binaries are not in the lab's build cache.
func UpgradeControlPlane(ctx context.Context, dir, version string, out io.Writer) error {
	if out == nil {
		out = io.Discard
	}
	l, st, unlock, err := lockedState(ctx, dir, out)
	if errors.Is(err, errNoState) {
		return fmt.Errorf("no lab runs in %s: start one with `ladder lab up`", l.dir)
	}
	if err != nil {
		return err
	}
	defer unlock()
	if alive := running(st); len(alive) != len(st.Components) {
		return fmt.Errorf("the lab in %s is not running (%d of its %d processes are gone): restart it with `ladder lab down` and `ladder lab up`",
			l.dir, len(st.Components)-len(alive), len(st.Components))
	}
	to, err := LookupRelease(version)
	if err != nil {
		return err
	}
	if err := oneMinorUp(st.Kubernetes, to); err != nil {
		return fmt.Errorf("the lab in %s runs Kubernetes %s: %w", l.dir, st.Kubernetes, err)
	}
	// The new binaries come from the cache the lab's own came from.
	bins, missing, err := Built(to, filepath.Dir(filepath.Dir(st.Binaries)))
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("the lab binaries of Kubernetes %s are not built (missing %s): run `ladder lab build --kubernetes %s`",
			to.Kubernetes, strings.Join(missing, ", "), to.Minor)
	}

	began := time.Now()
	fmt.Fprintf(out, "ladder lab: upgrading the control plane of %s from %s to %s\n", l.dir, st.Kubernetes, to.Kubernetes)
	// Stop in the reverse of the start order; etcd and kwok keep running.
	var old []ProcessState
	for _, p := range st.Components {
		if slices.Contains(controlPlane, p.Name) {
			old = append(old, p)
		}
	}
	if err := stopAll(context.WithoutCancel(ctx), old, 15*time.Second, out); err != nil {
		return fmt.Errorf("%w: the lab in %s is half stopped; run `ladder lab down` and `ladder lab up`", err, l.dir)
	}
	order := make([]Component, len(st.Components))
	for i, p := range st.Components {
		order[i] = p.Name
	}
	st.Components = slices.DeleteFunc(st.Components, func(p ProcessState) bool { return slices.Contains(controlPlane, p.Name) })
	s := &starter{
		ctx: ctx, out: out, l: l, bins: bins, ports: st.Ports, ready: 2 * time.Minute, st: st,
		procs: map[Component]*process{},
	}
	for _, wave := range [][]Component{{APIServer}, {ControllerManager, Scheduler}} {
		for _, c := range wave {
			if err := s.launch(c); err != nil {
				return err
			}
		}
		if err := s.waitHealthy(wave); err != nil {
			return fmt.Errorf("%w\nthe lab is half upgraded: run `ladder lab down` and `ladder lab up`", err)
		}
		for _, c := range wave {
			fmt.Fprintf(out, "  %-24s healthy   pid %-7d after %s\n", c, s.procs[c].pid, roundDuration(time.Since(began)))
		}
	}
	// lab.json keeps the start order, which `down` stops in reverse.
	slices.SortStableFunc(st.Components, func(a, b ProcessState) int {
		return slices.Index(order, a.Name) - slices.Index(order, b.Name)
	})
	st.Kubernetes, st.Binaries = to.Kubernetes, bins.Dir
	if err := writeState(l, st); err != nil {
		return err
	}
	fmt.Fprintf(out, "ladder lab: the control plane runs Kubernetes %s after %s\n", to.Kubernetes, roundDuration(time.Since(began)))
	return nil
}

// oneMinorUp refuses a target that is not the minor after the running
// Kubernetes version ("v1.36.3"): EKS, like kubeadm, upgrades a control
// plane one minor at a time.
func oneMinorUp(running string, to Release) error {
	minor := func(v string) (int, bool) {
		parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
		if len(parts) < 2 || parts[0] != "1" {
			return 0, false
		}
		n, err := strconv.Atoi(parts[1])
		return n, err == nil
	}
	from, ok1 := minor(running)
	next, ok2 := minor(to.Minor)
	if !ok1 || !ok2 {
		return fmt.Errorf("cannot compare it with %s", to.Minor)
	}
	if next != from+1 {
		return fmt.Errorf("a control plane upgrades one minor at a time: the next is 1.%d, not %s", from+1, to.Minor)
	}
	return nil
}
