package render

import (
	"fmt"
	"io"
	"os"
	"time"
)

// MaxFileBytes caps every file a render reads (a resource, a patch, a values
// file, a template). Real manifests and values files are kilobytes; the
// largest public values.yaml files are a few hundred. A bigger file is far
// more likely a mistake or an attack than a manifest, and reading it whole
// would let one file decide ladder's memory.
const MaxFileBytes = 8 << 20

// MaxChartBytes caps the sum of a chart directory's files, well under Helm's
// own 100 MiB budget (archive.MaxDecompressedChartSize), for the same reason.
const MaxChartBytes = 64 << 20

// errTooLarge says a file is over MaxFileBytes.
type errTooLarge struct {
	path string
	size int64
}

func (e errTooLarge) Error() string {
	return fmt.Sprintf("%s is %d bytes, over ladder's %d MiB limit for one file", e.path, e.size, MaxFileBytes>>20)
}

// readCapped reads a regular file of at most MaxFileBytes. It checks the size
// before reading and reads at most one byte past the cap, so a file that grows
// while it is read is caught too.
func readCapped(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > MaxFileBytes {
		return nil, errTooLarge{path, fi.Size()}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, errTooLarge{path, int64(len(data))}
	}
	return data, nil
}

// The budgets of one render: one chart's `helm template`, or one
// kustomization's build. Each render runs in a process of its own (see
// sandbox.go), because nothing else bounds it: Go's text/template cannot be
// cancelled, and a template that recurses through `tpl` overflows the Go
// stack, a fatal error no recover() catches. docs/check-render.md gives the
// measured reason for each number.
const (
	// RenderTime is the processor time one render may use (its process's
	// watchdog reads getrusage); it is stopped anyway when it has not
	// answered after three times as long on the clock (a render that
	// waits, or a machine too busy to run it).
	RenderTime = 20 * time.Second
	// RenderOutputBytes caps the rendered objects the process hands back.
	RenderOutputBytes = 64 << 20
	// RenderMemoryBytes caps the Go heap (objects and goroutine stacks) of
	// the render's process.
	RenderMemoryBytes = 1 << 30
	// RenderStackBytes caps one goroutine's stack in the render's process:
	// template recursion (`include` and `tpl` calling themselves) deepens
	// it.
	RenderStackBytes = 16 << 20
)

// budget is what one render may spend.
type budget struct {
	Time   time.Duration
	Output int64
	Memory int64
	Stack  int
}

// budgets are the budgets renders get; tests shrink them.
var budgets = budget{Time: RenderTime, Output: RenderOutputBytes, Memory: RenderMemoryBytes, Stack: RenderStackBytes}
