package journal

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/executor"
)

// TestFileJournalRefusesWhatIsNotARegularFile: a journal path (or its
// lock's) that is a FIFO, a link or a directory is refused, named, and
// left as it was; a FIFO does not hang the read (ReadFile opened it and
// waited for a writer).
func TestFileJournalRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	lockLinked := filepath.Join(dir, "lock.json")
	if err := os.Symlink(victim, lockLinked+".lock"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, says string }{
		{fifo, "journal " + fifo + ": is a named pipe (FIFO), not a regular file"},
		{link, "journal " + link + ": is a symbolic link, not a regular file"},
		{dir, "journal " + dir + ": is a directory"},
		{lockLinked, "journal " + lockLinked + ": its lock " + lockLinked + ".lock is a symbolic link, not a regular file"},
	} {
		done := make(chan error, 1)
		go func() {
			j, err := OpenFile(c.path, "prod", "1.31")
			if err == nil {
				j.Close()
			}
			done <- err
		}()
		var err error
		select {
		case err = <-done:
		case <-time.After(time.Minute):
			// Only when the open hangs: a writer lets it end.
			if w, werr := os.OpenFile(c.path, os.O_WRONLY|syscall.O_NONBLOCK, 0); werr == nil {
				w.Close()
			}
			t.Fatalf("OpenFile(%s) hung", c.path)
		}
		if err == nil || !strings.HasPrefix(err.Error(), c.says) {
			t.Errorf("OpenFile(%s) = %v, want %q", c.path, err, c.says)
		}
	}
	if _, err := ReadFile(fifo); err == nil || !strings.Contains(err.Error(), "is a named pipe (FIFO)") {
		t.Errorf("ReadFile(fifo) = %v", err)
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep me" {
		t.Errorf("written through a link: %q", data)
	}
	for _, p := range []string{link, lockLinked + ".lock"} {
		if st, err := os.Lstat(p); err != nil || st.Mode().Type() != fs.ModeSymlink {
			t.Errorf("%s replaced", p)
		}
	}
}

// TestFileJournalMode: a new journal is 0644 under the umask (it was
// 0600 whatever the umask: os.CreateTemp's mode); one chmodded by its
// user keeps its mode through every write.
func TestFileJournalMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.json")
	old := syscall.Umask(0o022)
	j, err := OpenFile(path, "prod", "1.31")
	if err == nil {
		err = j.Put("k", executor.Entry{State: executor.StepStarted, At: t0})
	}
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode() != 0o644 {
		t.Errorf("new journal: mode %v, want 0644 (umask 022)", st.Mode())
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := j.Put("k", executor.Entry{State: executor.StepDone, At: t0}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	if st, _ := os.Stat(path); st.Mode() != 0o600 {
		t.Errorf("journal written over: mode %v, want its 0600", st.Mode())
	}
}
