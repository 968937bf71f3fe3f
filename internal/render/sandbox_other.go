//go:build !linux

package render

import "time"

// limitAddressSpace is a no-op where ladder sets no address-space limit:
// the heap watchdog and the runtime's memory limit bound the render.
func limitAddressSpace(int64) {}

// processorTime is 0 where ladder does not read it: the parent's clock
// (three times the time budget) bounds the render.
func processorTime() time.Duration { return 0 }
