package manifest

import (
	"io/fs"
	"testing"
)

// TestDescribeFileMode: each special type by its own bit, and a character
// device (ModeDevice and ModeCharDevice both set, as os.Stat reports it)
// named as such rather than as a block device.
func TestDescribeFileMode(t *testing.T) {
	for _, tc := range []struct {
		mode fs.FileMode
		want string
	}{
		{fs.ModeNamedPipe | 0o644, "a named pipe"},
		{fs.ModeSocket, "a socket"},
		{fs.ModeDevice | fs.ModeCharDevice, "a character device"},
		{fs.ModeDevice, "a block device"},
		{fs.ModeDir | 0o755, "a directory"},
		{fs.ModeSymlink, "a symbolic link"},
		{fs.ModeIrregular, "a special file"},
	} {
		if got := DescribeFileMode(tc.mode); got != tc.want {
			t.Errorf("DescribeFileMode(%v) = %q, want %q", tc.mode, got, tc.want)
		}
	}
}
