package mng

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
)

// Status is what a rehearsal reports about a node group: DescribeNodegroup
// plus its updates (DescribeUpdate) and what the twin measured.
type Status struct {
	Name   string
	Status string // CREATING, ACTIVE, UPDATING, DEGRADED, DELETING, CREATE_FAILED, DELETED
	// Version, ReleaseVersion and AMI are what the group reports: they
	// change when an update succeeds. ReleaseVersion is empty for a
	// custom-AMI group.
	Version        kubeversion.Minor
	ReleaseVersion string
	AMI            string
	KubeletVersion string
	InstanceType   string
	CapacityType   string
	UpdateStrategy string
	// InstanceTypes, AMIType, Zones (the AZs of its subnets), Labels,
	// Taints and UpdateConfig are the group's configuration as
	// CreateNodegroup set it, for DescribeNodegroup.
	InstanceTypes []string
	AMIType       string
	Zones         []string
	Labels        map[string]string
	Taints        []corev1.Taint
	UpdateConfig  nodegroup.UpdateConfig
	// LaunchTemplate is the user's launch template and its current version.
	LaunchTemplate *nodegroup.LaunchTemplate
	// Desired and Max are the Auto Scaling group's sizes now (raised
	// during a DEFAULT update); Min is the scaling config's.
	Desired, Min, Max int
	// Nodes are the group's instances' node names, sorted.
	Nodes []string
	// Updates are the group's updates, oldest first; the last one may be
	// in progress.
	Updates []Update
	// Health lists the issues of a DEGRADED or CREATE_FAILED group.
	Health []Failure
}

// Update is one UpdateNodegroupVersion, as DescribeUpdate reports it, plus
// what the twin measured.
type Update struct {
	ID        string
	Nodegroup string
	Status    string // InProgress, Successful, Failed
	// Phase is the phase in progress, or the one the update ended in.
	Phase  string
	Phases []PhaseTime
	// CreatedAt is the API call; FinishedAt is zero while in progress.
	CreatedAt, FinishedAt time.Time
	Force                 bool
	Strategy              string

	FromVersion, ToVersion                             kubeversion.Minor
	FromReleaseVersion, ToReleaseVersion               string
	FromAMI, ToAMI                                     string
	FromLaunchTemplateVersion, ToLaunchTemplateVersion string

	// MaxUnavailable is the number of nodes upgraded in parallel; Surge
	// the nodes the scale-up phase added (0 for MINIMAL).
	MaxUnavailable int
	Surge          int
	// Launched are the nodes launched during the update (surge and
	// replacements); Replaced the old nodes it terminated.
	Launched []string
	Replaced []string
	// MaxConcurrentDisruptions is the most old nodes being replaced at
	// once (selected, draining, waiting or terminating).
	MaxConcurrentDisruptions int
	// Blocked are the pods whose eviction was refused.
	Blocked []Blocked
	// Errors is the failure of a Failed update.
	Errors []Failure
}

// PhaseTime is when a phase began.
type PhaseTime struct {
	Phase string
	At    time.Time
}

// Failure is an error of an update or a health issue of a node group
// (errorCode, errorMessage and resourceIds in EKS's API), with the pod and
// PDB that caused a PodEvictionFailure.
type Failure struct {
	Code        string
	Message     string
	ResourceIDs []string
	Pod         string // namespace/name
	PDB         string // namespace/name, comma-separated if several
}

func (f Failure) Error() string { return f.Code + ": " + f.Message }

// String is the failure as EKS prints it in an update's status reason.
func (f Failure) String() string {
	return fmt.Sprintf("{ErrorCode: %s,ErrorMessage: %s,ResourceIds: [%s]}", f.Code, f.Message, strings.Join(f.ResourceIDs, ", "))
}

// Blocked is a pod whose eviction was refused while a node drained.
type Blocked struct {
	Node, Pod string
	PDB       string // namespace/name, "" when no PDB selects the pod
	Since     time.Time
	Until     time.Time // zero while still refused
	// Outcome is blocked (never evicted), evicted, forced (deleted by the
	// force flag), node-removed (the drain's time limit passed and the
	// node was terminated with the pod on it: a scale-in or
	// DeleteNodegroup) or left (gone some other way).
	Outcome string
	Message string
}

// Status returns a node group's status.
func (s *Service) Status(name string) (Status, bool) {
	g, ok := s.groups[name]
	if !ok {
		return Status{}, false
	}
	return s.status(g), true
}

