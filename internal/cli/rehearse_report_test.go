package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// --report writes the HTML page beside the usual output, which does not
// change; the same run writes the same bytes.
func TestRehearseReportHTML(t *testing.T) {
	dir := t.TempDir()
	_, plain, _ := runLadder("rehearse", "--scenario", "karpenter-drift", "-o", "json")
	var pages [][]byte
	for _, name := range []string{"a.html", "b.html"} {
		path := filepath.Join(dir, name)
		code, stdout, stderr := runLadder("rehearse", "--scenario", "karpenter-drift", "-o", "json", "--report", path)
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr: %s", code, stderr)
		}
		if stdout != plain {
			t.Errorf("-o json changed with --report")
		}
		page, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, page)
	}
	if !bytes.HasPrefix(pages[0], []byte("<!DOCTYPE html>")) || !bytes.Contains(pages[0], []byte(`Rehearsal of <span id="scenario">karpenter-drift</span>`)) {
		t.Errorf("not the rehearsal's page: %.200s", pages[0])
	}
	if !bytes.Equal(pages[0], pages[1]) {
		t.Errorf("two runs wrote different pages")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("%d files in the directory, want the two pages and no temporary file left", len(entries))
	}
}

func TestRehearseReportHTMLUnwritable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "r.html")
	code, _, stderr := runLadder("rehearse", "--scenario", "karpenter-drift", "--report", path)
	if want := "error: --report " + path + ": no such directory " + filepath.Dir(path) + "\n"; code != 1 || stderr != want {
		t.Errorf("exit %d, stderr %q: want 1 and %q", code, stderr, want)
	}
}

// plan --report writes the plan's rehearsal as the same page; the runbook
// does not change.
func TestPlanReportHTML(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.html")
	_, plain, _ := runLadder("plan", "--scenario", "karpenter-drift", "--now", "2026-03-30T10:00:00Z")
	code, stdout, stderr := runLadder("plan", "--scenario", "karpenter-drift", "--now", "2026-03-30T10:00:00Z", "--report", path)
	if code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, stderr)
	}
	if stdout != plain {
		t.Errorf("the runbook changed with --report")
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte(`Rehearsal of <span id="scenario">karpenter-drift</span>`)) || !bytes.Contains(page, []byte(`id="chart-steps"`)) {
		t.Errorf("not the rehearsal's page: %.300s", page)
	}
}
