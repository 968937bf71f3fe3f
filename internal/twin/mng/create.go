package mng

import (
	"fmt"
	"time"

	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
)

// Adopt registers a node group that already runs when the rehearsal
// begins: its nodes were created age ago, are Ready, and are spread over the
// group's zones in order, as an Auto Scaling group balances them.
func (s *Service) Adopt(spec nodegroup.Spec, age time.Duration) error {
	g, err := s.newGroup(spec, true)
	if err != nil {
		return err
	}
	g.status = StatusActive
	s.groups[g.spec.Name] = g
	created := s.eng.Now().Add(-age)
	for i := 0; i < g.spec.Desired; i++ {
		if err := s.adopt(g, g.spec.Zones[i%len(g.spec.Zones)], created); err != nil {
			return fmt.Errorf("node group %s: %w", g.spec.Name, err)
		}
	}
	return nil
}

// Create is CreateNodegroup during the rehearsal: the group is CREATING
// while the Auto Scaling group launches its desired nodes, spread over its
// zones in order, and turns ACTIVE when every node is Ready. done, if not
// nil, runs then with nil, or with the NodeCreationFailure if a node could
// not launch (the group is then CREATE_FAILED). Refusals come back at once.
func (s *Service) Create(spec nodegroup.Spec, done func(error)) error {
	g, err := s.newGroup(spec, false)
	if err != nil {
		return err
	}
	g.status = StatusCreating
	g.created = done
	s.groups[g.spec.Name] = g
	s.log(Event{Reason: ReasonNodegroupCreating, Nodegroup: g.spec.Name,
		Message: fmt.Sprintf("Creating node group %s: %d × %s, Kubernetes %s, AMI %s", g.spec.Name, g.spec.Desired, g.it.Name, g.version, g.ami.ID)})
	s.eng.After(0, func() {
		for i := 0; i < g.spec.Desired; i++ {
			if _, err := s.launch(g, g.spec.Zones[i%len(g.spec.Zones)], "create"); err != nil {
				s.createFailed(g, err)
				return
			}
		}
		s.checkCreated(g)
	})
	return nil
}

// checkCreated turns a CREATING group ACTIVE once every node is Ready.
func (s *Service) checkCreated(g *group) {
	if g.status != StatusCreating {
		return
	}
	for _, m := range g.members {
		if !m.ready {
			return
		}
	}
	g.status = StatusActive
	s.log(Event{Reason: ReasonNodegroupActive, Nodegroup: g.spec.Name, Message: fmt.Sprintf("Node group %s is ACTIVE with %d nodes", g.spec.Name, len(g.members))})
	if g.created != nil {
		g.created(nil)
	}
}

func (s *Service) createFailed(g *group, cause error) {
	f := Failure{Code: nodegroup.NodeCreationFailure, Message: fmt.Sprintf("Instances failed to launch: %v", cause)}
	g.status = StatusCreateFailed
	g.health = append(g.health, f)
	s.log(Event{Type: "Warning", Reason: ReasonCreateFailed, Nodegroup: g.spec.Name, Message: f.String()})
	if g.created != nil {
		g.created(f)
	}
}
