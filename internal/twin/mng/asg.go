package mng

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	"github.com/ladder-eks/ladder/internal/twin/worker"
)

// The node group's Auto Scaling group: it launches instances of the
// group's current launch template version and terminates them, always
// through the worker pool (EC2 instance → Node lifecycle).

// member is one instance of the Auto Scaling group and its node.
type member struct {
	name       string // the instance's hostname, which is its node's name
	instanceID string
	zone       string
	lt         int // the launch template version it was launched from
	ami        catalog.AMI
	launched   time.Time
	registered bool // its Node exists
	ready      bool // its Node turned Ready
	leaving    bool // a termination was requested
}

// launch starts an instance of the group's current launch template version
// in zone; why says what for ("create", "scale-up", "replacement").
func (s *Service) launch(g *group, zone, why string) (*member, error) {
	m := &member{zone: zone, lt: g.lt.number, ami: g.lt.ami, launched: s.eng.Now()}
	spec := worker.Spec{Zone: zone, InstanceType: g.it, AMI: g.lt.ami, Labels: s.nodeLabels(g), Taints: g.spec.Taints}
	inst, err := s.workers.Launch(spec,
		func(string) { m.registered = true },
		func(node string) {
			if m.leaving || g.members[m.name] != m {
				return
			}
			m.ready = true
			s.log(Event{Reason: ReasonNodeReady, Nodegroup: g.spec.Name, Node: node, Message: fmt.Sprintf("node/%s is Ready (kubelet %s)", node, m.ami.KubeletVersion)})
			s.memberReady(g)
		})
	if err != nil {
		s.log(Event{Type: "Warning", Reason: ReasonLaunchFailed, Nodegroup: g.spec.Name,
			Message: fmt.Sprintf("Launching a new EC2 instance in %s failed (%s): %v", zone, why, err)})
		return nil, err
	}
	m.name, m.instanceID = inst.Hostname, inst.ID
	g.members[m.name] = m
	g.sorted = nil
	s.byNode[m.name] = g
	if u := g.update; u != nil {
		u.rec.Launched = append(u.rec.Launched, m.name)
	}
	s.log(Event{Reason: ReasonNodeLaunched, Nodegroup: g.spec.Name, Node: m.name,
		Message: fmt.Sprintf("Launching a new EC2 instance: %s (%s, %s, %s, %s)", inst.ID, zone, g.it.Name, m.ami.ID, why)})
	return m, nil
}

// adopt registers an instance that was running before the rehearsal began.
func (s *Service) adopt(g *group, zone string, created time.Time) error {
	spec := worker.Spec{Zone: zone, InstanceType: g.it, AMI: g.lt.ami, Labels: s.nodeLabels(g), Taints: g.spec.Taints}
	node, err := s.workers.Existing(spec, created)
	if err != nil {
		return err
	}
	inst, _ := s.workers.Instance(node.Name)
	m := &member{name: node.Name, instanceID: inst.ID, zone: zone, lt: g.lt.number, ami: g.lt.ami, launched: created, registered: true, ready: true}
	g.members[m.name] = m
	g.sorted = nil
	s.byNode[m.name] = g
	return nil
}

// terminate is TerminateInstanceInAutoScalingGroup. With replace, the
// desired capacity stays and the Auto Scaling group launches a replacement
// in the same zone (keeping the zones balanced) once the instance is gone:
// the MINIMAL strategy's "It sends a termination request to the Auto
// Scaling Group for the cordoned node. The Auto Scaling Group creates a new
// node to replace the missing capacity" (semantics.md §B), which also keeps
// a DEFAULT update's Auto Scaling group at its raised size until the scale-
// down phase. Launching only after the old instance has terminated is the
// twin's choice; it is what makes MINIMAL "terminate the old instances
// before launching the new instances" (UpdateNodegroupVersion API).
// done, if not nil, runs when the instance is gone.
func (s *Service) terminate(g *group, m *member, replace bool, why string, done func()) {
	if m.leaving {
		return
	}
	m.leaving = true
	s.log(Event{Reason: ReasonNodeTerminating, Nodegroup: g.spec.Name, Node: m.name,
		Message: fmt.Sprintf("Terminating EC2 instance: %s (%s)", m.instanceID, why)})
	gone := func() {
		delete(g.members, m.name)
		g.sorted = nil
		delete(s.byNode, m.name)
		s.log(Event{Reason: ReasonNodeTerminated, Nodegroup: g.spec.Name, Node: m.name,
			Message: fmt.Sprintf("Instance %s terminated; node/%s deleted", m.instanceID, m.name)})
		if replace && g.status != StatusDeleting && g.status != StatusDeleted {
			_, _ = s.launch(g, m.zone, "replacement") // a failed launch is logged; the ASG would retry later
		}
		if done != nil {
			done()
		}
		s.memberGone(g)
	}
	if err := s.workers.Terminate(m.name, why, gone); err != nil {
		// Not in the pool: nothing runs there any more.
		s.eng.After(0, gone)
	}
}

// memberReady and memberGone tell whatever waits on the group's instances.
func (s *Service) memberReady(g *group) {
	switch {
	case g.status == StatusCreating:
		s.checkCreated(g)
	case g.update != nil:
		g.update.memberReady()
	}
}

func (s *Service) memberGone(g *group) {
	switch {
	case g.status == StatusDeleting:
		s.checkDeleted(g)
	case g.update != nil:
		g.update.memberGone()
	}
}

// nodeLabels are the labels of a node launched now: the group's labels and
// EKS's (semantics.md §B scale-up success criteria, "Other MNG rules"). The
// nodegroup-image label carries the AMI id, as on real managed nodes and as
// internal/rehearse/static.go labels them (the user guide writes
// "$amiName").
func (s *Service) nodeLabels(g *group) map[string]string {
	l := map[string]string{}
	for k, v := range g.spec.Labels {
		l[k] = v
	}
	l[LabelNodegroup] = g.spec.Name
	l[LabelNodegroupImage] = g.lt.ami.ID
	l[LabelCapacityType] = g.spec.CapacityType
	if lt := g.spec.LaunchTemplate; lt != nil {
		l[LabelSourceLaunchTemplateID] = launchTemplateID(lt)
		l[LabelSourceLaunchTemplateVersion] = g.lt.source
	}
	return l
}

// launchTemplateID is the template's id; a template given by name gets a
// stable id derived from it.
func launchTemplateID(lt *nodegroup.LaunchTemplate) string {
	if lt.ID != "" {
		return lt.ID
	}
	h := fnv.New64a()
	h.Write([]byte(lt.Name))
	return fmt.Sprintf("lt-%017x", h.Sum64()&0xfffffffffffffff)
}

// sortedMembers lists the group's instances by name.
// The list is kept until a member comes or goes; callers must not change it.
func (g *group) sortedMembers() []*member {
	if g.sorted == nil {
		g.sorted = slices.SortedFunc(maps.Values(g.members), func(a, b *member) int { return strings.Compare(a.name, b.name) })
	}
	return g.sorted
}