// UpdateRecord returns one update of a live group as DescribeUpdate shows
// it: its identity, versions, status and errors, without the per-node
// record (Phases, Launched, Replaced, Blocked) that Status copies. A caller
// polling an update after every twin event reads this, so it must not cost
// the group's size; ok is false for an unknown or deleted group or update.
func (s *Service) UpdateRecord(name, id string) (Update, bool) {
	g, ok := s.groups[name]
	if !ok || g.status == StatusDeleted {
		return Update{}, false
	}
	for _, rec := range g.updates {
		if rec.ID == id {
			c := *rec
			c.Phases, c.Launched, c.Replaced, c.Blocked = nil, nil, nil, nil
			c.Errors = cloneErrors(rec.Errors)
			return c, true
		}
	}
	return Update{}, false
}

// Busy reports whether a group is being created, updated or deleted.
func (s *Service) Busy() bool {
	for _, g := range s.groups {
		switch g.status {
		case StatusCreating, StatusUpdating, StatusDeleting:
			return true
		}
	}
	return false
}

// Statuses returns every node group's status, sorted by name, deleted
// groups included.
func (s *Service) Statuses() []Status {
	groups := s.sortedGroups()
	out := make([]Status, len(groups))
	for i, g := range groups {
		out[i] = s.status(g)
	}
	return out
}

// Describe returns a node group's status without its nodes and updates:
// what DescribeNodegroup shows. A caller polling a group after every twin
// event (until it is ACTIVE, until it is gone) reads this, so it does not
// cost the group's size.
func (s *Service) Describe(name string) (Status, bool) {
	g, ok := s.groups[name]
	if !ok {
		return Status{}, false
	}
	return s.describe(g), true
}

func (s *Service) status(g *group) Status {
	st := s.describe(g)
	for _, m := range g.sortedMembers() {
		st.Nodes = append(st.Nodes, m.name)
	}
	for _, rec := range g.updates {
		if g.update != nil && g.update.rec == rec {
			st.Updates = append(st.Updates, g.update.view())
		} else {
			st.Updates = append(st.Updates, rec.clone())
		}
	}
	return st
}

func (s *Service) describe(g *group) Status {
	st := Status{
		Name: g.spec.Name, Status: g.status,
		Version: g.version, ReleaseVersion: g.releaseVersion(), AMI: g.ami.ID, KubeletVersion: g.ami.KubeletVersion,
		InstanceType: g.it.Name, CapacityType: g.spec.CapacityType, UpdateStrategy: g.spec.UpdateStrategy,
		Desired: g.desired, Min: g.spec.Min, Max: g.max,
		Health:        slices.Clone(g.health),
		InstanceTypes: slices.Clone(g.spec.InstanceTypes), AMIType: g.spec.AMIType, Zones: slices.Clone(g.spec.Zones),
		Labels: maps.Clone(g.spec.Labels), Taints: slices.Clone(g.spec.Taints), UpdateConfig: g.spec.UpdateConfig,
	}
	if g.status == StatusDeleting || g.status == StatusDeleted {
		st.Min = 0
	}
	if lt := g.spec.LaunchTemplate; lt != nil {
		c := *lt
		st.LaunchTemplate = &c
	}
	return st
}

// Zones are the cluster's Availability Zones, out of which a group's
// subnets are chosen.
func (s *Service) Zones() []string { return slices.Clone(s.opts.Zones) }

// LaunchTemplates lists the launch template behind each live node group,
// by group name, with its id (a template given by name gets the stable id
// its nodes' eks.amazonaws.com/sourceLaunchTemplateId label shows), the
// version the group runs and that version's image.
func (s *Service) LaunchTemplates() []nodegroup.LaunchTemplate {
	var out []nodegroup.LaunchTemplate
	for _, g := range s.sortedGroups() {
		if lt := g.spec.LaunchTemplate; lt != nil && g.status != StatusDeleted {
			c := *lt
			c.ID = launchTemplateID(lt)
			out = append(out, c)
		}
	}
	return out
}

// view is the update record as of now.
func (u *update) view() Update {
	c := u.rec.clone()
	c.Blocked = make([]Blocked, len(u.blocked))
	for i, b := range u.blocked {
		c.Blocked[i] = *b
	}
	return c
}

func (r *Update) clone() Update {
	c := *r
	c.Phases = slices.Clone(r.Phases)
	c.Launched = slices.Clone(r.Launched)
	c.Replaced = slices.Clone(r.Replaced)
	c.Blocked = slices.Clone(r.Blocked)
	c.Errors = cloneErrors(r.Errors)
	return c
}

func cloneErrors(errs []Failure) []Failure {
	c := slices.Clone(errs)
	for i := range c {
		c[i].ResourceIDs = slices.Clone(c[i].ResourceIDs)
	}
	return c
}
