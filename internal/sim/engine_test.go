package sim

import (
	"testing"
	"time"
)

var t0 = time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)

func TestRunOrdersByTimeThenSequence(t *testing.T) {
	e := New(t0, 1)
	var got []string
	e.After(2*time.Second, func() { got = append(got, "b") })
	e.After(time.Second, func() { got = append(got, "a1") })
	e.After(time.Second, func() { got = append(got, "a2") })
	e.After(0, func() {
		got = append(got, "now")
		e.After(time.Second, func() { got = append(got, "a3") })
	})
	if stop := e.Run(t0.Add(time.Hour), nil); stop != Idle {
		t.Fatalf("stop = %v, want Idle", stop)
	}
	want := "now a1 a2 a3 b"
	if s := join(got); s != want {
		t.Fatalf("order = %q, want %q", s, want)
	}
	if !e.Now().Equal(t0.Add(2 * time.Second)) {
		t.Fatalf("clock = %v, want t0+2s", e.Now())
	}
}

func TestRunStopsAtLimitWithoutPassingIt(t *testing.T) {
	e := New(t0, 1)
	ran := false
	e.After(2*time.Hour, func() { ran = true })
	if stop := e.Run(t0.Add(time.Hour), nil); stop != Limit {
		t.Fatalf("stop = %v, want Limit", stop)
	}
	if ran || !e.Now().Equal(t0.Add(time.Hour)) {
		t.Fatalf("ran=%v now=%v", ran, e.Now())
	}
}

func TestCancelAndTriggerCoalesce(t *testing.T) {
	e := New(t0, 1)
	n := 0
	tr := e.NewTrigger(func() { n++ })
	tr.Fire()
	tr.Fire()
	tr.Fire()
	ev := e.After(time.Second, func() { n += 100 })
	ev.Cancel()
	e.Run(t0.Add(time.Minute), nil)
	if n != 1 {
		t.Fatalf("n = %d, want 1 (three fires coalesce, cancelled event never runs)", n)
	}
}

func TestEveryIsAlignedToStart(t *testing.T) {
	e := New(t0, 1)
	var at []time.Duration
	e.After(25*time.Second, func() {
		e.Every(10*time.Second, func() { at = append(at, e.Elapsed()) })
	})
	e.Run(t0.Add(time.Minute), nil)
	want := []time.Duration{30 * time.Second, 40 * time.Second, 50 * time.Second, 60 * time.Second}
	if len(at) != len(want) {
		t.Fatalf("ticks at %v, want %v", at, want)
	}
	for i := range want {
		if at[i] != want[i] {
			t.Fatalf("ticks at %v, want %v", at, want)
		}
	}
}

func TestSameSeedSameDraws(t *testing.T) {
	a, b := New(t0, 42), New(t0, 42)
	for i := 0; i < 100; i++ {
		if a.Rand().Uint64() != b.Rand().Uint64() {
			t.Fatal("same seed gave different draws")
		}
	}
	if New(t0, 1).Rand().Uint64() == New(t0, 2).Rand().Uint64() {
		t.Fatal("different seeds gave the same first draw")
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

// TestOnStepsWatchesWithoutChangingTheRun: the watch runs after every
// third event, at the virtual time of the event it follows, and the events
// run in the same order and end at the same time as without it.
func TestOnStepsWatchesWithoutChangingTheRun(t *testing.T) {
	run := func(watch bool) (order string, seen []time.Duration) {
		e := New(t0, 1)
		var got []string
		for i, name := range []string{"a", "b", "c", "d", "e", "f", "g"} {
			e.After(time.Duration(i)*time.Second, func() { got = append(got, name) })
		}
		if watch {
			e.OnSteps(3, func() { seen = append(seen, e.Elapsed()) })
		}
		e.Run(t0.Add(time.Hour), nil)
		return join(got), seen
	}
	plain, _ := run(false)
	watched, seen := run(true)
	if watched != plain {
		t.Errorf("order %q with the watch, %q without", watched, plain)
	}
	if want := []time.Duration{2 * time.Second, 5 * time.Second}; len(seen) != 2 || seen[0] != want[0] || seen[1] != want[1] {
		t.Errorf("watched at %v, want %v", seen, want)
	}
}
