package render

import (
	"errors"
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// readOnlyDisk is the file system kustomize builds from: the disk, read
// only, every file read capped at MaxFileBytes and recorded, so the caller
// learns which files the build consumed.
type readOnlyDisk struct {
	filesys.FileSystem // filesys.MakeFsOnDisk()
	read               consumedSet
	// rewrite, when set, replaces the content of one file as it is read; it
	// is how the root kustomization asks kustomize for origin annotations.
	rewrite func(path string, data []byte) ([]byte, error)
}

var errReadOnly = errors.New("ladder renders read-only: the build tried to write a file")

func newReadOnlyDisk() *readOnlyDisk {
	return &readOnlyDisk{FileSystem: filesys.MakeFsOnDisk(), read: consumedSet{}}
}

func (d *readOnlyDisk) ReadFile(path string) ([]byte, error) {
	data, err := readCapped(path)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	d.read.add(abs)
	if d.rewrite != nil {
		return d.rewrite(abs, data)
	}
	return data, nil
}

func (d *readOnlyDisk) Open(path string) (filesys.File, error) {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() > MaxFileBytes {
		return nil, errTooLarge{path, fi.Size()}
	}
	return d.FileSystem.Open(path)
}

func (d *readOnlyDisk) Create(string) (filesys.File, error) { return nil, errReadOnly }
func (d *readOnlyDisk) Mkdir(string) error                  { return errReadOnly }
func (d *readOnlyDisk) MkdirAll(string) error               { return errReadOnly }
func (d *readOnlyDisk) RemoveAll(string) error              { return errReadOnly }
func (d *readOnlyDisk) WriteFile(string, []byte) error      { return errReadOnly }
