//go:build !unix

package journal

import (
	"errors"
	"os"
)

// tryLock: a local journal's lock needs flock (Linux, macOS); elsewhere the
// in-cluster journal guards the upgrade.
func tryLock(*os.File) error {
	return errors.New("a local journal needs Linux or macOS: leave out --journal to keep the journal in the cluster")
}

// processGone: without signals a holder's process cannot be looked for;
// its Lease frees itself when it expires.
func processGone(int) bool { return false }

// noFollow and nonBlock: no such open flags here; the type checks after
// the open still refuse what is not a regular file.
const (
	noFollow = 0
	nonBlock = 0
)
