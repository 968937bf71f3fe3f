package cli

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// hostilePaths plants, in a fresh directory, what an attacker (or a slip)
// puts where a user's --report goes: a FIFO, a link to /dev/null, a link
// to a file outside, a directory. Each is named with what it is.
type hostilePath struct {
	path, says string
	before     fs.FileInfo
}

func plantHostile(t *testing.T) (paths []*hostilePath, victim string) {
	t.Helper()
	dir := t.TempDir()
	victim = filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.html")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	null := filepath.Join(dir, "null.html")
	if err := os.Symlink(os.DevNull, null); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "outside.html")
	if err := os.Symlink(victim, out); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*hostilePath{
		{path: fifo, says: "is a named pipe (FIFO), not a regular file"},
		{path: null, says: "is a symbolic link, not a regular file"},
		{path: out, says: "is a symbolic link, not a regular file"},
		{path: sub, says: "is a directory: name the file to write"},
	} {
		st, err := os.Lstat(p.path)
		if err != nil {
			t.Fatal(err)
		}
		p.before = st
		paths = append(paths, p)
	}
	return paths, victim
}

// untouched fails unless every planted path is the entry it was, the file
// outside holds what it held, and /dev/null is still the device.
func untouched(t *testing.T, paths []*hostilePath, victim string) {
	t.Helper()
	for _, p := range paths {
		st, err := os.Lstat(p.path)
		if err != nil || !os.SameFile(st, p.before) || st.Mode() != p.before.Mode() {
			t.Errorf("%s was replaced (%v, %v)", p.path, st, err)
		}
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep me" {
		t.Errorf("the file outside was written through a link: %q", data)
	}
	if st, err := os.Stat(os.DevNull); err != nil || st.Mode().Type() != fs.ModeDevice|fs.ModeCharDevice {
		t.Fatalf("%s is no longer a character device: %v %v", os.DevNull, st, err)
	}
}

// TestReportRefusesWhatIsNotARegularFile: every command with --report
// refuses, before it runs, a path that is a FIFO, a link (to /dev/null,
// to a file outside) or a directory, naming it; nothing is replaced or
// written through, and no output is printed (the rehearsal did not run).
func TestReportRefusesWhatIsNotARegularFile(t *testing.T) {
	journalPath := pausedJournal(t, t.TempDir())
	paths, victim := plantHostile(t)
	for _, p := range paths {
		for _, args := range [][]string{
			{"rehearse", "--scenario", "karpenter-drift", "--report", p.path},
			{"plan", "--scenario", "karpenter-drift", "--now", "2026-03-30T10:00:00Z", "--report", p.path},
			{"upgrade", "status", "--journal", journalPath, "--report", p.path},
			// Before the cluster is read: no kubeconfig is needed to be told.
			{"upgrade", "--approve", "--kubeconfig", filepath.Join(t.TempDir(), "none"), "--report", p.path},
		} {
			code, stdout, stderr := runLadder(args...)
			if want := "error: --report " + p.path + ": " + p.says; code != 1 || stdout != "" || !strings.HasPrefix(stderr, want) {
				t.Errorf("%s: exit %d, stdout %.80q, stderr %q; want 1, nothing, %q", strings.Join(args[:2], " "), code, stdout, stderr, want)
			}
		}
	}
	untouched(t, paths, victim)
}

// TestReportDashIsStdout: --report - writes the page to standard output
// alone; what the command prints otherwise goes to standard error,
// unchanged.
func TestReportDashIsStdout(t *testing.T) {
	_, plain, _ := runLadder("rehearse", "--scenario", "karpenter-drift")
	code, stdout, stderr := runLadder("rehearse", "--scenario", "karpenter-drift", "--report", "-")
	if code != 0 || !strings.HasPrefix(stdout, "<!DOCTYPE html>") || !strings.HasSuffix(strings.TrimSpace(stdout), "</html>") || stderr != plain {
		t.Errorf("rehearse --report -: exit %d, stdout %.60q, stderr %.60q (want the text report %.60q)", code, stdout, stderr, plain)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error("a file named - was written")
	}
	journalPath := pausedJournal(t, t.TempDir())
	_, status, _ := runLadder("upgrade", "status", "--journal", journalPath)
	code, stdout, stderr = runLadder("upgrade", "status", "--journal", journalPath, "--report", "-")
	if code != 0 || !strings.HasPrefix(stdout, "<!DOCTYPE html>") || !strings.Contains(stdout, "<strong>paused</strong>") {
		t.Errorf("upgrade status --report -: exit %d, stdout %.60q", code, stdout)
	}
	// The status counts time from now: compare its first line.
	if first := strings.SplitN(status, "\n", 2)[0]; !strings.HasPrefix(stderr, first) {
		t.Errorf("upgrade status --report -: stderr %.80q, want the status %.80q", stderr, first)
	}
}

