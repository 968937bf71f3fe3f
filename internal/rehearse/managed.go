package rehearse

import (
	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twin/mng"
)

// Managed node groups are the EKS managed node group twin
// (internal/twin/mng). The executor upgrades one in place
// (UpdateNodegroupVersion; a custom-AMI group through a new launch template
// version with the hop's AMI, workshop §6.1) or blue/green (a new group at
// the new version, then the old one deleted, which drains it; §6.2); the
// rehearsal reports what the twin did.

// blueGreenEnded records a blue/green hop for the report: the green group
// is the scenario group's from the moment EKS accepted it, whatever
// became of it since, and the names swap back on the next hop.
func (r *run) blueGreenEnded(g scenario.NodeGroup) {
	greenName := g.Upgrade.Green.Name
	if r.liveGroup[g.Name] == greenName {
		greenName = g.Name
	}
	if st, ok := r.mng.Status(greenName); ok && st.Status != mng.StatusDeleted {
		r.greens = append(r.greens, greenName)
		r.liveGroup[g.Name] = greenName
	}
}

// managedBusy reports whether a managed node group is changing.
func (r *run) managedBusy() bool { return r.mng.Busy() }

// managedReport fills a group's counters from its updates.
func (r *run) managedReport(grp *report.Group) {
	st, ok := r.mng.Status(grp.Name)
	if !ok {
		return
	}
	for _, u := range st.Updates {
		grp.Replaced += len(u.Replaced)
		grp.Launched += len(u.Launched)
		grp.MaxConcurrentDisruptions = max(grp.MaxConcurrentDisruptions, u.MaxConcurrentDisruptions)
		grp.SurgeNodes = max(grp.SurgeNodes, u.Surge)
	}
	if st.Status == mng.StatusDeleted {
		grp.Replaced = max(grp.Replaced, r.deletedNodes[grp.Name])
	}
}

// managedBlocked lists the pods whose eviction a managed node group's
// update or deletion (DeleteNodegroup drains every node for up to 5
// minutes, then terminates it: aws-apis.md §2.8) saw refused.
func (r *run) managedBlocked() []blockedSpan {
	var out []blockedSpan
	add := func(bs []mng.Blocked) {
		for _, b := range bs {
			out = append(out, blockedSpan{b.Node, b.Pod, b.PDB, b.Since, b.Until, b.Outcome, b.Message})
		}
	}
	for _, st := range r.mng.Statuses() {
		for _, u := range st.Updates {
			add(u.Blocked)
		}
	}
	add(r.mng.DeletionBlocked())
	return out
}

// mngEvent turns a managed node group event into a timeline event.
func (r *run) mngEvent(e mng.Event) {
	r.log(report.Event{
		T: seconds(r.eng.Elapsed()), Type: e.Type, Message: e.Message, Node: e.Node, Group: e.Nodegroup,
		Source: "eks", Code: e.Reason,
	})
	if e.Reason == mng.ReasonNodegroupDeleting {
		if st, ok := r.mng.Status(e.Nodegroup); ok {
			r.deletedNodes[e.Nodegroup] = len(st.Nodes)
		}
	}
}

// lookupAMI finds an image in the scenario's AMIs or the embedded catalog.
func (r *run) lookupAMI(id string) (catalog.AMI, bool) {
	for _, a := range r.sc.ExtraAMIs() {
		if a.ID == id {
			return a, true
		}
	}
	return catalog.LookupAMI(id)
}
