package outfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDirRefusesLinksInside: links planted inside the output directory —
// at a file's place, at a directory's on the way — are neither followed
// nor replaced, whether the file is created or replaced.
func TestDirRefusesLinksInside(t *testing.T) {
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim.yaml")
	if err := os.WriteFile(victim, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(victim, filepath.Join(dir, "scenario.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "manifests")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(os.DevNull, filepath.Join(dir, "null.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := OpenDir("--to", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, c := range []struct{ rel, says string }{
		{"scenario.yaml", "is a symbolic link, not a regular file"},
		{"null.yaml", "is a symbolic link, not a regular file"},
		{"fifo.yaml", "is a named pipe (FIFO), not a regular file"},
		{"manifests/app.yaml", "is a symbolic link, not a directory"},
		{"manifests/victim.yaml", "is a symbolic link, not a directory"},
	} {
		err := d.Replace(c.rel, []byte("evil"))
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Replace %s: %v, want %q", c.rel, err, c.says)
		}
		if err := d.Create(c.rel, []byte("evil")); err == nil {
			t.Errorf("Create %s: wrote", c.rel)
		}
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep me" {
		t.Errorf("written through a link: %q", data)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("files written outside: %v", entries)
	}
	for _, name := range []string{"scenario.yaml", "manifests", "null.yaml"} {
		if st, err := os.Lstat(filepath.Join(dir, name)); err != nil || st.Mode().Type() != fs.ModeSymlink {
			t.Errorf("%s replaced: %v %v", name, st, err)
		}
	}
	leftovers(t, dir, "scenario.yaml", "manifests", "null.yaml", "fifo.yaml")
}

// TestDirRefusesPathsOutside: a file name that leads out of the directory
// (from a namespace a hostile API server names "../x") is refused.
func TestDirRefusesPathsOutside(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	d, err := OpenDir("--to", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, rel := range []string{"../escape.yaml", "manifests/../../escape.yaml", "/etc/escape.yaml", "", "a//b.yaml"} {
		if err := d.Replace(rel, []byte("x")); err == nil || !strings.Contains(err.Error(), "is not a path inside it") {
			t.Errorf("Replace %q: %v", rel, err)
		}
		if err := d.Create(rel, []byte("x")); err == nil {
			t.Errorf("Create %q wrote", rel)
		}
	}
	if _, err := os.Lstat(filepath.Join(parent, "escape.yaml")); err == nil {
		t.Error("escape.yaml written outside")
	}
	if err := d.Create("manifests/ok.yaml", []byte("ok")); err != nil {
		t.Fatal(err)
	}
	if err := d.Create("manifests/ok.yaml", []byte("again")); err == nil || !strings.HasSuffix(err.Error(), "already exists") {
		t.Fatalf("Create over an existing file: %v", err)
	}
	if err := d.Replace("manifests/ok.yaml", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "manifests", "ok.yaml")); string(data) != "new" {
		t.Fatalf("%q", data)
	}
}

// TestDirRaceLinkPlanted: a link planted at a file's place while it is
// written is refused, not replaced.
func TestDirRaceLinkPlanted(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d, err := OpenDir("--to", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	p := filepath.Join(dir, "manifests", "app.yaml")
	beforeRename = func(string) {
		if err := os.Symlink(victim, p); err != nil {
			t.Fatal(err)
		}
	}
	err = d.Replace("manifests/app.yaml", []byte("evil"))
	beforeRename = func(string) {}
	if err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Fatalf("Replace = %v", err)
	}
	if st, err := os.Lstat(p); err != nil || st.Mode().Type() != fs.ModeSymlink {
		t.Errorf("link replaced: %v %v", st, err)
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep me" {
		t.Errorf("written through: %q", data)
	}
	leftovers(t, filepath.Join(dir, "manifests"), "app.yaml")
}

// TestCheckDir: a path that is a file, or a link to nothing, is not a
// directory output; a link to a directory is the user's choice.
func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "nowhere"), dangling)
	linked := filepath.Join(dir, "linked")
	os.Symlink(t.TempDir(), linked)
	if err := CheckDir("--to", file); err == nil || !strings.Contains(err.Error(), "is a regular file, not a directory") {
		t.Errorf("file: %v", err)
	}
	if err := CheckDir("--to", dangling); err == nil || !strings.Contains(err.Error(), "is a symbolic link to nothing") {
		t.Errorf("dangling: %v", err)
	}
	if err := CheckDir("--to", linked); err != nil {
		t.Errorf("linked: %v", err)
	}
	d, err := OpenDir("--to", linked)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Create("scenario.yaml", []byte("x")); err != nil {
		t.Fatal(err)
	}
	d.Close()
}