// TestReportMode: a new report is 0644 under the umask (022: 0644, 077:
// 0600; os.CreateTemp made 0600 whatever the umask); a report written
// over keeps its file's mode.
func TestReportMode(t *testing.T) {
	journalPath := pausedJournal(t, t.TempDir())
	dir := t.TempDir()
	for _, c := range []struct {
		umask int
		want  fs.FileMode
	}{{0o022, 0o644}, {0o077, 0o600}} {
		p := filepath.Join(dir, "new.html")
		os.Remove(p)
		old := syscall.Umask(c.umask)
		code, _, stderr := runLadder("upgrade", "status", "--journal", journalPath, "--report", p)
		syscall.Umask(old)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if st, err := os.Stat(p); err != nil || st.Mode() != c.want {
			t.Errorf("umask %03o: mode %v, want %v", c.umask, st.Mode(), c.want)
		}
	}
	p := filepath.Join(dir, "kept.html")
	if err := os.WriteFile(p, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runLadder("upgrade", "status", "--journal", journalPath, "--report", p); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if st, _ := os.Stat(p); st.Mode() != 0o640 {
		t.Errorf("the report written over has mode %v, want its 0640", st.Mode())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d files in %s, want the two reports and no temporary file", len(entries), dir)
	}
}

// TestGenerateOutputRefused: scenario generate -o refuses the same paths
// before it generates, and writes to standard output for -.
func TestGenerateOutputRefused(t *testing.T) {
	paths, victim := plantHostile(t)
	written := readFIFO(t, paths[0].path)
	for _, p := range paths {
		code, stdout, stderr := runLadder("scenario", "generate", "--nodes", "2", "--pods-per-node", "1", "-o", p.path)
		if want := "error: -o " + p.path + ": " + p.says; code != 1 || stdout != "" || !strings.HasPrefix(stderr, want) {
			t.Errorf("exit %d, stdout %.60q, stderr %q; want %q", code, stdout, stderr, want)
		}
	}
	if n := written(); n != 0 {
		t.Errorf("%d bytes written into the FIFO", n)
	}
	untouched(t, paths, victim)
	code, stdout, _ := runLadder("scenario", "generate", "--nodes", "2", "--pods-per-node", "1", "-o", "-")
	if code != 0 || !strings.Contains(stdout, "kind: Scenario") {
		t.Errorf("-o -: exit %d, %.80q", code, stdout)
	}
}

// TestProfileOutputRefused: --profile-output refuses a FIFO before the
// command runs and writes nothing into it (os.Create opened it and wrote
// the profile into whoever read it, or hung with no reader).
func TestProfileOutputRefused(t *testing.T) {
	paths, victim := plantHostile(t)
	written := readFIFO(t, paths[0].path)
	for _, kind := range []string{"heap", "cpu"} {
		for _, p := range paths {
			code, _, stderr := runLadder("version", "--profile", kind, "--profile-output", p.path)
			if want := "error: --profile-output " + p.path + ": " + p.says; code != 1 || !strings.HasPrefix(stderr, want) {
				t.Errorf("--profile %s: exit %d, stderr %q; want %q", kind, code, stderr, want)
			}
		}
	}
	if n := written(); n != 0 {
		t.Errorf("%d bytes written into the FIFO", n)
	}
	untouched(t, paths, victim)
}

// readFIFO holds the FIFO at path open and reads it, so that a command
// that opens it to write neither hangs the test nor goes unseen; written
// stops reading and says how many bytes came through.
func readFIFO(t *testing.T, path string) (written func() int) {
	t.Helper()
	r, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan int)
	go func() {
		data, _ := io.ReadAll(r)
		read <- len(data)
	}()
	return func() int {
		r.Close()
		return <-read
	}
}

// TestScenarioShowToRefusesLinksInside: links planted inside --to DIR (a
// file's place pointing outside, a directory's place pointing outside)
// are neither followed nor replaced; nothing is written outside.
func TestScenarioShowToRefusesLinksInside(t *testing.T) {
	for _, plant := range []string{"scenario.yaml", "manifests"} {
		outside := t.TempDir()
		dir := t.TempDir()
		// A link to nothing yet: os.Stat saw no file and WriteFile created
		// one at the far end.
		if err := os.Symlink(filepath.Join(outside, "planted"), filepath.Join(dir, plant)); err != nil {
			t.Fatal(err)
		}
		if plant == "manifests" {
			if err := os.Mkdir(filepath.Join(outside, "planted"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		code, _, stderr := runLadder("scenario", "show", "karpenter-drift", "--to", dir)
		if code != 1 || !strings.Contains(stderr, "--to "+dir+": ") || !strings.Contains(stderr, filepath.Join(dir, plant)) {
			t.Errorf("%s: exit %d, stderr %q", plant, code, stderr)
		}
		var written []string
		filepath.WalkDir(outside, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				written = append(written, p)
			}
			return nil
		})
		if len(written) != 0 {
			t.Errorf("%s: written outside --to: %v", plant, written)
		}
		if st, err := os.Lstat(filepath.Join(dir, plant)); err != nil || st.Mode().Type() != fs.ModeSymlink {
			t.Errorf("%s: the link was replaced", plant)
		}
	}
}

// TestCaptureToCheckedFirst: capture --to refuses a path that is not a
// directory, or a directory holding a scenario.yaml, before it reads the
// cluster (no kubeconfig is needed to be told).
func TestCaptureToCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	taken := filepath.Join(dir, "taken")
	os.Mkdir(taken, 0o755)
	os.WriteFile(filepath.Join(taken, "scenario.yaml"), nil, 0o644)
	none := filepath.Join(dir, "no-kubeconfig")
	for _, c := range []struct{ to, want string }{
		{file, "error: --to " + file + ": is a regular file, not a directory"},
		{taken, "error: " + filepath.Join(taken, "scenario.yaml") + " exists: capture into a new directory"},
	} {
		code, _, stderr := runLadder("capture", "--kubeconfig", none, "--to", c.to)
		if code != 1 || !strings.HasPrefix(stderr, c.want) {
			t.Errorf("exit %d, stderr %q; want %q", code, stderr, c.want)
		}
	}
}
