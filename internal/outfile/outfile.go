// Package outfile writes the files a user names on the command line
// (--report FILE, -o FILE, --profile-output FILE, --journal FILE) and the
// directories they name (--to DIR) so that a path cannot be turned against
// the user, who often runs Ladder as root:
//
//   - only regular files are written: a path that exists and is a FIFO, a
//     symbolic link, a device, a socket or a directory is refused, named,
//     before any work runs (Check) and again just before the write lands;
//   - a file is written whole: into a new temporary file created with
//     O_EXCL in the same directory (never through a link planted there),
//     then renamed over the path (rename replaces a link, never follows
//     it), so a reader never opens half a file;
//   - a new file is created 0644 under the process's umask, as the shell's
//     ">" creates one; a regular file written over keeps its mode;
//   - "-" is standard output where the command has one to give;
//   - a symbolic link among the path's directories is the user's choice and
//     is followed.
//
// Dir does the same for a directory output: every file stays inside the
// directory (os.Root) and none is written through a link found inside it.
package outfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// File is a single-file output.
type File struct {
	// Name is how errors name the output: the flag ("--report", "-o"), or
	// "journal".
	Name string
	// Path is the path the user gave.
	Path string
	// Stdout, when set, is where "-" writes; unset, "-" is a file name.
	Stdout io.Writer
	// Sync makes Write durable: the file and its directory are synced
	// before Write returns (a journal; a crash leaves the old file or the
	// new one).
	Sync bool
}

// IsStdout says whether f writes to standard output.
func (f File) IsStdout() bool { return f.Stdout != nil && f.Path == "-" }

// Check refuses, before any work runs, a path Write would refuse: one
// that exists and is not a regular file, or whose directory does not
// exist.
func (f File) Check() error {
	if f.IsStdout() {
		return nil
	}
	if st, err := os.Lstat(f.Path); err == nil {
		if err := f.regular(st); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return f.errorf("%v", unwrapPath(err))
	}
	dir := filepath.Dir(f.Path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return f.errorf("no such directory %s", dir)
	}
	return nil
}

// regular refuses st unless it is a regular file, saying what it is.
func (f File) regular(st fs.FileInfo) error {
	if st.Mode().IsRegular() {
		return nil
	}
	if st.IsDir() {
		return f.errorf("is a directory: name the file to write, e.g. %s", filepath.Join(f.Path, "report.html"))
	}
	return f.errorf("is %s, not a regular file: name a new file or a regular one (Ladder writes only regular files)", Kind(st.Mode()))
}

// Kind names a file mode's type as ls -l and stat(1) do.
func Kind(m fs.FileMode) string {
	switch t := m.Type(); {
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	case t&fs.ModeDir != 0:
		return "a directory"
	case t == 0:
		return "a regular file"
	}
	return "not a regular file (" + m.Type().String() + ")"
}

// beforeRename, in tests, runs between the temporary file's close and
// its rename: where an attacker would plant a link.
var beforeRename = func(path string) {}

// Write writes data to f's path whole, or to standard output for "-".
func (f File) Write(data []byte) error {
	if f.IsStdout() {
		_, err := f.Stdout.Write(data)
		return err
	}
	if err := f.Check(); err != nil {
		return err
	}
	// The mode of the file written over, read before: a file that is not
	// there gets 0644 under the umask (OpenFile's perm, as ">" does).
	var keep fs.FileMode
	if st, err := os.Lstat(f.Path); err == nil {
		keep = st.Mode().Perm()
	}
	tmp, err := createTemp(filepath.Dir(f.Path), filepath.Base(f.Path))
	if err != nil {
		return f.errorf("%v", unwrapPath(err))
	}
	defer os.Remove(tmp.Name())
	if err := writeClose(tmp, data, keep, f.Sync); err != nil {
		return f.errorf("%v", unwrapPath(err))
	}
	beforeRename(f.Path)
	// Between Check and here the path may have become something else; a
	// link is replaced by rename, not followed, but it is refused all the
	// same: whoever planted it expects the write to go somewhere.
	if st, err := os.Lstat(f.Path); err == nil {
		if err := f.regular(st); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return f.errorf("%v", unwrapPath(err))
	}
	if err := os.Rename(tmp.Name(), f.Path); err != nil {
		return f.errorf("%v", unwrapPath(err))
	}
	if f.Sync {
		if d, err := os.Open(filepath.Dir(f.Path)); err == nil {
			defer d.Close()
			return d.Sync()
		}
	}
	return nil
}

func (f File) errorf(format string, a ...any) error {
	return fmt.Errorf("%s %s: %s", f.Name, f.Path, fmt.Sprintf(format, a...))
}

// createTemp creates a new file in dir, named after base, with O_EXCL:
// never an existing file, never through a link. Its mode is 0644 under
// the umask (os.CreateTemp's is 0600).
func createTemp(dir, base string) (*os.File, error) {
	for range 100 {
		name := filepath.Join(dir, "."+base+".tmp-"+random())
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("cannot create a temporary file in %s", dir)
}

func random() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeClose writes data to f, gives it mode keep when set, syncs it when
// asked, and closes it.
func writeClose(f *os.File, data []byte, keep fs.FileMode, sync bool) error {
	_, err := f.Write(data)
	if err == nil && keep != 0 {
		err = f.Chmod(keep)
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// unwrapPath drops a PathError's path: errors name the path the user gave,
// not a temporary file's.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
