// Package liveview is `ladder view`: a page in the spirit of kube-ops-view,
// for upgrades. It shows a cluster's nodes grouped by node group, each
// labelled and coloured by kubelet version, with cordoned, draining and
// NotReady nodes marked by text and pattern; pods as small boxes by
// readiness; the PodDisruptionBudgets at their floor; the step a running
// `ladder upgrade` is at. A live cluster feeds it from watches (kube.go), a
// scenario from its rehearsal replayed in virtual time (replay.go).
//
// The server keeps one State and sends it to each browser once (the
// snapshot), then only what changed (deltas), over server-sent events
// (server.go). It changes nothing in the cluster: its rights are list and
// watch (deploy/ladder-view-rbac.yaml).
package liveview

import (
	"maps"
	"slices"
)

// Node is what the page shows of a node.
type Node struct {
	Name string `json:"name"`
	// Group is its node group, NodePool, Auto Scaling group or Fargate
	// profile; Kind is report.Group*'s spelling of its type ("managed",
	// "self-managed", "karpenter", "fargate"), "" for a node of none.
	Group        string `json:"group"`
	Kind         string `json:"kind,omitempty"`
	InstanceType string `json:"instanceType,omitempty"`
	// Version is the kubelet's (status.nodeInfo.kubeletVersion).
	Version  string `json:"version"`
	Ready    bool   `json:"ready"`
	Cordoned bool   `json:"cordoned,omitempty"`
	// Draining: its drain began. A live cluster does not say so; the page
	// also counts a cordoned node with a terminating pod as draining.
	Draining bool `json:"draining,omitempty"`
}

// Pod is what the page shows of a pod: a box on its node (or among the
// pending ones).
type Pod struct {
	// Key is namespace/name.
	Key         string `json:"key"`
	Node        string `json:"node,omitempty"`
	Ready       bool   `json:"ready,omitempty"`
	Terminating bool   `json:"terminating,omitempty"`
	// DaemonSet marks a DaemonSet's pod, which a drain leaves.
	DaemonSet bool `json:"daemonSet,omitempty"`
}

// PDB is a PodDisruptionBudget's status: AtFloor when it allows no
// disruption while it expects pods (semantics.md §D.2).
type PDB struct {
	// Key is namespace/name.
	Key string `json:"key"`
	// Healthy is status.currentHealthy, Floor status.desiredHealthy,
	// Allowed status.disruptionsAllowed.
	Healthy int32 `json:"healthy"`
	Floor   int32 `json:"floor"`
	Allowed int32 `json:"allowed"`
	// Expected is status.expectedPods.
	Expected int32 `json:"expected"`
}

// AtFloor reports whether the budget allows no disruption now.
func (p PDB) AtFloor() bool { return p.Expected > 0 && p.Allowed <= 0 }

// Step is where an upgrade is: a running upgrade's journal, or the
// rehearsal's phase at the replay's instant.
type Step struct {
	// Hop is the minor the step upgrades to, Name the step ("control-plane",
	// "addons", "nodegroup/NAME", ...), State pending, started, done or
	// failed.
	Hop     string `json:"hop,omitempty"`
	Name    string `json:"name"`
	State   string `json:"state"`
	Message string `json:"message,omitempty"`
	// BlockedBy names the pod and PDB a drain waits on.
	BlockedBy string `json:"blockedBy,omitempty"`
}

// Clock is a replay's virtual clock; absent for a live cluster.
type Clock struct {
	// T is the instant shown and End the rehearsal's makespan, in virtual
	// seconds; Speed is virtual seconds per wall second.
	T      float64 `json:"t"`
	End    float64 `json:"end"`
	Speed  float64 `json:"speed"`
	Paused bool    `json:"paused"`
}

// State is everything the page shows.
type State struct {
	// Source says what the page watches: a kubeconfig context or a
	// scenario file.
	Source string          `json:"source"`
	Nodes  map[string]Node `json:"nodes"`
	Pods   map[string]Pod  `json:"pods"`
	PDBs   map[string]PDB  `json:"pdbs"`
	Steps  []Step          `json:"steps"`
	Clock  *Clock          `json:"clock,omitempty"`
	// Error is the last error of a watch or of reading the journal, for
	// the page to show; "" when all is well.
	Error string `json:"error,omitempty"`
}

