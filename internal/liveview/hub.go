package liveview

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// FlushEvery is how often a Hub sends what changed: often enough to see a
// node cordoned as it happens, seldom enough that a drain of many pods
// arrives as a few deltas, not thousands.
const FlushEvery = 250 * time.Millisecond

// subscriberBuffer is how many events a slow browser may fall behind
// before the hub drops it; its EventSource reconnects and starts again
// from a snapshot, so nothing is lost but the backlog.
const subscriberBuffer = 64

// Hub holds the State, takes changes from the watches or the replay, and
// sends each subscriber a snapshot, then the deltas.
type Hub struct {
	mu sync.Mutex
	// cur is the State as the sources made it; sent is what every
	// subscriber has been sent (snapshot plus deltas): Flush sends the
	// difference.
	cur, sent *State
	seq       uint64
	subs      map[chan []byte]struct{}
	// snap is the snapshot at seq, encoded once for every subscriber and
	// GET /api/state that asks at that seq; nil until one asks.
	snap *snapshot
}

// snapshot is the State at seq, encoded outside the hub's lock: the first
// to ask encodes a copy taken under the lock, the others wait for it and
// share its bytes, so a thousand browsers opening the page cost one
// encoding and one copy of the JSON, and no Update or Flush waits for one.
type snapshot struct {
	seq   uint64
	state *State // the copy to encode; nil once encoded
	once  sync.Once
	data  []byte // {"seq": N, "state": {...}}
}

// beforeEncode runs before a snapshot is encoded; tests hold it to show
// the hub is not locked meanwhile, and count encodings.
var beforeEncode = func() {}

func (s *snapshot) json() []byte {
	s.once.Do(func() {
		beforeEncode()
		data, err := json.Marshal(struct {
			Seq   uint64 `json:"seq"`
			State *State `json:"state"`
		}{s.seq, s.state})
		if err != nil {
			// The State holds strings, numbers and booleans only.
			panic(fmt.Sprintf("liveview: encoding the snapshot: %v", err))
		}
		s.data, s.state = data, nil
	})
	return s.data
}

// current is the snapshot at seq, the one cached if it is for seq; the
// caller holds mu.
func (h *Hub) current() *snapshot {
	if h.snap == nil || h.snap.seq != h.seq {
		h.snap = &snapshot{seq: h.seq, state: h.sent.Clone()}
	}
	return h.snap
}

// NewHub returns a Hub with an empty State.
func NewHub(source string) *Hub {
	return &Hub{cur: NewState(source), sent: NewState(source), subs: map[chan []byte]struct{}{}}
}

// Update changes the State; the change is sent at the next Flush.
func (h *Hub) Update(fn func(s *State)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fn(h.cur)
}

// Flush sends every subscriber what changed since the last Flush, as one
// delta event, and returns it (nil when nothing changed).
func (h *Hub) Flush() *Delta {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := Diff(h.sent, h.cur)
	if d.Empty() {
		return nil
	}
	h.seq++
	d.Seq = h.seq
	h.sent.Apply(d)
	h.snap = nil // the next subscriber needs the new one
	ev := event("delta", h.seq, d)
	for ch := range h.subs {
		select {
		case ch <- ev:
		default:
			// Too far behind: drop it; it reconnects to a snapshot.
			delete(h.subs, ch)
			close(ch)
		}
	}
	return d
}

// Snapshot is the State every subscriber has now, and its sequence number.
func (h *Hub) Snapshot() (*State, uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sent.Clone(), h.seq
}

// SnapshotJSON is {"seq": N, "state": {...}}: the State every subscriber
// has now, encoded outside the lock, shared by every caller at the same
// seq (do not change it).
func (h *Hub) SnapshotJSON() []byte {
	h.mu.Lock()
	snap := h.current()
	h.mu.Unlock()
	return snap.json()
}

// Subscribe returns the snapshot the subscriber starts from (its sequence
// number and SnapshotJSON's bytes, shared: do not change them), the
// channel of the delta events that follow it, and the function that ends
// the subscription. The channel is closed when the hub drops a subscriber
// that fell behind.
func (h *Hub) Subscribe() (seq uint64, snapshot []byte, events <-chan []byte, cancel func()) {
	h.mu.Lock()
	ch := make(chan []byte, subscriberBuffer)
	h.subs[ch] = struct{}{}
	snap := h.current()
	h.mu.Unlock()
	return snap.seq, snap.json(), ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.subs[ch]; ok {
			delete(h.subs, ch)
			close(ch)
		}
	}
}

// Subscribers is how many subscribers the hub sends to now.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Run flushes every interval until ctx ends.
func (h *Hub) Run(ctx context.Context, every time.Duration) {
	tick(ctx, every, func(time.Time) { h.Flush() })
}

// tick calls fn every interval, with the tick's time, until ctx ends.
func tick(ctx context.Context, every time.Duration, fn func(time.Time)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			fn(now)
		}
	}
}

// event is one server-sent event: its type, its id and its JSON data on
// one line (JSON never holds a raw newline).
func event(typ string, seq uint64, v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		// The State holds strings, numbers and booleans only.
		panic(fmt.Sprintf("liveview: encoding %s: %v", typ, err))
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "event: %s\nid: %d\ndata: ", typ, seq)
	b.Write(data)
	b.WriteString("\n\n")
	return b.Bytes()
}
