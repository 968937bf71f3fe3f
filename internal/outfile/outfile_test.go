package outfile

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWriteRefusesWhatIsNotARegularFile: each kind of entry an attacker
// (or a slip) can put at the path is refused, named, and left as it was.
// A FIFO must not hang the write; a link must not be replaced nor written
// through.
func TestWriteRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.html")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	toNull := filepath.Join(dir, "null.html")
	if err := os.Symlink(os.DevNull, toNull); err != nil {
		t.Fatal(err)
	}
	toOutside := filepath.Join(dir, "outside.html")
	if err := os.Symlink(outside, toOutside); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling.html")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, says string }{
		{fifo, "is a named pipe (FIFO), not a regular file"},
		{toNull, "is a symbolic link, not a regular file"},
		{toOutside, "is a symbolic link, not a regular file"},
		{dangling, "is a symbolic link, not a regular file"},
		{sub, "is a directory: name the file to write"},
	} {
		before, err := os.Lstat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		f := File{Name: "--report", Path: c.path}
		if err := f.Check(); err == nil || !strings.HasPrefix(err.Error(), "--report "+c.path+": "+c.says) {
			t.Errorf("Check %s: %v, want %q", c.path, err, c.says)
		}
		if err := f.Write([]byte("<html>")); err == nil || !strings.HasPrefix(err.Error(), "--report "+c.path+": "+c.says) {
			t.Errorf("Write %s: %v, want %q", c.path, err, c.says)
		}
		after, err := os.Lstat(c.path)
		if err != nil || after.Mode() != before.Mode() || !os.SameFile(before, after) {
			t.Errorf("%s was replaced: %v %v", c.path, after, err)
		}
	}
	if data, _ := os.ReadFile(outside); string(data) != "keep me" {
		t.Errorf("the file outside was written through the link: %q", data)
	}
	if st, err := os.Stat(os.DevNull); err != nil || st.Mode().Type() != fs.ModeDevice|fs.ModeCharDevice {
		t.Errorf("%s is no longer a character device: %v %v", os.DevNull, st, err)
	}
	leftovers(t, dir, "fifo.html", "null.html", "outside.html", "dangling.html", "sub")
}

// TestCheckRefusesDevNull: the device itself, checked only (Lstat): a
// write is never tried on it.
func TestCheckRefusesDevNull(t *testing.T) {
	err := File{Name: "--report", Path: os.DevNull}.Check()
	if err == nil || err.Error() != "--report /dev/null: is a character device, not a regular file: name a new file or a regular one (Ladder writes only regular files)" {
		t.Fatalf("Check(/dev/null) = %v", err)
	}
}

// TestWriteDash: "-" is standard output where one is given, a file name
// where not.
func TestWriteDash(t *testing.T) {
	var out bytes.Buffer
	if err := (File{Name: "--report", Path: "-", Stdout: &out}).Write([]byte("page")); err != nil || out.String() != "page" {
		t.Fatalf("Write(-) = %v, stdout %q", err, out.String())
	}
	t.Chdir(t.TempDir())
	if err := (File{Name: "--profile-output", Path: "-"}).Write([]byte("prof")); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile("-"); err != nil || string(data) != "prof" {
		t.Fatalf("file -: %q %v", data, err)
	}
}

// TestWriteMode: a new file is 0644 under the umask (022 gives 0644, 077
// gives 0600); a regular file written over keeps its mode.
func TestWriteMode(t *testing.T) {
	for _, c := range []struct {
		umask int
		want  fs.FileMode
	}{{0o022, 0o644}, {0o077, 0o600}, {0o002, 0o644}} {
		old := syscall.Umask(c.umask)
		dir := t.TempDir()
		p := filepath.Join(dir, "report.html")
		err := File{Name: "--report", Path: p}.Write([]byte("x"))
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(p); err != nil || st.Mode() != c.want {
			t.Errorf("umask %03o: mode %v, want %v (%v)", c.umask, st.Mode(), c.want, err)
		}
	}
	p := filepath.Join(t.TempDir(), "journal.json")
	if err := os.WriteFile(p, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := (File{Name: "journal", Path: p, Sync: true}).Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode() != 0o640 {
		t.Errorf("existing file's mode %v, want 0640", st.Mode())
	}
	if data, _ := os.ReadFile(p); string(data) != "new" {
		t.Errorf("content %q", data)
	}
}

// TestWriteRaceLinkPlanted: a link planted at the path after the check,
// while the page is written, is refused and left in place; the file it
// points to is untouched, and nothing is left behind.
func TestWriteRaceLinkPlanted(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, existing := range []bool{false, true} {
		p := filepath.Join(dir, "report.html")
		os.Remove(p)
		if existing {
			if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		planted := false
		beforeRename = func(path string) {
			if path != p {
				t.Errorf("hook at %s", path)
			}
			os.Remove(p)
			if err := os.Symlink(outside, p); err != nil {
				t.Fatal(err)
			}
			planted = true
		}
		err := File{Name: "--report", Path: p}.Write([]byte("page"))
		beforeRename = func(string) {}
		if !planted {
			t.Fatal("the hook did not run")
		}
		if err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
			t.Errorf("existing %v: Write = %v, want the link refused", existing, err)
		}
		if st, err := os.Lstat(p); err != nil || st.Mode().Type() != fs.ModeSymlink {
			t.Errorf("the link was replaced: %v %v", st, err)
		}
		if data, _ := os.ReadFile(outside); string(data) != "keep me" {
			t.Errorf("written through the link: %q", data)
		}
		leftovers(t, dir, "report.html")
	}
}

// TestWriteThroughLinkedDirectory: a link among the path's directories
// is the user's; the file lands in the directory it points to.
func TestWriteThroughLinkedDirectory(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "reports")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := (File{Name: "--report", Path: filepath.Join(link, "r.html")}).Write([]byte("page")); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(real, "r.html")); err != nil || string(data) != "page" {
		t.Fatalf("%q %v", data, err)
	}
	if err := (File{Name: "--report", Path: filepath.Join(real, "missing", "r.html")}).Check(); err == nil || !strings.Contains(err.Error(), "no such directory") {
		t.Fatalf("missing directory: %v", err)
	}
}

// leftovers fails when dir holds anything but want (a temporary file left
// behind).
func leftovers(t *testing.T, dir string, want ...string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	ok := map[string]bool{}
	for _, w := range want {
		ok[w] = true
	}
	for _, g := range got {
		if !ok[g] {
			t.Errorf("left in %s: %s", dir, g)
		}
	}
}
