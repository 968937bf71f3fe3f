package rehearse

import "time"

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
// Kubernetes port (kubectl drain, the executor's), each in the order first
// seen.
func (r *run) blocked() []blockedSpan {
	out := r.managedBlocked()
	for _, b := range r.karp.BlockedPods() {
		out = append(out, blockedSpan{b.Node, b.Pod, b.PDB, b.Since, b.Until, b.Outcome, b.Message})
	}
	for _, b := range r.kube.DrainBlocks() {
		out = append(out, blockedSpan{b.Node, b.Pod, b.PDB, b.Since, b.Until, b.Outcome, b.Message})
	}
	return out
}
