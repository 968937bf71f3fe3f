package rehearse

import (
	"fmt"
	"strings"
	"time"

	"github.com/ladder-eks/ladder/internal/executor"
)

// blockedSpan is a pod that held up a node's drain or disruption, from
// since until until (zero while it still does): the report's blocked[]
// entry, and its span on the HTML report's timeline.
type blockedSpan struct {
	node, pod, pdb string
	since, until   time.Time
	outcome        string
	message        string
}

// end is when the pod stopped blocking, or now.
func (b blockedSpan) end(now time.Time) time.Time {
	if b.until.IsZero() {
		return now
	}
	return b.until
}

// blocked lists every pod that held up a drain or a disruption: the
// managed node groups' evictions, then Karpenter's, then the drains of the
// Kubernetes port (kubectl drain), then Ladder's own drains (the
// executor's: a blue/green group's blue nodes, --strategy ladder), each in
// the order first seen.
func (r *run) blocked() []blockedSpan {
	out := r.managedBlocked()
	for _, b := range r.karp.BlockedPods() {
		out = append(out, blockedSpan{b.Node, b.Pod, b.PDB, b.Since, b.Until, b.Outcome, b.Message})
	}
	for _, b := range r.kube.DrainBlocks() {
		out = append(out, blockedSpan{b.Node, b.Pod, b.PDB, b.Since, b.Until, b.Outcome, b.Message})
	}
	return append(out, r.ownBlocked...)
}

var _ executor.BlockObserver = (*run)(nil)

// EvictionBlocked implements executor.BlockObserver: a span of a pod on a
// node that is still open is updated, any other is a new one.
func (r *run) EvictionBlocked(b executor.BlockedEviction) {
	span := blockedSpan{b.Node, b.Pod, strings.Join(b.PDBs, ","), b.Since, b.Until, b.Outcome, b.Message}
	for i := len(r.ownBlocked) - 1; i >= 0; i-- {
		if s := &r.ownBlocked[i]; s.node == b.Node && s.pod == b.Pod && s.until.IsZero() {
			*s = span
			return
		}
	}
	r.ownBlocked = append(r.ownBlocked, span)
}

// ownDrainsStuck says which pods Ladder's own drains were still held up
// by: each span still open (at most maxStuckLines), and the pod a drain
// ran out of time on without a span — one it waited to evict because no
// eviction would pass (the PDB's pods not all healthy yet).
func (r *run) ownDrainsStuck(now time.Time) []string {
	var out []string
	open := map[string]bool{}
	n := 0
	for _, b := range r.ownBlocked {
		if !b.until.IsZero() {
			continue
		}
		open[b.node+" "+b.pod] = true
		if n++; n <= maxStuckLines {
			out = append(out, fmt.Sprintf("node %s: eviction of pod %s blocked%s for %s: %s", b.node, b.pod, byPDB(b.pdb), now.Sub(b.since).Round(time.Second), b.message))
		}
	}
	if n > maxStuckLines {
		out = append(out, fmt.Sprintf("… and %d more blocked eviction(s)", n-maxStuckLines))
	}
	d := r.ownDrainStuck
	switch {
	case d == nil || open[d.Node+" "+d.Pod]:
	case d.Planned:
		pdb := "its PodDisruptionBudget"
		if len(d.PDBs) > 0 {
			pdb = "PodDisruptionBudget " + strings.Join(d.PDBs, ",")
		}
		out = append(out, fmt.Sprintf("node %s: the drain waits to evict pod %s, which %s does not allow yet: %s", d.Node, d.Pod, pdb, d.Message))
	default:
		out = append(out, fmt.Sprintf("node %s: eviction of pod %s refused%s: %s", d.Node, d.Pod, byPDB(strings.Join(d.PDBs, ",")), d.Message))
	}
	return out
}

func byPDB(pdb string) string {
	if pdb == "" {
		return ""
	}
	return " by PodDisruptionBudget " + pdb
}
