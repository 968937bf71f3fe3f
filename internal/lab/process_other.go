//go:build !unix

package lab

import (
	"context"
	"errors"
	"time"
)

// errUnsupported is what every entry point says outside Unix.
var errUnsupported = errors.New("ladder lab runs on Linux and macOS only")

// The lab needs sessions, signals and flock; elsewhere every entry point
// says so.

type process struct {
	pid     int
	exited  chan struct{}
	waitErr error
}

type procIdentity struct {
	exe        string
	startTicks uint64
	zombie     bool
}

func identify(int) (procIdentity, error) { return procIdentity{}, errUnsupported }

func startDetached(string, []string, string, string) (*process, error) { return nil, errUnsupported }

func ours(ProcessState) (bool, error) { return false, errUnsupported }

func stopProcess(context.Context, ProcessState, time.Duration) (bool, error) {
	return false, errUnsupported
}

func lockFile(context.Context, string, func()) (func(), error) { return nil, errUnsupported }
