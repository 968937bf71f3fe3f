package journal

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/executor"
)

const resumedKey = "1.31/node-group/initial"

// run is one ladder upgrade process on a file journal: it opens the
// journal, records, and is killed (closed without an end record) or ends.
func openRun(t *testing.T, path string) *File {
	t.Helper()
	j, err := OpenFile(path, "prod", "1.31")
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func put(t *testing.T, j *File, key string, e executor.Entry) {
	t.Helper()
	if err := j.Put(key, e); err != nil {
		t.Fatal(err)
	}
}

// TestResumedStepCountsEveryRun: a node-group step started, its update
// called, the run beating for 10 minutes, then killed (kill -9: no end
// record); the next run starts the step again 5 minutes later and ends it
// a minute after. The step took 11 minutes — 10 in the killed run, to its
// last beat, and 1 in the last — not the last run's minute alone (it was
// 0 s when the resumed run found the update already done).
func TestResumedStepCountsEveryRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.json")
	run1 := openRun(t, path)
	put(t, run1, resumedKey, executor.Entry{State: executor.StepStarted, At: t0})
	put(t, run1, resumedKey+"/UpdateNodegroupVersion", executor.Entry{State: executor.Calling, At: t0.Add(time.Second)})
	put(t, run1, resumedKey+"/UpdateNodegroupVersion", executor.Entry{State: executor.Called, ID: "u-1", At: t0.Add(2 * time.Second)})
	for m := 1; m <= 10; m++ {
		if err := run1.Beat(resumedKey, t0.Add(time.Duration(m)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	// A beat keeps the step's start: a running step's time runs from it.
	rec, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if st := stepOf(t, rec.Status("", t0.Add(12*time.Minute)), resumedKey); st.ElapsedSeconds != 720 || st.State != "started" {
		t.Fatalf("the running step: %+v, want 12m from its start", st)
	}
	run1.Close() // killed

	run2 := openRun(t, path)
	started := t0.Add(15 * time.Minute)
	put(t, run2, resumedKey, executor.Entry{State: executor.StepStarted, At: started})
	put(t, run2, resumedKey, executor.Entry{State: executor.StepDone, Started: &started, At: started.Add(time.Minute)})
	run2.Close()

	if rec, err = ReadFile(path); err != nil {
		t.Fatal(err)
	}
	s := rec.Status("journal.json", time.Time{})
	st := stepOf(t, s, resumedKey)
	if st.ElapsedSeconds != 660 || st.EarlierSeconds != 600 {
		t.Errorf("elapsed %vs (earlier %vs), want 660 (600 before the kill + 60)", st.ElapsedSeconds, st.EarlierSeconds)
	}
	if s.ElapsedSeconds != 16*60 {
		t.Errorf("the upgrade's elapsed %vs, want 16m from the step's first start", s.ElapsedSeconds)
	}
	if e := rec.Entries[resumedKey]; e.FirstStarted == nil || !e.FirstStarted.Equal(t0) {
		t.Errorf("first started %v, want %v", e.FirstStarted, t0)
	}
	var text bytes.Buffer
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	want := `Upgrade of prod to 1.31 (journal: journal.json)
HOP    STEP                 STATE   REPLACED   ELAPSED   REMAINING   BLOCKED BY
1.31   node-group/initial   done    -          11m       -           -
1.31/node-group/initial resumed: 10m in earlier runs (to each one's last record) + 60s in the last = 11m
Elapsed 16m; no rehearsal in the journal.
`
	if text.String() != want {
		t.Errorf("status:\n%s\nwant:\n%s", text.String(), want)
	}
	// The page draws the last run's part, where it ran.
	if ph := rec.Steps(time.Time{}).Phases; len(ph) != 1 || ph[0].End-ph[0].Start != 60 {
		t.Errorf("the page's step: %+v, want the last run's 60 s", ph)
	}
}

// TestResumedStepAcrossPausesAndKills: a step that failed (a paused
// drain), was rerun and killed 3 minutes in, then rerun to the end counts
// its 5 failed minutes, the killed run's 3 and the last run's 1; a run
// killed before any beat counts to the last record it made for the step.
func TestResumedStepAcrossPausesAndKills(t *testing.T) {
	j := NewMemory("prod", "1.31")
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	started := t0
	j.Put(resumedKey, executor.Entry{State: executor.StepStarted, At: at(0)})
	j.Put(resumedKey, executor.Entry{State: executor.StepFailed, Message: "PodEvictionFailure", Started: &started, At: at(5)})
	j.Put(resumedKey, executor.Entry{State: executor.StepStarted, At: at(60)})
	j.Beat(resumedKey, at(63))
	// killed; the next run, killed too, got as far as its operation's call.
	j.Put(resumedKey, executor.Entry{State: executor.StepStarted, At: at(120)})
	j.Put(resumedKey+"/UpdateNodegroupVersion", executor.Entry{State: executor.Calling, At: at(122)})
	// killed
	last := at(180)
	j.Put(resumedKey, executor.Entry{State: executor.StepStarted, At: last})
	j.Put(resumedKey, executor.Entry{State: executor.StepDone, Started: &last, At: at(181)})
	st := stepOf(t, j.Record().Status("", time.Time{}), resumedKey)
	if st.EarlierSeconds != (5+3+2)*60 || st.ElapsedSeconds != (5+3+2+1)*60 {
		t.Errorf("earlier %vs, elapsed %vs; want 10m and 11m", st.EarlierSeconds, st.ElapsedSeconds)
	}
	if e := j.Record().Entries[resumedKey]; e.FirstStarted == nil || !e.FirstStarted.Equal(t0) {
		t.Errorf("first started %v", e.FirstStarted)
	}
	// A beat for a step not running is ignored.
	if err := j.Beat(resumedKey, at(200)); err != nil || j.Record().Entries[resumedKey].Alive != nil {
		t.Errorf("a beat on a done step: %v %+v", err, j.Record().Entries[resumedKey])
	}
}

// TestCompareCountsAResumedStep: the comparison's ACTUAL for a resumed
// step is its time in every run, and the text says how it adds up.
func TestCompareCountsAResumedStep(t *testing.T) {
	rec, run := rehearseInto(t, "workshop", "1.31")
	final := StateOf(run)
	rec.Outcome = &final
	e := rec.Entries[resumedKey]
	e.EarlierSeconds = 600
	first := e.Started.Add(-time.Hour)
	e.FirstStarted = &first
	rec.Entries[resumedKey] = e
	c, err := rec.Compare()
	if err != nil {
		t.Fatal(err)
	}
	var sc StepComparison
	for _, s := range c.Steps {
		if s.Key == resumedKey {
			sc = s
		}
	}
	if sc.ActualSeconds != sc.PredictedSeconds+600 || sc.EarlierSeconds != 600 || sc.Ratio == nil || *sc.Ratio <= 1 {
		t.Errorf("the resumed step: %+v, want its rehearsed time and the 600 s before the kill", sc)
	}
	var out bytes.Buffer
	if err := c.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\n1.31/node-group/initial resumed: ACTUAL is 10m in earlier runs (to each one's last record) + ") {
		t.Errorf("text:\n%s", out.String())
	}
}
