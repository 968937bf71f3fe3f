package liveview

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/rehearse"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/timeline"
)

// A Replay is a rehearsal recorded change by change, to be shown at any
// virtual instant: `ladder view --scenario` plays it at a chosen speed,
// pauses it and seeks in it.
type Replay struct {
	source  string
	changes []change
	nodes   []Node
	pods    []Pod
	pdbs    []PDB
	phases  []phase
	end     float64
	// checkpoints are the State after each checkpointEvery-th change, so
	// a seek back replays at most that many.
	checkpoints []checkpoint
}

// checkpointEvery is how many changes separate two checkpoints (a
// variable for the tests, which make it small).
var checkpointEvery = 1 << 15

type checkpoint struct {
	next int // changes applied
	st   *State
}

// change is one object's new value at t: changes[i].i indexes the nodes,
// pods or PDBs slice of its kind.
type change struct {
	t    float64
	kind kind
	gone bool
	i    int32
	key  string
}

type kind uint8

const (
	kindNode kind = iota
	kindPod
	kindPDB
)

type phase struct {
	hop, name  string
	start, end float64
}

// Record rehearses the scenario and records it for replay.
func Record(sc *scenario.Scenario, opts rehearse.Options) (*Replay, *report.Report, error) {
	r := &Replay{source: sc.Path}
	rep, _, err := rehearse.RunWatch(sc, opts, (*recorder)(r))
	if err != nil {
		return nil, nil, err
	}
	r.end = rep.MakespanSeconds
	r.addPDBs(rep.PDBs)
	for _, p := range rep.Phases {
		name := p.Kind
		if p.Name != "" {
			name += "/" + p.Name
		}
		r.phases = append(r.phases, phase{hop: rep.Hops[p.Hop].To, name: name, start: p.Start, end: p.End})
	}
	st := NewState(r.source)
	for i := range r.changes {
		if i > 0 && i%checkpointEvery == 0 {
			r.checkpoints = append(r.checkpoints, checkpoint{next: i, st: st.Clone()})
		}
		r.apply(st, i)
	}
	return r, rep, nil
}

// End is the rehearsal's makespan in virtual seconds.
func (r *Replay) End() float64 { return r.end }

// Changes is how many object changes the replay holds.
func (r *Replay) Changes() int { return len(r.changes) }

// recorder is a Replay taking a rehearsal's samples (rehearse.Watcher).
type recorder Replay

func (rec *recorder) Node(t float64, s timeline.NodeSample) {
	if s.Gone {
		rec.changes = append(rec.changes, change{t: t, kind: kindNode, gone: true, key: s.Name})
		return
	}
	rec.changes = append(rec.changes, change{t: t, kind: kindNode, i: int32(len(rec.nodes)), key: s.Name})
	rec.nodes = append(rec.nodes, Node{Name: s.Name, Group: s.Group, Kind: s.GroupType, InstanceType: s.InstanceType,
		Version: s.Version, Ready: s.Ready, Cordoned: s.Cordoned, Draining: s.Draining})
}

func (rec *recorder) Pod(t float64, p *corev1.Pod, gone bool) {
	v := PodOf(p)
	if gone {
		rec.changes = append(rec.changes, change{t: t, kind: kindPod, gone: true, key: v.Key})
		return
	}
	rec.changes = append(rec.changes, change{t: t, kind: kindPod, i: int32(len(rec.pods)), key: v.Key})
	rec.pods = append(rec.pods, v)
}

// Workload is a workload's sample: the replay shows its pods, and its PDBs
// from the report (addPDBs).
func (rec *recorder) Workload(float64, timeline.WorkloadSample) {}

// addPDBs adds each PDB's status, change by change, as the report's
// pdbs[].series has it — the disruption controller's status the rehearsal
// judged by, over every workload a PDB selects — into the changes, in time
// order (a PDB's change after the pods' at the same instant).
func (r *Replay) addPDBs(pdbs []report.PDB) {
	if len(pdbs) == 0 {
		return
	}
	for _, p := range pdbs {
		key := p.Namespace + "/" + p.Name
		s := p.Series
		for i := range s.T {
			r.changes = append(r.changes, change{t: s.T[i], kind: kindPDB, i: int32(len(r.pdbs)), key: key})
			r.pdbs = append(r.pdbs, PDB{Key: key, Healthy: s.Healthy[i], Floor: s.Desired[i], Allowed: s.Allowed[i], Expected: s.Expected[i]})
		}
	}
	sort.SliceStable(r.changes, func(i, j int) bool { return r.changes[i].t < r.changes[j].t })
}

