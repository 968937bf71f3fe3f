//go:build !linux

package render

import "time"

// limitAddressSpace is a no-op where ladder sets no address-space limit:
// the heap watchdog and the runtime's memory limit bound the render.
func limitAddressSpace(int64) {}

// limitCPU is a no-op where ladder sets no processor-time limit: the
// parent's clock (three times the budget) bounds the render.
func limitCPU(time.Duration) {}
