package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Karpenter is the lab's Karpenter: `ladder lab karpenter`, a child ladder
// running Karpenter's own controllers with Ladder's EC2 cloud provider
// (internal/labkarpenter). It starts after the scenario is materialized —
// a NodeClaim Karpenter saw before materialize gave it its Launched status
// would be launched a second time — and reads the control plane's version
// from the lab's EKS endpoint.
const Karpenter Component = "karpenter"

// KarpenterOptions say how the lab runs Karpenter.
type KarpenterOptions struct {
	// Zones are the cluster's zones: the offerings of the instance types.
	Zones []string
	// Ladder is the ladder binary to run; the running one if empty.
	Ladder string
	// Out receives the line saying Karpenter is healthy.
	Out io.Writer
	// ReadyTimeout bounds the start; 2 minutes if zero.
	ReadyTimeout time.Duration
}

// StartKarpenter starts Karpenter as one more process of the lab, recorded
// in its state so that `ladder lab status` checks it and `down` stops it,
// and waits until its health probe answers. The lab must serve a
// scenario's AWS endpoints: Karpenter's version is the lab's EKS cluster's.
func (lb *Lab) StartKarpenter(ctx context.Context, o KarpenterOptions) error {
	if lb.AWS == nil {
		return fmt.Errorf("the lab serves no AWS endpoints: Karpenter needs a scenario's EKS endpoint (ladder lab up --scenario)")
	}
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	unlock, err := lockLab(ctx, lb.l, out)
	if err != nil {
		return err
	}
	defer unlock()
	bin := o.Ladder
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return fmt.Errorf("finding the ladder binary to run Karpenter: %w", err)
		}
	}
	if bin, err = filepath.EvalSymlinks(bin); err != nil {
		return fmt.Errorf("the ladder binary to run Karpenter: %w", err)
	}
	ps, err := freeLoopbackPorts(2)
	if err != nil {
		return fmt.Errorf("finding free ports on 127.0.0.1: %w", err)
	}
	lb.Ports.KarpenterMetrics, lb.Ports.KarpenterHealth = ps[0], ps[1]
	s := &starter{ctx: ctx, out: out, l: lb.l, ports: lb.Ports, st: &lb.State, ready: o.ReadyTimeout, procs: map[Component]*process{},
		karpenter: karpenterArgs(lb.l, lb.Ports, o.Zones), ladder: bin}
	if s.ready <= 0 {
		s.ready = 2 * time.Minute
	}
	s.st.Ports = lb.Ports
	began := time.Now()
	if err := s.launch(Karpenter); err != nil {
		return err
	}
	if err := s.waitHealthy([]Component{Karpenter}); err != nil {
		s.stopOne(Karpenter)
		return err
	}
	fmt.Fprintf(out, "  %-24s healthy   pid %-7d after %s\n", Karpenter, s.procs[Karpenter].pid, roundDuration(time.Since(began)))
	return nil
}

// karpenterArgs are Karpenter's command line: ladder's own `lab
// karpenter`, told the lab it runs in and the cluster's zones; the ports
// are free loopback ones, where it listens (internal/labkarpenter).
func karpenterArgs(l layout, p Ports, zones []string) []string {
	return []string{"lab", string(Karpenter),
		"--lab-dir=" + l.dir,
		"--zones=" + strings.Join(zones, ","),
		"--metrics-port=" + strconv.Itoa(p.KarpenterMetrics),
		"--health-port=" + strconv.Itoa(p.KarpenterHealth),
	}
}

// ReadState reads the state of the lab in dir (DefaultDir if empty). A
// directory without lab.json is a NoLabError.
func ReadState(dir string) (*State, error) {
	_, st, err := readLab(dir)
	return st, err
}

// readLab resolves dir and reads its lab's state.
func readLab(dir string) (layout, *State, error) {
	l, err := resolveDir(dir)
	if err != nil {
		return l, nil, err
	}
	st, err := readState(l)
	if errors.Is(err, errNoState) {
		return l, nil, &NoLabError{Dir: l.dir}
	}
	return l, st, err
}
