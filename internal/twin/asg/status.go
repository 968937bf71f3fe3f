package asg

import (
	"time"
)

// GroupStatus is what a rehearsal reports for a group.
type GroupStatus struct {
	Name              string
	InstanceType      string
	Desired, Min, Max int
	Zones             []string
	// LaunchTemplate is the group's launch template version (the desired
	// configuration); KubeletVersion is what its AMI's nodes report.
	LaunchTemplate  LaunchTemplate
	KubeletVersion  string
	TerminationHook bool
	// Instances are the group's instances that have not terminated, in
	// launch order.
	Instances []InstanceStatus
	// Refresh is the last instance refresh, or nil.
	Refresh *InstanceRefresh
	// Launched counts instances launched during the run; Replaced old
	// instances terminated (only a refresh terminates).
	Launched, Replaced int
	// MaxConcurrentTerminating is the most instances terminating at once
	// (from "Terminating EC2 instance" to terminated, hook wait included).
	MaxConcurrentTerminating int
	// MaxSurge is the most instances above the desired capacity (pending or
	// in service, not terminating): a launch-first refresh's surge.
	MaxSurge int
	// MaxLive is the most instances pending or in service, not
	// terminating: against the group's size before it, the surge of a
	// replacement that raises the desired capacity itself (Ladder's).
	MaxLive int
	// MinInService is the fewest instances in service, healthy and warmed
	// up at any time: how far a terminate-first refresh dipped.
	MinInService int
	// PodsKilled counts pods that were Ready when their node's instance was
	// terminated under them — never evicted (kube.Cluster.Killed).
	PodsKilled int
	Failures   []Failure
}

// InstanceStatus is one instance.
type InstanceStatus struct {
	ID, Node, Zone string
	State          LifecycleState
	LaunchTemplate LaunchTemplate
	ImageID        string
	KubeletVersion string
	LaunchTime     time.Time
	InServiceTime  time.Time
	WarmedUpTime   time.Time // zero while warming up
	NodeReadyTime  time.Time // zero until the node is Ready
	TerminatingAt  time.Time // zero unless terminating
}

// Failure is something that went wrong: a drain NTH could not finish, a
// lifecycle hook that timed out, a launch EC2 refused, a failed refresh.
type Failure struct {
	At       time.Time
	Instance string
	Node     string
	Message  string
}

// stats are a group's counters, updated by observe after every change.
type stats struct {
	launched, terminated int
	maxTerminating       int
	maxSurge             int
	maxLive              int
	minInService         int
}

func (g *group) observe() {
	live, terminating := 0, 0
	for _, in := range g.instances {
		if in.terminating() {
			terminating++
		} else {
			live++
		}
	}
	s := &g.stats
	s.maxTerminating = max(s.maxTerminating, terminating)
	s.maxSurge = max(s.maxSurge, live-g.spec.Desired)
	s.maxLive = max(s.maxLive, live)
	s.minInService = min(s.minInService, g.inService())
}

func (g *group) fail(instance, node, msg string) {
	g.failures = append(g.failures, Failure{At: g.a.eng.Now(), Instance: instance, Node: node, Message: msg})
}

// Status returns a group's status.
func (a *ASG) Status(name string) (GroupStatus, error) {
	g, err := a.group(name)
	if err != nil {
		return GroupStatus{}, err
	}
	s := GroupStatus{
		Name: g.spec.Name, InstanceType: g.it.Name,
		Desired: g.spec.Desired, Min: g.spec.Min, Max: g.spec.Max,
		Zones:          append([]string(nil), g.spec.Zones...),
		LaunchTemplate: g.lt, KubeletVersion: g.ami.KubeletVersion,
		TerminationHook:          g.spec.TerminationHook,
		Launched:                 g.stats.launched,
		Replaced:                 g.stats.terminated,
		MaxConcurrentTerminating: g.stats.maxTerminating,
		MaxSurge:                 g.stats.maxSurge,
		MaxLive:                  g.stats.maxLive,
		MinInService:             g.stats.minInService,
		Failures:                 append([]Failure(nil), g.failures...),
	}
	for _, in := range g.instances {
		s.Instances = append(s.Instances, InstanceStatus{
			ID: in.id, Node: in.node, Zone: in.zone, State: in.state,
			LaunchTemplate: in.lt, ImageID: in.ami.ID, KubeletVersion: in.ami.KubeletVersion,
			LaunchTime: in.launchedAt, InServiceTime: in.inServiceAt, WarmedUpTime: in.warmedAt,
			NodeReadyTime: in.nodeReadyAt, TerminatingAt: in.terminatingAt,
		})
	}
	if g.refresh != nil {
		r := g.refresh.snapshot()
		s.Refresh = &r
	}
	for _, k := range a.kube.Killed() {
		if a.nodeToGroup[k.Node] == g {
			s.PodsKilled++
		}
	}
	return s, nil
}
