package asg

import (
	"fmt"
	"strconv"
	"time"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/worker"
)

// LifecycleState is an instance's Auto Scaling lifecycle state (§C). The
// twin has no launch lifecycle hook, so Pending goes straight to InService.
type LifecycleState string

// Lifecycle states.
const (
	Pending            LifecycleState = "Pending"
	InService          LifecycleState = "InService"
	Terminating        LifecycleState = "Terminating"
	TerminatingWait    LifecycleState = "Terminating:Wait"
	TerminatingProceed LifecycleState = "Terminating:Proceed"
	Terminated         LifecycleState = "Terminated"
)

// instance is one EC2 instance of a group. Its node's name is its private
// DNS name, known at launch.
type instance struct {
	id, node, zone string
	lt             LaunchTemplate
	ami            catalog.AMI
	state          LifecycleState

	launchedAt, inServiceAt, warmedAt time.Time
	nodeReadyAt                       time.Time
	terminatingAt                     time.Time
	// warmed is true once the instance finished its warm-up: an existing
	// instance always is. Only a warmed InService instance counts as
	// healthy for MinHealthyPercentage (§C: "in service, healthy, and ready
	// to use").
	warmed bool
	// reserved marks an old instance a launch-first replacement will take
	// over: still in service, no longer a candidate.
	reserved bool

	hookTimer *sim.Event // Terminating:Wait's heartbeat timeout
	drains    int        // NTH drain attempts
}

func (in *instance) terminating() bool {
	return in.state == Terminating || in.state == TerminatingWait || in.state == TerminatingProceed
}

// healthy is in service, healthy and ready to use: InService (EC2 runs it
// and its EC2 status checks pass — the twin's group uses the EC2 health
// check) and past its warm-up. Its Node being Ready is deliberately not
// part of it: Auto Scaling does not know Kubernetes (workshop 6.4).
func (in *instance) healthy() bool { return in.state == InService && in.warmed }

// ltVersion is the launch template version as a number, for "oldest launch
// template first"; a non-numeric version sorts first.
func (in *instance) ltVersion() int {
	v, err := strconv.Atoi(in.lt.Version)
	if err != nil {
		return -1
	}
	return v
}

// existing registers an instance that was running before the rehearsal: it
// is InService and warmed, its node Ready.
func (g *group) existing(zone string, created time.Time) (*instance, error) {
	node, err := g.a.workers.Existing(g.workerSpec(zone, g.ami), created)
	if err != nil {
		return nil, err
	}
	ec2, _ := g.a.workers.Instance(node.Name)
	in := &instance{
		id: ec2.ID, node: node.Name, zone: zone, lt: g.lt, ami: g.ami, state: InService,
		launchedAt: created, inServiceAt: created, warmedAt: created, nodeReadyAt: created, warmed: true,
	}
	g.add(in)
	return in, nil
}

// launch starts an instance on the group's launch template in the zone AZ
// balancing picks. It turns InService when EC2 runs it (the worker pool's
// launch latency) and warmed after warmup; warmed runs then. The node
// registers and turns Ready on its own clock, which the group never waits
// for.
func (g *group) launch(cause string, warmup time.Duration, warmed func()) (*instance, error) {
	zone := g.launchZone()
	in := &instance{zone: zone, lt: g.lt, ami: g.ami, state: Pending, launchedAt: g.a.eng.Now()}
	ec2, err := g.a.workers.Launch(g.workerSpec(zone, g.ami), nil, func(string) {
		in.nodeReadyAt = g.a.eng.Now()
	})
	if err != nil {
		g.fail("", "", fmt.Sprintf("Launching a new EC2 instance failed in %s: %v", zone, err))
		g.log(Event{Type: "Warning", Code: EventLaunchFailed, Message: fmt.Sprintf("Launching a new EC2 instance. Status Reason: %v", err)})
		return nil, err
	}
	in.id, in.node = ec2.ID, ec2.Hostname
	g.add(in)
	g.stats.launched++
	g.logInstance(EventLaunching, "", in, fmt.Sprintf("Launching a new EC2 instance: %s (%s, %s, %s). Cause: %s", in.id, zone, in.lt, in.ami.ID, cause))
	g.observe()
	g.a.eng.After(g.a.workers.Timings().Launch, func() { g.enterService(in, warmup, warmed) })
	return in, nil
}

