package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Up starts a lab in opts.Dir and returns once every component is healthy
// and the controllers act (the default ServiceAccount exists). It builds
// the binaries first if they are missing. A lab already running there is
// an AlreadyRunningError; a lab whose processes are all gone (the machine
// restarted, or they were killed) is cleaned up and replaced. Every Up
// starts an empty cluster with new credentials. If any component fails,
// Up stops the ones it started, removes the state file and returns a
// StartupError naming the component with the end of its log.
func Up(ctx context.Context, opts Options) (*Lab, error) {
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	began := time.Now()
	if opts.Release.Kubernetes == "" {
		opts.Release, _ = LookupRelease(DefaultMinor)
	}
	l, err := resolveDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	if err := checkLabDir(l); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(l.logs(), 0o755); err != nil {
		return nil, fmt.Errorf("creating the lab directory: %w", err)
	}
	unlock, err := lockLab(ctx, l, out)
	if err != nil {
		return nil, err
	}
	defer unlock()

	switch st, err := readState(l); {
	case err == nil:
		if alive := running(st); len(alive) > 0 {
			return nil, &AlreadyRunningError{Dir: l.dir, Server: st.Server, Running: alive}
		}
		if err := clean(l); err != nil {
			return nil, fmt.Errorf("cleaning the stale lab in %s: %w", l.dir, err)
		}
		fmt.Fprintf(out, "ladder lab: cleaned a stale lab in %s (started %s; its processes are gone)\n",
			l.dir, st.Started.Local().Format(time.DateTime))
	case !errors.Is(err, errNoState):
		return nil, err
	default:
		// No lab there: clear what a lab stopped by `down` keeps out of the
		// way of the new one.
		if err := clean(l); err != nil {
			return nil, fmt.Errorf("preparing %s: %w", l.dir, err)
		}
	}

	if opts.APIServerPort != 0 {
		if err := checkPort(opts.APIServerPort); err != nil {
			return nil, err
		}
	}
	bins := opts.Binaries
	if bins == nil {
		if bins, err = Build(ctx, BuildOptions{Release: opts.Release, CacheDir: opts.CacheDir, Go: opts.Go, Out: out, Progress: opts.Progress}); err != nil {
			return nil, err
		}
	} else if missing := bins.missing(); len(missing) > 0 {
		return nil, fmt.Errorf("the lab binaries in %s are incomplete (missing %s): run `ladder lab build`", bins.Dir, strings.Join(missing, ", "))
	}
	ports, err := pickPorts(opts)
	if err != nil {
		return nil, err
	}
	if err := writeCredentials(l, ports.server()); err != nil {
		return nil, err
	}
	s := &starter{
		ctx: ctx, out: out, l: l, bins: bins, ports: ports, aws: opts.AWS,
		ready: opts.ReadyTimeout, stop: opts.StopTimeout,
		st: &State{
			Kubernetes: bins.Release.Kubernetes, Dir: l.dir, Kubeconfig: l.kubeconfig(),
			Server: ports.server(), Started: time.Now().UTC(), Binaries: bins.Dir, Ports: ports,
		},
	}
	if a := opts.AWS; a != nil {
		s.st.AWS = &AWSState{Endpoint: ports.awsEndpoint(), Scenario: a.Scenario, Region: a.Region, Cluster: a.Cluster, TimeScale: a.TimeScale}
	}
	if s.ready <= 0 {
		s.ready = 2 * time.Minute
	}
	if s.stop <= 0 {
		s.stop = 15 * time.Second
	}
	if err := s.start(); err != nil {
		s.abort()
		return nil, err
	}
	fmt.Fprintf(out, "ladder lab: Kubernetes %s is up at %s after %s\n", bins.Release.Kubernetes, ports.server(), roundDuration(time.Since(began)))
	return &Lab{State: *s.st, l: l}, nil
}

