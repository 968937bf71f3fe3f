package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestReadFileRefusesWhatItDoesNotRead: a directory is not a regular file,
// and a file over MaxInputSize is too large, through either entry point.
func TestReadFileRefusesWhatItDoesNotRead(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxInputSize + 1); err != nil { // sparse: no 64 MiB written
		t.Fatal(err)
	}
	f.Close()
	for name, read := range map[string]func(string) ([]byte, error){"ReadFile": ReadFile, "ReadRegularFile": ReadRegularFile} {
		var nr *NotRegularError
		if _, err := read(dir); !errors.As(err, &nr) {
			t.Errorf("%s(directory) = %v, want a *NotRegularError", name, err)
		}
		if _, err := read(big); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s(%d bytes) = %v, want ErrTooLarge", name, MaxInputSize+1, err)
		}
	}
}
