package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCheckCountsSkippedFiles: files that are not manifests are counted on
// the summary line and in JSON's "skipped", never reported. (--no-render:
// the chart is read as plain files, so its sources are what is skipped.)
func TestCheckCountsSkippedFiles(t *testing.T) {
	dir := t.TempDir()
	writeCheckFile(t, dir, "app/cm.yaml", checkClean)
	writeCheckFile(t, dir, "chart/Chart.yaml", "apiVersion: v2\nname: shop\nversion: 1.0.0\n")
	writeCheckFile(t, dir, "chart/values.yaml", "replicaCount: 2\n")
	writeCheckFile(t, dir, "chart/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n")
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runLadder("check", "-f", dir, "--target", "1.32", "--no-render")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "Target 1.32: 0 ERROR, 0 WARNING in 1 object; 14 checks passed; 4 files skipped: 2 not Kubernetes manifests, 1 unrendered Helm/Go template, 1 special file (pipe, socket, device).\n"
	if !strings.Contains(stdout, want) {
		t.Errorf("summary:\n%s\nwant:\n%s", stdout, want)
	}

	_, stdout, _ = runLadder("check", "-f", dir, "--target", "1.32", "-o", "json", "--no-render")
	var rep struct{ Skipped map[string]int }
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if got := rep.Skipped; len(got) != 3 || got["notManifests"] != 2 || got["templates"] != 1 || got["specialFiles"] != 1 {
		t.Errorf("skipped %v", got)
	}

	_, stdout, _ = runLadder("check", "-f", filepath.Join(dir, "chart", "Chart.yaml"), "--target", "1.32")
	if !strings.Contains(stdout, "in 0 objects; 14 checks passed; 1 file skipped: not a Kubernetes manifest.\n") {
		t.Errorf("one file:\n%s", stdout)
	}
}

// TestCheckRefusesAPipe: -f naming a pipe is one line and exit 1, at once.
func TestCheckRefusesAPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runLadder("check", "-f", fifo, "--target", "1.32")
	if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "not a regular file but a named pipe") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
