//go:build unix && !linux

package lab

import (
	"os/exec"
	"strconv"
	"strings"
)

// procIdentity is what the system says about a pid.
type procIdentity struct {
	exe        string
	startTicks uint64 // unknown outside Linux
	zombie     bool
}

// identify asks ps(1) for the state and command of pid. Without /proc the
// start time is not compared, only the binary.
func identify(pid int) (procIdentity, error) {
	out, err := exec.Command("ps", "-o", "state=,comm=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		return procIdentity{}, err
	}
	state, comm, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	return procIdentity{exe: strings.TrimSpace(comm), zombie: strings.HasPrefix(state, "Z")}, nil
}
