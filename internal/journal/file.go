package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
func OpenFile(path, cluster, to string) (*File, error) {
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %v", path, err)
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

func (s fileStore) load() (*Record, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decode(data, s.path)
}

// save writes the record to a temporary file in the same directory, syncs
// it, renames it over the journal and syncs the directory: a crash leaves
// the old record or the new one, never half of one.
func (s fileStore) save(r *Record) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), filepath.Base(s.path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(s.path)); err == nil {
		defer d.Close()
		return d.Sync()
	}
	return nil
}
