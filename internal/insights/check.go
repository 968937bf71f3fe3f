package insights

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Needs says what input a check reads. A check runs only when the input
// has everything it needs; otherwise the report lists it as skipped, with
// what would let it run.
type Needs uint

// What a check can need.
const (
	// NeedsObjects: Kubernetes objects (manifests, Helm releases, live
	// objects). Always available, possibly empty.
	NeedsObjects Needs = 1 << iota
	// NeedsCurrent: the control plane's current version (a live cluster or
	// a scenario; --target alone does not give it).
	NeedsCurrent
	// NeedsCluster: cluster facts — nodes, node groups, add-ons — from a
	// live cluster or a scenario.
	NeedsCluster
	// NeedsDrains: the twin's drain prediction (Cluster.DrainsPredicted),
	// which a scenario and a live cluster give (unless the twin could not
	// be built from it).
	NeedsDrains
)

func (n Needs) String() string {
	var parts []string
	if n&NeedsObjects != 0 {
		parts = append(parts, "objects")
	}
	if n&NeedsCurrent != 0 {
		parts = append(parts, "the current version")
	}
	if n&NeedsCluster != 0 {
		parts = append(parts, "cluster facts")
	}
	if n&NeedsDrains != 0 {
		parts = append(parts, "a drain prediction")
	}
	return strings.Join(parts, ", ")
}

// Info describes a check.
type Info struct {
	// ID is stable: scripts, SARIF rules and suppressions key on it.
	ID string
	// Title says in one line what the check looks for.
	Title string
	// Help says why it matters for an upgrade and how the severity is chosen.
	Help  string
	Needs Needs
}

// Check is one insight. Run is a pure function of the input: the same input
// gives the same findings. It reports problems only; the framework adds the
// PASSING finding when a check that ran found nothing, sets Finding.Check,
// and sorts.
type Check interface {
	Info() Info
	Run(in *Input) []Finding
}

var (
	registryMu sync.Mutex
	registry   = map[string]Check{}
)

// Register adds a check to the set Checks returns. Each check file registers
// itself in init; ids must be unique.
func Register(c Check) {
	registryMu.Lock()
	defer registryMu.Unlock()
	id := c.Info().ID
	if id == "" || strings.ToLower(id) != id || strings.ContainsAny(id, " _") {
		panic(fmt.Sprintf("insights: check id %q must be lower-case words joined by '-'", id))
	}
	if _, dup := registry[id]; dup {
		panic(fmt.Sprintf("insights: check %q registered twice", id))
	}
	registry[id] = c
}

// Checks returns every registered check, ordered by id.
func Checks() []Check {
	registryMu.Lock()
	defer registryMu.Unlock()
	ids := make([]string, 0, len(registry))
	for id := range registry {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]Check, len(ids))
	for i, id := range ids {
		out[i] = registry[id]
	}
	return out
}
