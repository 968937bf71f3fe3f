package render

import (
	"fmt"
	"io"
	"os"
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
