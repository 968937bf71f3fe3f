package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfileFlags: --profile cpu|heap|allocs writes a pprof file to
// --profile-output; an unknown profile is an error naming the flag and the
// choices, and nothing is written.
func TestProfileFlags(t *testing.T) {
	for _, kind := range []string{"cpu", "heap", "allocs"} {
		t.Run(kind, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "p.pprof")
			var stdout, stderr bytes.Buffer
			if code := Main([]string{"version", "--profile", kind, "--profile-output", out}, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			// pprof files are gzip-compressed protocol buffers.
			if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
				t.Errorf("%s profile: %d bytes, not a gzip-compressed pprof file", kind, len(data))
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "p.pprof")
		var stdout, stderr bytes.Buffer
		code := Main([]string{"version", "--profile", "mutex", "--profile-output", out}, &stdout, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), "--profile") || !strings.Contains(stderr.String(), "none, cpu, heap or allocs") {
			t.Errorf("exit %d, stderr %q; want an error naming --profile and the choices", code, stderr.String())
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s written for an unknown profile", out)
		}
	})
}
