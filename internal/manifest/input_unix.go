//go:build unix

package manifest

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// readRegularFileRaw reads a file with plain system calls — open, fstat,
// read, close — instead of an *os.File, whose set-up (a poller
// registration attempt and a finalizer per file) costs as much as the read
// on a tree of many small files. O_NONBLOCK keeps a file that turned into a
// named pipe since its directory was listed from blocking the open; it is
// then refused as not regular. ok is false when the raw path cannot be used
// and the caller should read through os.
func readRegularFileRaw(path string) (data []byte, ok bool, err error) {
	var fd int
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, true, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, true, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		info, err := os.Stat(path)
		if err != nil {
			return nil, true, err
		}
		return nil, true, &NotRegularError{Mode: info.Mode()}
	}
	if st.Size > MaxInputSize {
		return nil, true, fmt.Errorf("%w (it is %d MiB)", ErrTooLarge, st.Size>>20)
	}
	buf := make([]byte, 0, st.Size+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):min(cap(buf), MaxInputSize+1)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, true, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, true, nil
		}
		buf = buf[:len(buf)+n]
		if len(buf) > MaxInputSize {
			return nil, true, ErrTooLarge
		}
	}
}