// NewState returns an empty State.
func NewState(source string) *State {
	return &State{Source: source, Nodes: map[string]Node{}, Pods: map[string]Pod{}, PDBs: map[string]PDB{}}
}

// Clone returns a copy that shares nothing with s.
func (s *State) Clone() *State {
	c := *s
	c.Nodes, c.Pods, c.PDBs = maps.Clone(s.Nodes), maps.Clone(s.Pods), maps.Clone(s.PDBs)
	c.Steps = slices.Clone(s.Steps)
	if s.Clock != nil {
		clock := *s.Clock
		c.Clock = &clock
	}
	return &c
}

// Delta is what changed since the previous event: objects added or
// changed, the keys of those gone, and the steps, clock and error when
// they changed. Seq numbers the events of one server from the snapshot
// on, so a page can tell it missed one.
type Delta struct {
	Seq         uint64          `json:"seq"`
	Nodes       map[string]Node `json:"nodes,omitempty"`
	Pods        map[string]Pod  `json:"pods,omitempty"`
	PDBs        map[string]PDB  `json:"pdbs,omitempty"`
	GoneNodes   []string        `json:"goneNodes,omitempty"`
	GonePods    []string        `json:"gonePods,omitempty"`
	GonePDBs    []string        `json:"gonePDBs,omitempty"`
	Steps       []Step          `json:"steps,omitempty"`
	StepsChange bool            `json:"stepsChanged,omitempty"`
	Clock       *Clock          `json:"clock,omitempty"`
	Error       *string         `json:"error,omitempty"`
}

// Empty reports whether the delta changes nothing.
func (d *Delta) Empty() bool {
	return len(d.Nodes) == 0 && len(d.Pods) == 0 && len(d.PDBs) == 0 &&
		len(d.GoneNodes) == 0 && len(d.GonePods) == 0 && len(d.GonePDBs) == 0 &&
		!d.StepsChange && d.Clock == nil && d.Error == nil
}

// Apply changes s as d says: what a page does with each delta.
func (s *State) Apply(d *Delta) {
	maps.Copy(s.Nodes, d.Nodes)
	maps.Copy(s.Pods, d.Pods)
	maps.Copy(s.PDBs, d.PDBs)
	for _, k := range d.GoneNodes {
		delete(s.Nodes, k)
	}
	for _, k := range d.GonePods {
		delete(s.Pods, k)
	}
	for _, k := range d.GonePDBs {
		delete(s.PDBs, k)
	}
	if d.StepsChange {
		s.Steps = slices.Clone(d.Steps)
	}
	if d.Clock != nil {
		clock := *d.Clock
		s.Clock = &clock
	}
	if d.Error != nil {
		s.Error = *d.Error
	}
}

// Diff is the delta that takes from to to; its Seq is zero.
func Diff(from, to *State) *Delta {
	d := &Delta{}
	d.Nodes, d.GoneNodes = diffMap(from.Nodes, to.Nodes)
	d.Pods, d.GonePods = diffMap(from.Pods, to.Pods)
	d.PDBs, d.GonePDBs = diffMap(from.PDBs, to.PDBs)
	if !slices.Equal(from.Steps, to.Steps) {
		d.Steps, d.StepsChange = slices.Clone(to.Steps), true
	}
	if to.Clock != nil && (from.Clock == nil || *from.Clock != *to.Clock) {
		clock := *to.Clock
		d.Clock = &clock
	}
	if from.Error != to.Error {
		e := to.Error
		d.Error = &e
	}
	return d
}

// diffMap is what changed between two maps: the entries of to that from
// lacks or holds otherwise, and the sorted keys of from that to lacks.
func diffMap[V comparable](from, to map[string]V) (changed map[string]V, gone []string) {
	for k, v := range to {
		if old, ok := from[k]; !ok || old != v {
			if changed == nil {
				changed = map[string]V{}
			}
			changed[k] = v
		}
	}
	for k := range from {
		if _, ok := to[k]; !ok {
			gone = append(gone, k)
		}
	}
	slices.Sort(gone)
	return changed, gone
}