// resolveDir makes a lab directory absolute (the state file records
// paths that must work from any working directory).
func resolveDir(dir string) (layout, error) {
	if dir == "" {
		var err error
		if dir, err = DefaultDir(); err != nil {
			return layout{}, err
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return layout{}, fmt.Errorf("lab directory %q: %w", dir, err)
	}
	return layout{dir: abs}, nil
}

// checkLabDir refuses a directory that holds files but no lab: Up and
// Down delete DIR/etcd, DIR/pki and DIR/kubeconfig, which in a directory
// of the user's (--dir ~) could be anything.
func checkLabDir(l layout) error {
	entries, err := os.ReadDir(l.dir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(entries) == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lab directory %s: %w", l.dir, err)
	}
	for _, marker := range []string{l.lock(), l.state()} {
		if _, err := os.Stat(marker); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%s is not empty and holds no lab (no lab.json or lab.lock): give --dir a new or empty directory", l.dir)
}

// checkPort refuses a port that cannot be the apiserver's.
func checkPort(port int) error {
	if port < 1 || port > 65535 {
		return fmt.Errorf("--port %d is not a TCP port: use 1-65535, or leave it out to get a free one", port)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		var se *os.SyscallError
		if errors.As(err, &se) {
			err = se // "bind: address already in use"
		}
		return &PortInUseError{Port: port, Err: err}
	}
	return ln.Close()
}

// pickPorts chooses every port of the lab.
func pickPorts(opts Options) (Ports, error) {
	free := opts.freePorts
	if free == nil {
		free = freeLoopbackPorts
	}
	n := 7
	if opts.AWS != nil {
		n++
	}
	if opts.APIServerPort != 0 {
		n--
		// Hold the chosen port while the kernel picks the others, so it
		// cannot pick it too.
		if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.APIServerPort))); err == nil {
			defer ln.Close()
		}
	}
	ps, err := free(n)
	if err != nil {
		return Ports{}, fmt.Errorf("finding free ports on 127.0.0.1: %w", err)
	}
	p := Ports{EtcdClient: ps[0], EtcdPeer: ps[1], EtcdMetrics: ps[2], ControllerManager: ps[3], Scheduler: ps[4], Kwok: ps[5]}
	ps = ps[6:]
	if p.APIServer = opts.APIServerPort; p.APIServer == 0 {
		p.APIServer, ps = ps[0], ps[1:]
	}
	if opts.AWS != nil {
		p.AWS = ps[0]
	}
	return p, nil
}

