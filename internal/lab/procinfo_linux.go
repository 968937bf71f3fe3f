package lab

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procIdentity is what the system says about a pid.
type procIdentity struct {
	exe        string
	startTicks uint64 // clock ticks after boot; 0 where unknown
	zombie     bool
}

// identify reads /proc/PID/exe (the binary) and /proc/PID/stat (state and
// start time, which tell a reused pid from the recorded process).
func identify(pid int) (procIdentity, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procIdentity{}, err
	}
	// The command name, in parentheses, may itself hold spaces or
	// parentheses: the fields that matter follow the last ')'.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return procIdentity{}, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	fields := strings.Fields(string(stat[i+1:]))
	// fields[0] is the state (field 3 of proc(5)); starttime is field 22.
	if len(fields) < 20 {
		return procIdentity{}, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	id := procIdentity{zombie: fields[0] == "Z" || fields[0] == "X"}
	id.startTicks, _ = strconv.ParseUint(fields[19], 10, 64)
	if id.zombie {
		return id, nil
	}
	if id.exe, err = os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err != nil {
		return procIdentity{}, err
	}
	return id, nil
}
