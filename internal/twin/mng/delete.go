package mng

import (
	"fmt"

	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
)

// Delete is DeleteNodegroup, as delete-managed-node-group.html describes
// it: "Amazon EKS first sets the minimum, maximum, and desired size of your
// Auto Scaling group to zero. ... Before each instance is terminated, Amazon
// EKS sends a signal to drain that node. ... If the node hasn't been
// drained after 5 minutes, Amazon EKS lets Auto Scaling continue the forced
// termination of the instance. After all instances have been terminated,
// the Auto Scaling group is deleted."
//
// The scale-in to zero terminates every instance at once, so every node
// drains at the same time; the drain evicts through the Eviction API (PDBs
// are honoured, refusals retried every 5 s) for up to DeleteDrainLimit.
// This is the last step of a blue/green migration (workshop seed §6.2:
// delete blue-mng once its pods run on green-mng). Deleting a group whose
// update is in progress is refused: the twin does not model cancelling an
// update. done, if not nil, runs when the last instance is gone; the group
// then reports DELETED.
func (s *Service) Delete(name string, done func()) error {
	g := s.groups[name]
	if g == nil || g.status == StatusDeleted {
		return nodegroup.NewError(nodegroup.ResourceNotFoundException, nodegroup.OpDeleteNodegroup, "No node group found for name: %s.", name)
	}
	if g.status == StatusDeleting {
		return nodegroup.NewError(nodegroup.ResourceInUseException, nodegroup.OpDeleteNodegroup, "Nodegroup %s is already being deleted.", name)
	}
	if g.update != nil {
		return nodegroup.NewError(nodegroup.ResourceInUseException, nodegroup.OpDeleteNodegroup, "Nodegroup %s is being updated (update %s); delete it once the update has finished.", name, g.update.rec.ID)
	}
	g.status = StatusDeleting
	g.created = nil
	g.deleted = done
	s.log(Event{Reason: ReasonNodegroupDeleting, Nodegroup: name, Message: fmt.Sprintf(
		"Deleting node group %s: Auto Scaling group min, max and desired size %d/%d/%d → 0/0/0; %d nodes to drain and terminate",
		name, g.spec.Min, g.max, g.desired, g.live())})
	g.desired, g.max = 0, 0
	s.eng.After(0, func() {
		for _, m := range g.sortedMembers() {
			if !m.leaving {
				s.retire(g, m)
			}
		}
		s.checkDeleted(g)
	})
	return nil
}

// retire drains one instance of a group being deleted and terminates it.
func (s *Service) retire(g *group, m *member) {
	terminate := func(drainResult) { s.terminate(g, m, false, "DeleteNodegroup "+g.spec.Name, nil) }
	if !m.registered || s.kube.Node(m.name) == nil {
		terminate(drainResult{})
		return
	}
	s.drain(g, m.name, nodegroup.DeleteDrainLimit, proceed, func(b *Blocked) { s.deletionBlocked = append(s.deletionBlocked, b) }, terminate)
}

// DeletionBlocked lists the pods whose eviction a DeleteNodegroup drain saw
// refused, in the order it happened, with how each ended.
func (s *Service) DeletionBlocked() []Blocked {
	out := make([]Blocked, len(s.deletionBlocked))
	for i, b := range s.deletionBlocked {
		out[i] = *b
	}
	return out
}

// checkDeleted finishes a deletion once no instance is left.
func (s *Service) checkDeleted(g *group) {
	if g.status != StatusDeleting || len(g.members) > 0 {
		return
	}
	g.status = StatusDeleted
	s.log(Event{Reason: ReasonNodegroupDeleted, Nodegroup: g.spec.Name, Message: "Node group " + g.spec.Name + " and its Auto Scaling group deleted"})
	if g.deleted != nil {
		g.deleted()
	}
}