func (g *group) enterService(in *instance, warmup time.Duration, warmed func()) {
	if in.state != Pending {
		return
	}
	in.state, in.inServiceAt = InService, g.a.eng.Now()
	g.logInstance(EventInService, "", in, fmt.Sprintf("Instance %s is InService; warm-up %s", in.id, warmup))
	g.observe()
	finish := func() {
		if in.state != InService {
			return
		}
		in.warmed, in.warmedAt = true, g.a.eng.Now()
		if in.nodeReadyAt.IsZero() {
			// The workshop's point (workshop 6.4): the warm-up has to cover the
			// kubelet's join, or the refresh moves on while the new node
			// cannot take pods yet.
			g.logInstance(EventWarmedUp, "Warning", in, fmt.Sprintf("Instance %s finished its %s warm-up before node %s was Ready; the refresh counts it healthy anyway", in.id, warmup, in.node))
		} else {
			g.logInstance(EventWarmedUp, "", in, fmt.Sprintf("Instance %s finished its %s warm-up", in.id, warmup))
		}
		g.observe()
		if warmed != nil {
			warmed()
		}
	}
	if warmup <= 0 {
		finish()
		return
	}
	g.a.eng.After(warmup, finish)
}

func (g *group) add(in *instance) {
	g.instances = append(g.instances, in)
	g.a.nodeToGroup[in.node] = g
}

func (g *group) workerSpec(zone string, ami catalog.AMI) worker.Spec {
	return worker.Spec{Zone: zone, InstanceType: g.it, AMI: ami, Labels: g.nodeLabels(), Taints: g.spec.Taints}
}

// zoneCounts counts, per zone of the group (in spec order), the instances
// that stay: not terminating and not reserved for replacement.
func (g *group) zoneCounts() []int {
	counts := make([]int, len(g.spec.Zones))
	for _, in := range g.instances {
		if in.terminating() || in.reserved {
			continue
		}
		for i, z := range g.spec.Zones {
			if in.zone == z {
				counts[i]++
			}
		}
	}
	return counts
}

// launchZone is the zone with the fewest instances, the first such in the
// spec's order: Auto Scaling launches where it keeps the zones balanced. The
// reference is silent on ties; AWS breaks them at random, the twin by zone
// order so that the same scenario launches in the same zones.
func (g *group) launchZone() string {
	counts := g.zoneCounts()
	best := 0
	for i := range counts {
		if counts[i] < counts[best] {
			best = i
		}
	}
	return g.spec.Zones[best]
}

// pickVictim chooses which candidate leaves next, as the default termination
// policy does (docs: ec2-auto-scaling-termination-policies.html): balance
// across zones comes first, so the zone with the most instances among those
// holding a candidate (AWS breaks ties at random, the twin by zone order);
// within it the oldest launch template version, then the oldest instance,
// then the lowest instance id (AWS: at random).
func (g *group) pickVictim(candidates []*instance) *instance {
	counts := g.zoneCounts()
	zone := -1
	for i, z := range g.spec.Zones {
		if (zone < 0 || counts[i] > counts[zone]) && hasZone(candidates, z) {
			zone = i
		}
	}
	if zone < 0 {
		return nil
	}
	var best *instance
	for _, in := range candidates {
		if in.zone != g.spec.Zones[zone] {
			continue
		}
		if best == nil || olderThan(in, best) {
			best = in
		}
	}
	return best
}

// olderThan orders instances oldest launch template version first, then
// oldest launch, then instance id.
func olderThan(a, b *instance) bool {
	if a.ltVersion() != b.ltVersion() {
		return a.ltVersion() < b.ltVersion()
	}
	if !a.launchedAt.Equal(b.launchedAt) {
		return a.launchedAt.Before(b.launchedAt)
	}
	return a.id < b.id
}

func hasZone(list []*instance, zone string) bool {
	for _, in := range list {
		if in.zone == zone {
			return true
		}
	}
	return false
}

// inService counts the instances in service and healthy.
func (g *group) inService() int {
	n := 0
	for _, in := range g.instances {
		if in.healthy() {
			n++
		}
	}
	return n
}

func (g *group) terminatingCount() int {
	n := 0
	for _, in := range g.instances {
		if in.terminating() {
			n++
		}
	}
	return n
}

func (g *group) remove(in *instance) {
	for i, x := range g.instances {
		if x == in {
			g.instances = append(g.instances[:i], g.instances[i+1:]...)
			return
		}
	}
}
