// Command ladder upgrades Kubernetes clusters — Amazon EKS first — one minor
// version at a time, after rehearsing the upgrade in a deterministic twin.
package main

import (
	"os"
	"runtime/debug"

	"github.com/ladder-eks/ladder/internal/cli"
)

// defaultMemoryLimit is the Go runtime's soft memory limit when the user
// sets no GOMEMLIMIT. A 5,000-node rehearsal holds about 1 GiB live; with
// the default GOGC=100 the heap may grow to twice that before a collection,
// so its peak swung between 1.7 and 2.1 GB from run to run. Under this limit
// the collector runs earlier instead, and the peak stays near 1.8 GiB for
// some 10% more CPU; a smaller run never reaches it. The limit is soft: the
// runtime caps the collector's CPU share and lets the heap pass it rather
// than fail (https://go.dev/doc/gc-guide#Memory_limit).
const defaultMemoryLimit = 1750 << 20

// memoryLimit is the soft limit to set, if any: none when GOMEMLIMIT is
// set, which the runtime has already read.
func memoryLimit(getenv func(string) string) (int64, bool) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, false
	}
	return defaultMemoryLimit, true
}

func main() {
	if limit, ok := memoryLimit(os.Getenv); ok {
		debug.SetMemoryLimit(limit)
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
