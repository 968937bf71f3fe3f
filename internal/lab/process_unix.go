//go:build unix

package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// process is a component this ladder process started: exited closes when
// it ends (the goroutine that waits for it also reaps it, so it never
// lingers as a zombie that still answers kill(pid, 0)).
type process struct {
	pid     int
	exited  chan struct{}
	waitErr error
}

// startDetached starts a component in a session of its own, with its
// output appended to logPath and no stdin. The new session detaches it
// from the terminal and from ladder's process group: a Ctrl-C in the shell
// or ladder exiting does not stop the lab; only `ladder lab down` does.
func startDetached(bin string, argv []string, dir, logPath string) (*process, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating the log %s: %w", logPath, err)
	}
	defer log.Close() // the child holds its own descriptor
	fmt.Fprintf(log, "# ladder lab, %s: %s %s\n", time.Now().Format(time.RFC3339), bin, strings.Join(argv, " "))
	cmd := exec.Command(bin, argv...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{pid: cmd.Process.Pid, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// ours reports whether pid is still the process the lab recorded: alive,
// not a zombie, running the recorded binary and, where the system says
// when a process started, started when recorded. Only then may the lab
// signal it: a pid of a process that is gone can be reused by anything.
func ours(rec ProcessState) (bool, error) {
	if rec.PID <= 0 {
		return false, nil
	}
	id, err := identify(rec.PID)
	if err != nil || id.zombie {
		return false, nil
	}
	want, err := filepath.EvalSymlinks(rec.Binary)
	if err != nil {
		want = rec.Binary
	}
	// A binary replaced by a rebuild while its process runs shows as
	// "path (deleted)" on Linux; it is still the process the lab started.
	if strings.TrimSuffix(id.exe, " (deleted)") != want && id.exe != rec.Binary {
		return false, nil
	}
	if rec.StartTicks != 0 && id.startTicks != 0 && rec.StartTicks != id.startTicks {
		return false, nil
	}
	return true, nil
}

// stopProcess sends SIGTERM to a recorded process and SIGKILL if it is
// still there after grace. It signals only a process that ours confirms,
// and reports whether it had to signal at all.
func stopProcess(ctx context.Context, rec ProcessState, grace time.Duration) (signalled bool, err error) {
	if ok, _ := ours(rec); !ok {
		return false, nil
	}
	if err := syscall.Kill(rec.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return true, fmt.Errorf("stopping %s (pid %d): %w", rec.Name, rec.PID, err)
	}
	if waitGone(ctx, rec, grace) {
		return true, nil
	}
	if err := syscall.Kill(rec.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return true, fmt.Errorf("killing %s (pid %d): %w", rec.Name, rec.PID, err)
	}
	if waitGone(ctx, rec, 10*time.Second) {
		return true, nil
	}
	return true, fmt.Errorf("%s (pid %d) is still running after SIGKILL", rec.Name, rec.PID)
}

// waitGone polls until the recorded process is gone or d passes.
func waitGone(ctx context.Context, rec ProcessState, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if ok, _ := ours(rec); !ok {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lockFile takes an exclusive lock on path, waiting for whoever holds it
// (after calling waiting once) until ctx ends. The lock goes with the
// process, so a killed ladder never leaves it held.
func lockFile(ctx context.Context, path string, waiting func()) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the lock %s: %w", path, err)
	}
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if !told && waiting != nil {
			waiting()
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the lock %s: %w", path, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
