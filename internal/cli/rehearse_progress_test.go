package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/progress"
	"github.com/ladder-eks/ladder/internal/rehearse"
	"github.com/ladder-eks/ladder/internal/report"
)

// TestRehearsalProgress: a rehearsal of fewer than 1,000 nodes shows
// nothing; a big one starts a step at its first report, counts the nodes
// at the hop's version at most every 250 ms of wall time, and ends with
// the rehearsal's status: done when it succeeded, failed naming it
// otherwise.
func TestRehearsalProgress(t *testing.T) {
	at := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	now := func() time.Time { return at }
	var out bytes.Buffer
	rep := progress.New(progress.Options{Mode: progress.Plain, Out: &out, Now: now, Interval: time.Second})

	small := &rehearsalProgress{rep: rep, name: "workshop", now: now}
	small.update(rehearse.Progress{Elapsed: time.Minute, Limit: 6 * time.Hour, Nodes: 11})
	small.end(&report.Report{Status: report.Succeeded}, nil)
	if out.Len() != 0 {
		t.Fatalf("a small rehearsal showed %q", out.String())
	}

	counts := 0
	atHop := func() int { counts++; return 1200 }
	big := &rehearsalProgress{rep: rep, name: "mix", now: now}
	big.update(rehearse.Progress{Elapsed: 90 * time.Minute, Limit: 6 * time.Hour, Nodes: 5000, Hop: "1.31", Step: "1.31/node-group/spot", AtHop: atHop})
	at = at.Add(100 * time.Millisecond)
	big.update(rehearse.Progress{Elapsed: 91 * time.Minute, Limit: 6 * time.Hour, Nodes: 5000, Hop: "1.31", AtHop: atHop})
	at = at.Add(time.Second)
	big.update(rehearse.Progress{Elapsed: 2 * time.Hour, Limit: 6 * time.Hour, Nodes: 5000, Hop: "1.31", Step: "1.31/node-group/spot", AtHop: atHop})
	big.end(&report.Report{Status: report.Succeeded}, nil)
	if counts != 2 {
		t.Errorf("nodes counted %d times, want 2 (once per 250 ms)", counts)
	}
	want := "21:00:00  rehearsing mix started\n" +
		"21:00:01  rehearsing mix: 1200/5000 nodes at 1.31, virtual 2h0m0s of 6h0m0s, 1.31/node-group/spot 1s\n" +
		"21:00:01  rehearsing mix done in 1s\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}

	out.Reset()
	stuck := &rehearsalProgress{rep: rep, name: "mix", now: now}
	stuck.update(rehearse.Progress{Elapsed: 6 * time.Hour, Limit: 6 * time.Hour, Nodes: 5000})
	stuck.end(&report.Report{Status: report.Stuck}, nil)
	if want := "21:00:01  rehearsing mix started\n" +
		"21:00:01  rehearsing mix failed after 0s: rehearsal stuck\n"; out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
