package render

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// addressSpaceHeadroom is the address space a render's process may map
// beyond what it had mapped at its start plus its memory budget: the
// runtime reserves the heap in 64 MiB arenas, and each thread its stack.
const addressSpaceHeadroom = 512 << 20

// limitAddressSpace sets RLIMIT_AS, the kernel's hard limit on the
// process's address space, to what it maps now plus memory and
// addressSpaceHeadroom: a heap that outgrows it — a single allocation too
// big for the heap watchdog to see in time — makes the runtime stop with
// "out of memory" instead of taking the machine's memory. Go maps address
// space lazily (a few hundred MiB at start, measured with /proc/self/status
// VmSize), so the limit is set from what is mapped, not from zero.
func limitAddressSpace(memory int64) {
	mapped := vmSize()
	if mapped == 0 {
		return
	}
	limit := uint64(mapped + memory + addressSpaceHeadroom)
	_ = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit})
}

// vmSize is VmSize of /proc/self/status in bytes, or 0.
func vmSize() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmSize:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// processorTime is the processor time this process has used, every
// thread's (the collector's too): a render's time budget is processor
// time, not the clock, so that a chart gets the same budget on a busy
// machine as on an idle one.
func processorTime() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
