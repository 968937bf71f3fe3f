package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// DownOptions say which lab to stop.
type DownOptions struct {
	Dir string
	Out io.Writer
	// StopTimeout is how long a process has after SIGTERM before SIGKILL;
	// 15 seconds if zero.
	StopTimeout time.Duration
}

// Down stops the lab in opts.Dir: each recorded process that is still the
// one Up started gets SIGTERM, then SIGKILL after StopTimeout. Then it
// removes the state file, credentials and etcd data, and keeps the logs.
// No lab there is not an error: Down is what to run to be sure none runs.
func Down(ctx context.Context, opts DownOptions) error {
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	grace := opts.StopTimeout
	if grace <= 0 {
		grace = 15 * time.Second
	}
	l, st, unlock, err := lockedState(ctx, opts.Dir, out)
	if errors.Is(err, errNoState) {
		fmt.Fprintf(out, "ladder lab: no lab in %s\n", l.dir)
		return nil
	}
	if err != nil {
		return err
	}
	defer unlock()
	if len(running(st)) == 0 {
		fmt.Fprintf(out, "ladder lab: the lab in %s was stale (its processes are gone); cleaning it\n", l.dir)
	}
	if err := stopAll(ctx, st.Components, grace, out); err != nil {
		return fmt.Errorf("%w; the state file %s is kept: run `ladder lab down` again", err, l.state())
	}
	if err := clean(l); err != nil {
		return fmt.Errorf("cleaning %s: %w", l.dir, err)
	}
	fmt.Fprintf(out, "ladder lab: stopped; logs kept in %s\n", l.logs())
	return nil
}

// stopAll stops recorded processes in the reverse of their start order,
// saying what it did; it returns the processes it could not stop.
func stopAll(ctx context.Context, procs []ProcessState, grace time.Duration, out io.Writer) error {
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		p := procs[i]
		began := time.Now()
		signalled, err := stopProcess(ctx, p, grace)
		switch {
		case err != nil:
			errs = append(errs, err)
		case signalled:
			fmt.Fprintf(out, "  stopped %-24s pid %-7d in %s\n", p.Name, p.PID, roundDuration(time.Since(began)))
		default:
			fmt.Fprintf(out, "  %-32s pid %-7d was not running\n", p.Name, p.PID)
		}
	}
	return errors.Join(errs...)
}

// lockLab takes the lab directory's lock, which every ladder lab command
// that changes the lab holds, saying so on out if it has to wait.
func lockLab(ctx context.Context, l layout, out io.Writer) (unlock func(), err error) {
	return lockFile(ctx, l.lock(), func() {
		fmt.Fprintf(out, "ladder lab: waiting for another ladder lab command in %s\n", l.dir)
	})
}

// lockedState resolves a lab directory, takes its lock and reads its
// state. It returns errNoState, holding no lock, when no lab is there (the
// directory missing included: locking would create it).
func lockedState(ctx context.Context, dir string, out io.Writer) (l layout, st *State, unlock func(), err error) {
	if l, err = resolveDir(dir); err != nil {
		return l, nil, nil, err
	}
	if _, err := os.Stat(l.dir); err != nil {
		return l, nil, nil, errNoState
	}
	if unlock, err = lockLab(ctx, l, out); err != nil {
		return l, nil, nil, err
	}
	if st, err = readState(l); err != nil {
		unlock()
		return l, nil, nil, err
	}
	return l, st, unlock, nil
}
