package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/ladder-eks/ladder/internal/outfile"
)

// File is a journal in a local file (ladder upgrade --journal FILE).
type File struct {
	*journal
	path string
	lock *os.File
}

// OpenFile opens (or starts) the journal in path for cluster's upgrade to
// `to`, holding an exclusive lock on path+".lock" until Close: a second
// upgrade with the same journal is refused while the first runs.
//
// The journal and its lock are regular files: a path that is a link, a
// FIFO, a device or a directory is refused, named (internal/outfile).
func OpenFile(path, cluster, to string) (*File, error) {
	if err := (outfile.File{Name: "journal", Path: path}).Check(); err != nil {
		return nil, err
	}
	lockPath := path + ".lock"
	if st, err := os.Lstat(lockPath); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("journal %s: its lock %s is %s, not a regular file: remove it", path, lockPath, outfile.Kind(st.Mode()))
	}
	lock, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR|noFollow, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %v", path, err)
	}
	if st, err := lock.Stat(); err != nil || !st.Mode().IsRegular() {
		lock.Close()
		return nil, fmt.Errorf("journal %s: its lock %s is not a regular file: remove it", path, lockPath)
	}
	if err := tryLock(lock); err != nil {
		lock.Close()
		return nil, fmt.Errorf("journal %s is in use by another ladder upgrade (lock %s.lock): wait for it, or stop it", path, path)
	}
	f := &File{path: path, lock: lock}
	j, err := open(fileStore{path}, cluster, to)
	if err != nil {
		f.Close()
		return nil, err
	}
	f.journal = j
	return f, nil
}

// Close releases the lock.
func (f *File) Close() error { return f.lock.Close() }

type fileStore struct{ path string }

// load reads the journal; a path that is not a regular file (after links:
// a FIFO would hang the read, a device never end it) is refused.
func (s fileStore) load() (*Record, error) {
	f, err := os.OpenFile(s.path, os.O_RDONLY|nonBlock, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("journal %s: is %s, not a regular file: name the journal file", s.path, outfile.Kind(st.Mode()))
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	return decode(data, s.path)
}

// save writes the record whole (internal/outfile): to a temporary file in
// the same directory, synced, renamed over the journal, and the directory
// synced: a crash leaves the old record or the new one, never half of one.
// A new journal is 0644 under the umask; an existing one keeps its mode.
func (s fileStore) save(r *Record) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return outfile.File{Name: "journal", Path: s.path, Sync: true}.Write(append(data, '\n'))
}