// freeLoopbackPorts asks the kernel for n distinct free ports by holding n
// listeners at once. The ports are free when it returns, not reserved: a
// program that binds one before the component does makes that component
// fail at startup, which Up reports like any other startup failure.
func freeLoopbackPorts(n int) ([]int, error) {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// starter is one Up's start sequence.
type starter struct {
	ctx         context.Context
	out         io.Writer
	l           layout
	bins        *Binaries
	ports       Ports
	ready, stop time.Duration
	aws         *AWSOptions
	// karpenter and ladder are Karpenter's command line and the ladder
	// binary that runs it (StartKarpenter).
	karpenter []string
	ladder    string
	st        *State
	procs     map[Component]*process
}

// waves are the start waves of this lab: the AWS endpoints, if any, last,
// once the cluster they may act on is up.
func (s *starter) waves() [][]Component {
	if s.aws == nil {
		return waves
	}
	return append(slices.Clip(waves), []Component{AWSEndpoints})
}

// start runs the waves, recording each process in the state file as soon
// as it exists, so that a ladder killed mid-start leaves a lab that `down`
// (or the next `up`) can find and stop.
func (s *starter) start() error {
	s.procs = map[Component]*process{}
	began := time.Now()
	for _, wave := range s.waves() {
		for _, c := range wave {
			if err := s.launch(c); err != nil {
				return err
			}
		}
		if err := s.waitHealthy(wave); err != nil {
			return err
		}
		for _, c := range wave {
			fmt.Fprintf(s.out, "  %-24s healthy   pid %-7d after %s\n", c, s.procs[c].pid, roundDuration(time.Since(began)))
		}
	}
	return s.waitControllers()
}

// command is a component's binary, resolved to the file it runs, and
// command line.
func (s *starter) command(c Component) (string, []string, error) {
	if c == Karpenter {
		return s.ladder, s.karpenter, nil
	}
	if c == AWSEndpoints {
		bin := s.aws.Ladder
		if bin == "" {
			var err error
			if bin, err = os.Executable(); err != nil {
				return "", nil, fmt.Errorf("finding the ladder binary to serve the AWS endpoints: %w", err)
			}
		}
		bin, err := filepath.EvalSymlinks(bin)
		if err != nil {
			return "", nil, fmt.Errorf("the ladder binary to serve the AWS endpoints: %w", err)
		}
		return bin, awsServeArgs(s.l, s.ports, *s.aws), nil
	}
	bin, err := filepath.Abs(s.bins.Path(c))
	if err == nil {
		bin, err = filepath.EvalSymlinks(bin)
	}
	if err != nil {
		return "", nil, fmt.Errorf("the %s binary %s: %w: run `ladder lab build`", c, s.bins.Path(c), err)
	}
	return bin, args(c, s.l, s.ports, s.bins), nil
}

// launch starts one component and records it.
func (s *starter) launch(c Component) error {
	bin, argv, err := s.command(c)
	if err != nil {
		return err
	}
	p, err := startDetached(bin, argv, s.l.dir, s.l.log(c))
	if err != nil {
		return fmt.Errorf("starting %s (%s): %w", c, bin, err)
	}
	s.procs[c] = p
	rec := ProcessState{
		Name: c, PID: p.pid, Binary: bin, Started: time.Now().UTC(),
		Ports: s.ports.of(c), Health: health(c, s.ports), Log: s.l.log(c),
	}
	if id, err := identify(p.pid); err == nil {
		rec.StartTicks = id.startTicks
	}
	s.st.Components = append(s.st.Components, rec)
	return writeState(s.l, s.st)
}

// waitHealthy polls the wave's health endpoints until all answer, one of
// its processes exits, or the deadline passes. Each component is watched
// on its own, so that one whose probe hangs (a port another program took
// accepts but never answers) does not delay noticing that another exited.
func (s *starter) waitHealthy(wave []Component) error {
	ctx, cancel := context.WithTimeout(s.ctx, s.ready)
	defer cancel()
	client := newProber(s.l)
	errs := make(chan error, len(s.procs))
	// The components of earlier waves must keep running too.
	for c, p := range s.procs {
		if slices.Contains(wave, c) {
			continue
		}
		go func() {
			select {
			case <-p.exited:
				errs <- s.failure(c, fmt.Sprintf("exited during startup (%v)", exitText(p.waitErr)))
			case <-ctx.Done():
			}
		}()
	}
	for _, c := range wave {
		go func() {
			p := s.procs[c]
			// A probe in flight ends when the process does.
			probeCtx, stop := context.WithCancel(ctx)
			defer stop()
			go func() {
				select {
				case <-p.exited:
					stop()
				case <-probeCtx.Done():
				}
			}()
			var last error
			for {
				if last = client.check(probeCtx, health(c, s.ports)); last == nil {
					errs <- nil
					return
				}
				select {
				case <-p.exited:
					errs <- s.failure(c, fmt.Sprintf("exited during startup (%v)", exitText(p.waitErr)))
					return
				case <-ctx.Done():
					if s.ctx.Err() != nil {
						errs <- fmt.Errorf("lab start interrupted (%w); the started processes were stopped", s.ctx.Err())
					} else {
						errs <- s.failure(c, fmt.Sprintf("was not healthy within %s (%v)", s.ready, last))
					}
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
	}
	for range wave {
		if err := <-errs; err != nil {
			return err // the deferred cancel ends the other watchers
		}
	}
	return nil
}

// waitControllers waits for the default ServiceAccount, which
// kube-controller-manager's serviceaccount controller creates: once it is
// there the controllers act with their own credentials, and pods can be
// created in the default namespace.
func (s *starter) waitControllers() error {
	deadline := time.Now().Add(s.ready)
	client := newProber(s.l)
	sa := probe{URL: s.ports.server() + "/api/v1/namespaces/default/serviceaccounts/default", TLS: true, Verify: true, Bearer: true}
	for {
		err := client.check(s.ctx, sa)
		if err == nil {
			return nil
		}
		for c, p := range s.procs {
			select {
			case <-p.exited:
				return s.failure(c, fmt.Sprintf("exited during startup (%v)", exitText(p.waitErr)))
			default:
			}
		}
		if s.ctx.Err() != nil {
			return fmt.Errorf("lab start interrupted (%w); the started processes were stopped", s.ctx.Err())
		}
		if time.Now().After(deadline) {
			return s.failure(ControllerManager, fmt.Sprintf("did not create the default ServiceAccount within %s (%v)", s.ready, err))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// failure is a StartupError for c with the end of its log.
func (s *starter) failure(c Component, problem string) error {
	return &StartupError{Component: c, Problem: problem, Log: s.l.log(c), Tail: tailLines(s.l.log(c), 12)}
}

// abort stops what start started and removes the state, leaving the logs.
// stopOne stops a component this starter started and removes it from the
// state.
func (s *starter) stopOne(c Component) {
	ctx := context.WithoutCancel(s.ctx)
	for i, p := range s.st.Components {
		if p.Name == c {
			stopAll(ctx, []ProcessState{p}, 15*time.Second, io.Discard)
			s.st.Components = append(s.st.Components[:i:i], s.st.Components[i+1:]...)
			_ = writeState(s.l, s.st)
			return
		}
	}
}

func (s *starter) abort() {
	// A context already cancelled (Ctrl-C) must not cut the stop short.
	ctx := context.WithoutCancel(s.ctx)
	stopAll(ctx, s.st.Components, s.stop, io.Discard)
	_ = clean(s.l)
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