// apply applies change i to st.
func (r *Replay) apply(st *State, i int) {
	c := r.changes[i]
	switch c.kind {
	case kindNode:
		if c.gone {
			delete(st.Nodes, c.key)
		} else {
			st.Nodes[c.key] = r.nodes[c.i]
		}
	case kindPod:
		if c.gone {
			delete(st.Pods, c.key)
		} else {
			st.Pods[c.key] = r.pods[c.i]
		}
	case kindPDB:
		st.PDBs[c.key] = r.pdbs[c.i]
	}
}

// steps are the rehearsal's phases as of t: done, started or pending.
func (r *Replay) steps(t float64) []Step {
	out := make([]Step, 0, len(r.phases))
	for _, p := range r.phases {
		state := "pending"
		switch {
		case p.end <= t && p.start < t:
			state = "done"
		case p.start <= t:
			state = "started"
		}
		out = append(out, Step{Hop: p.hop, Name: p.name, State: state})
	}
	return out
}

// at is the index of the first change after t.
func (r *Replay) at(t float64) int {
	return sort.Search(len(r.changes), func(i int) bool { return r.changes[i].t > t })
}

// StateAt is the cluster as the rehearsal had it at t (clamped to the
// replay), with the clock stopped there.
func (r *Replay) StateAt(t float64) *State {
	p := &Player{r: r, hub: NewHub(r.source), speed: 1, paused: true}
	p.Seek(t)
	var st *State
	p.hub.Update(func(s *State) { st = s.Clone() })
	return st
}

// Player plays a Replay into a Hub: the page's clock.
type Player struct {
	mu     sync.Mutex
	r      *Replay
	hub    *Hub
	t      float64
	next   int // changes applied to the hub's State
	speed  float64
	paused bool
}

// DefaultSpeed is how many virtual seconds a replay plays per wall
// second unless told otherwise: a one-hour rehearsal in a minute.
const DefaultSpeed = 60

// NewPlayer returns a player at the replay's start, paused when asked,
// showing it in hub.
func NewPlayer(r *Replay, hub *Hub, speed float64, paused bool) *Player {
	if speed <= 0 {
		speed = DefaultSpeed
	}
	p := &Player{r: r, hub: hub, speed: speed, paused: paused}
	hub.Update(func(s *State) {
		*s = *NewState(r.source)
	})
	p.Seek(0)
	return p
}

// Seek shows the instant t (clamped to [0, end]): forward by applying the
// changes up to t, back from the last checkpoint before it.
func (p *Player) Seek(t float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seek(t)
}

func (p *Player) seek(t float64) {
	t = min(max(t, 0), p.r.end)
	to := p.r.at(t)
	p.hub.Update(func(s *State) {
		if to < p.next {
			base := NewState(p.r.source)
			start := 0
			for _, c := range p.r.checkpoints {
				if c.next <= to {
					base, start = c.st.Clone(), c.next
				}
			}
			s.Nodes, s.Pods, s.PDBs = base.Nodes, base.Pods, base.PDBs
			p.next = start
		}
		for i := p.next; i < to; i++ {
			p.r.apply(s, i)
		}
		p.next = to
		p.t = t
		if t >= p.r.end {
			p.paused = true
		}
		s.Steps = p.r.steps(t)
		s.Clock = &Clock{T: t, End: p.r.end, Speed: p.speed, Paused: p.paused}
	})
}

// Advance moves the clock by wall time at the player's speed, unless
// paused.
func (p *Player) Advance(wall time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.paused {
		p.seek(p.t + wall.Seconds()*p.speed)
	}
}

// Control is a page's command: "play", "pause", "seek" (to T) or "speed"
// (to Speed).
type Control struct {
	Action string  `json:"action"`
	T      float64 `json:"t"`
	Speed  float64 `json:"speed"`
}

// Do carries out a page's command.
func (p *Player) Do(c Control) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch c.Action {
	case "play":
		p.paused = false
		if p.t >= p.r.end {
			p.seek(0)
			p.paused = false
		}
	case "pause":
		p.paused = true
	case "seek":
	case "speed":
		if c.Speed <= 0 || c.Speed > 1e6 {
			return fmt.Errorf("speed %v: give virtual seconds per second, above 0 and at most 1000000", c.Speed)
		}
		p.speed = c.Speed
	default:
		return fmt.Errorf("action %q: use play, pause, seek or speed", c.Action)
	}
	t := p.t
	if c.Action == "seek" {
		t = c.T
	}
	p.seek(t)
	return nil
}

// Run advances the clock every interval until ctx ends.
func (p *Player) Run(ctx context.Context, every time.Duration) {
	last := time.Now()
	tick(ctx, every, func(now time.Time) {
		p.Advance(now.Sub(last))
		last = now
	})
}
