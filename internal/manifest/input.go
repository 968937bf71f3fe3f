package manifest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxInputSize is the most Ladder reads from one file or from standard
// input: far more than any manifest (the API server refuses a request body
// over 3 MiB, k8s.io/apiserver's MaxRequestBodyBytes), enough for a
// rendered chart or a kubectl get -o json dump, and small enough that a
// runaway input — /dev/zero, a log file named .yaml — fails at once with
// one line instead of exhausting memory.
const MaxInputSize = 64 << 20

// ErrTooLarge is returned, wrapped, for an input over MaxInputSize.
var ErrTooLarge = fmt.Errorf("larger than the %d MiB limit", MaxInputSize>>20)

// NotRegularError is a path that names something other than a regular
// file or a directory: a named pipe, a socket, a device. Ladder does not
// open it — a pipe without a writer would block for ever, a device such as
// /dev/zero never ends.
type NotRegularError struct{ Mode fs.FileMode }

func (e *NotRegularError) Error() string { return "not a regular file but " + DescribeFileMode(e.Mode) }

// specialFileModes name the special file types as ls -l would explain
// them, in the order they are tested: a device is a character device when
// both bits are set.
var specialFileModes = []struct {
	bit  fs.FileMode
	name string
}{
	{fs.ModeNamedPipe, "a named pipe"},
	{fs.ModeSocket, "a socket"},
	{fs.ModeCharDevice, "a character device"},
	{fs.ModeDevice, "a block device"},
	{fs.ModeDir, "a directory"},
	{fs.ModeSymlink, "a symbolic link"},
}

// DescribeFileMode names a special file's type as ls -l would explain it.
func DescribeFileMode(m fs.FileMode) string {
	for _, t := range specialFileModes {
		if m&t.bit != 0 {
			return t.name
		}
	}
	return "a special file"
}

// ReadFile reads a regular file of at most MaxInputSize bytes. It returns
// a *NotRegularError without opening the file when path is anything else,
// and an error wrapping ErrTooLarge when the file is over the limit
// (checked before reading, and again while reading, for a file that grows).
func ReadFile(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkInput(info); err != nil {
		return nil, err
	}
	return ReadRegularFile(path)
}

// checkInput refuses a file ReadFile does not read: anything but a regular
// file, and one over MaxInputSize.
func checkInput(info os.FileInfo) error {
	if !info.Mode().IsRegular() {
		return &NotRegularError{Mode: info.Mode()}
	}
	if info.Size() > MaxInputSize {
		return fmt.Errorf("%w (it is %d MiB)", ErrTooLarge, info.Size()>>20)
	}
	return nil
}

// ReadRegularFile is ReadFile for a path already known to name a regular
// file (a directory entry's type, as os.ReadDir reports it): it opens the
// file without a stat first — one system call less per file of a large
// tree — and checks its type and size on the open file.
func ReadRegularFile(path string) ([]byte, error) {
	if data, ok, err := readRegularFileRaw(path); ok {
		return data, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := checkInput(info); err != nil {
		return nil, err
	}
	return readLimited(f, make([]byte, 0, info.Size()+1))
}

// ReadAll reads r to its end, at most MaxInputSize bytes; past that it
// stops and returns an error wrapping ErrTooLarge.
func ReadAll(r io.Reader) ([]byte, error) { return readLimited(r, make([]byte, 0, 512)) }

func readLimited(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), MaxInputSize+1)])
		buf = buf[:len(buf)+n]
		if len(buf) > MaxInputSize {
			return nil, ErrTooLarge
		}
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
