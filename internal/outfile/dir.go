package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Dir is a directory output (--to DIR): every file is written inside it,
// by a path relative to it, never outside (os.Root refuses "..", absolute
// paths and links that lead out) and never through a link found inside it
// (each directory on the way must be a directory, each file written is a
// new one created with O_EXCL, or a regular file replaced by rename).
type Dir struct {
	// Name is how errors name the output: the flag ("--to").
	Name string
	// Path is the directory the user gave; a link to a directory is the
	// user's choice and is followed.
	Path string
	root *os.Root
}

// CheckDir refuses, before any work runs, a directory output whose path
// exists and is not a directory (or a link to one), or whose parent does
// not exist.
func CheckDir(name, dir string) error {
	st, err := os.Stat(dir)
	switch {
	case err == nil && st.IsDir():
		return nil
	case err == nil:
		return fmt.Errorf("%s %s: is %s, not a directory: name a new or existing directory", name, dir, Kind(st.Mode()))
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s %s: %v", name, dir, unwrapPath(err))
	}
	if lst, lerr := os.Lstat(dir); lerr == nil {
		return fmt.Errorf("%s %s: is %s to nothing: name a new or existing directory", name, dir, Kind(lst.Mode()))
	}
	return nil
}

// OpenDir creates dir (and its parents, 0755 under the umask) if it does
// not exist, and opens it for writing inside.
func OpenDir(name, dir string) (*Dir, error) {
	if err := CheckDir(name, dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s %s: %v", name, dir, unwrapPath(err))
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v", name, dir, unwrapPath(err))
	}
	return &Dir{Name: name, Path: dir, root: root}, nil
}

// Close closes the directory.
func (d *Dir) Close() error { return d.root.Close() }

// Join is rel as the user sees it: under the directory they named.
func (d *Dir) Join(rel string) string { return filepath.Join(d.Path, filepath.FromSlash(rel)) }

// Exists reports whether rel, a slash-separated path inside the
// directory, names an entry (of any kind, a link not followed).
func (d *Dir) Exists(rel string) (bool, error) {
	if err := d.local(rel); err != nil {
		return false, err
	}
	_, err := d.root.Lstat(filepath.FromSlash(rel))
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, d.errorf(rel, "%v", unwrapPath(err))
}

// Create writes data into a new file rel (0644 under the umask), making
// the directories on the way; an existing entry at rel is refused.
func (d *Dir) Create(rel string, data []byte) error {
	if err := d.mkdirs(rel); err != nil {
		return err
	}
	f, err := d.root.OpenFile(filepath.FromSlash(rel), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return d.errorf(rel, "already exists")
	}
	if err != nil {
		return d.errorf(rel, "%v", unwrapPath(err))
	}
	if err := writeClose(f, data, 0, false); err != nil {
		return d.errorf(rel, "%v", unwrapPath(err))
	}
	return nil
}

// Replace writes data to rel whole, as File.Write does: a regular file
// there is replaced (keeping its mode), anything else refused.
func (d *Dir) Replace(rel string, data []byte) error {
	if err := d.mkdirs(rel); err != nil {
		return err
	}
	name := filepath.FromSlash(rel)
	var keep fs.FileMode
	if st, err := d.root.Lstat(name); err == nil {
		if !st.Mode().IsRegular() {
			return d.errorf(rel, "is %s, not a regular file: Ladder writes only regular files", Kind(st.Mode()))
		}
		keep = st.Mode().Perm()
	}
	var f *os.File
	var tmp string
	for range 100 {
		tmp = path.Join(path.Dir(rel), "."+path.Base(rel)+".tmp-"+random())
		var err error
		f, err = d.root.OpenFile(filepath.FromSlash(tmp), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return d.errorf(rel, "%v", unwrapPath(err))
		}
		break
	}
	if f == nil {
		return d.errorf(rel, "cannot create a temporary file beside it")
	}
	defer d.root.Remove(filepath.FromSlash(tmp))
	if err := writeClose(f, data, keep, false); err != nil {
		return d.errorf(rel, "%v", unwrapPath(err))
	}
	beforeRename(d.Join(rel))
	if st, err := d.root.Lstat(name); err == nil && !st.Mode().IsRegular() {
		return d.errorf(rel, "is %s, not a regular file: Ladder writes only regular files", Kind(st.Mode()))
	}
	if err := d.root.Rename(filepath.FromSlash(tmp), name); err != nil {
		return d.errorf(rel, "%v", unwrapPath(err))
	}
	return nil
}

// mkdirs makes the directories on the way to rel, refusing any that is a
// link or not a directory.
func (d *Dir) mkdirs(rel string) error {
	if err := d.local(rel); err != nil {
		return err
	}
	parts := strings.Split(path.Dir(rel), "/")
	cur := ""
	for _, p := range parts {
		if p == "." {
			continue
		}
		cur = path.Join(cur, p)
		st, err := d.root.Lstat(filepath.FromSlash(cur))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := d.root.Mkdir(filepath.FromSlash(cur), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return d.errorf(cur, "%v", unwrapPath(err))
			}
			// Made by us, or by someone between: look again.
			if st, err = d.root.Lstat(filepath.FromSlash(cur)); err != nil {
				return d.errorf(cur, "%v", unwrapPath(err))
			}
		case err != nil:
			return d.errorf(cur, "%v", unwrapPath(err))
		}
		if !st.IsDir() {
			return d.errorf(cur, "is %s, not a directory: Ladder writes only inside the directory it was given", Kind(st.Mode()))
		}
	}
	return nil
}

// local refuses a path that is not a plain relative one inside the
// directory.
func (d *Dir) local(rel string) error {
	if rel == "" || strings.Contains(rel, "\\") || !filepath.IsLocal(filepath.FromSlash(rel)) || path.Clean(rel) != rel {
		return fmt.Errorf("%s %s: %q is not a path inside it", d.Name, d.Path, rel)
	}
	return nil
}

func (d *Dir) errorf(rel, format string, a ...any) error {
	return fmt.Errorf("%s %s: %s: %s", d.Name, d.Path, d.Join(rel), fmt.Sprintf(format, a...))
}
