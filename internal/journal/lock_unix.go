//go:build unix

package journal

import (
	"os"
	"syscall"
)

// tryLock takes an exclusive advisory lock on f without waiting.
func tryLock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

// processGone reports whether no process has pid (signal 0 finds none).
func processGone(pid int) bool { return syscall.Kill(pid, 0) == syscall.ESRCH }

// noFollow and nonBlock open the journal's lock without following a link
// and the journal without waiting on a FIFO's writer.
const (
	noFollow = syscall.O_NOFOLLOW
	nonBlock = syscall.O_NONBLOCK
)
