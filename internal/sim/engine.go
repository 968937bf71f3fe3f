// Package sim is the discrete-event engine under every twin: a virtual clock
// (k8s.io/utils/clock), an event queue ordered by (time, sequence) and a
// seeded random source. Nothing in a rehearsal reads wall-clock time or
// global randomness, so the same scenario and seed give the same run.
package sim

import (
	"math/rand/v2"
	"time"

	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

// Engine runs scheduled events in virtual time.
type Engine struct {
	clock *clocktesting.FakeClock
	start time.Time
	queue eventQueue
	seq   uint64
	rng   *rand.Rand
	steps uint64
	// watch, when set, is called every watchEvery events (OnSteps).
	watch      func()
	watchEvery uint64
	// after are called after every event (AfterEvent).
	after []func()
}

// New returns an engine whose clock starts at start and whose randomness is
// derived from seed.
func New(start time.Time, seed uint64) *Engine {
	return &Engine{
		clock: clocktesting.NewFakeClock(start),
		start: start,
		rng:   rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
	}
}

// Clock is the virtual clock, for code that takes a k8s.io/utils/clock.
func (e *Engine) Clock() clock.PassiveClock { return e.clock }

// Now is the current virtual time.
func (e *Engine) Now() time.Time { return e.clock.Now() }

// Start is the virtual time the run began.
func (e *Engine) Start() time.Time { return e.start }

// Elapsed is the virtual time since the start.
func (e *Engine) Elapsed() time.Duration { return e.clock.Since(e.start) }

// Rand is the run's seeded random source. Draw from it only in a
// deterministic order (never while iterating a map).
func (e *Engine) Rand() *rand.Rand { return e.rng }

// Steps is the number of events run so far.
func (e *Engine) Steps() uint64 { return e.steps }

// OnSteps calls fn after every `every` events Run executes: a look at a
// long run from outside it (a progress line). fn is not an event — it
// takes no place in the queue and reads no virtual time of its own — so
// the run is the same with it or without it, provided fn only reads.
func (e *Engine) OnSteps(every uint64, fn func()) {
	if every == 0 {
		every = 1
	}
	e.watch, e.watchEvery = fn, every
}

// AfterEvent calls fn after every event Run executes, at the event's
// instant: a twin that accounts for what an event changed (a PDB's status
// once a node's pods are gone) does it there. Like OnSteps, fn is not an
// event: it must not schedule one or change what later events do.
func (e *Engine) AfterEvent(fn func()) { e.after = append(e.after, fn) }

// Event is a scheduled callback; Cancel stops it from running.
type Event struct {
	at        time.Time
	fn        func()
	cancelled bool
}

// Cancel prevents the event from running. It is safe to call more than once.
func (ev *Event) Cancel() {
	if ev != nil {
		ev.cancelled = true
	}
}

// At schedules fn at virtual time t (or now, if t is in the past).
func (e *Engine) At(t time.Time, fn func()) *Event {
	if t.Before(e.Now()) {
		t = e.Now()
	}
	e.seq++
	ev := &Event{at: t, fn: fn}
	e.queue.push(queued{when: t.UnixNano(), seq: e.seq, ev: ev})
	return ev
}

// After schedules fn d from now.
func (e *Engine) After(d time.Duration, fn func()) *Event { return e.At(e.Now().Add(d), fn) }

// Every runs fn at start+k·period for every k ≥ 1, aligned to the engine's
// start so that periodic controllers tick at reproducible instants.
func (e *Engine) Every(period time.Duration, fn func()) {
	var tick func()
	next := e.start
	tick = func() {
		fn()
		next = next.Add(period)
		e.At(next, tick)
	}
	next = e.start.Add(period)
	for !next.After(e.Now()) {
		next = next.Add(period)
	}
	e.At(next, tick)
}

// Stop says why Run returned.
type Stop int

const (
	// Idle means no event is left to run.
	Idle Stop = iota
	// Done means the done function returned true.
	Done
	// Limit means the next event lies beyond the time limit.
	Limit
)

// Run executes events in (time, sequence) order until done returns true
// (checked after each event), no event is left, or the next event is after
// limit. The clock never moves past limit.
func (e *Engine) Run(limit time.Time, done func() bool) Stop {
	for {
		if done != nil && done() {
			return Done
		}
		ev := e.peek()
		if ev == nil {
			return Idle
		}
		if ev.at.After(limit) {
			if limit.After(e.Now()) {
				e.clock.SetTime(limit)
			}
			return Limit
		}
		e.queue.pop()
		if ev.cancelled {
			continue
		}
		if ev.at.After(e.Now()) {
			e.clock.SetTime(ev.at)
		}
		e.steps++
		ev.fn()
		for _, fn := range e.after {
			fn()
		}
		if e.watch != nil && e.steps%e.watchEvery == 0 {
			e.watch()
		}
	}
}

// RunUntil runs every event due up to t and leaves the clock at t.
func (e *Engine) RunUntil(t time.Time) {
	e.Run(t, nil)
	if t.After(e.Now()) {
		e.clock.SetTime(t)
	}
}

func (e *Engine) peek() *Event {
	for len(e.queue) > 0 {
		ev := e.queue[0].ev
		if !ev.cancelled {
			return ev
		}
		e.queue.pop()
	}
	return nil
}

// Trigger coalesces requests to run fn: however often Fire is called before
// fn runs, fn runs once, at the current virtual time (after events already
// queued for that instant).
type Trigger struct {
	e       *Engine
	fn      func()
	pending bool
}

// NewTrigger returns a trigger that runs fn.
func (e *Engine) NewTrigger(fn func()) *Trigger { return &Trigger{e: e, fn: fn} }

// Fire asks for fn to run now.
func (t *Trigger) Fire() { t.FireAfter(0) }

// FireAfter asks for fn to run after d, unless a run is already pending.
func (t *Trigger) FireAfter(d time.Duration) {
	if t.pending {
		return
	}
	t.pending = true
	t.e.After(d, func() {
		t.pending = false
		t.fn()
	})
}

// eventQueue is a binary min-heap of events by (time, sequence): a total
// order, so events run in the same order whatever the heap's shape. The
// keys sit in the heap beside the event pointers, so sifting compares
// without visiting the events (a 5,000-node rehearsal keeps ~10⁵ queued).
type eventQueue []queued

type queued struct {
	when int64  // the event's time in Unix nanoseconds
	seq  uint64 // the order it was scheduled in
	ev   *Event
}

func (q eventQueue) less(i, j int) bool {
	a, b := &q[i], &q[j]
	if a.when != b.when {
		return a.when < b.when
	}
	return a.seq < b.seq
}

func (q *eventQueue) push(e queued) {
	*q = append(*q, e)
	h := *q
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

// pop removes the first event.
func (q *eventQueue) pop() {
	h := *q
	n := len(h) - 1
	h[0] = h[n]
	h[n] = queued{}
	h = h[:n]
	*q = h
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
