// Package asg is the twin of an EC2 Auto Scaling group of self-managed EKS
// nodes (shared/reference/semantics.md §C): a group whose instances run a
// launch template's AMI, an instance refresh that replaces them in sets
// bounded by MinHealthyPercentage and MaxHealthyPercentage, a termination
// lifecycle hook, and the AWS Node Termination Handler (queue-processor mode)
// that cordons and drains a node while its instance waits in
// Terminating:Wait.
//
// The self-managed group of the EKS upgrade workshop
// (shared/seeds/eks-upgrade-workshop.ko.txt, 6.4 "Self-Managed Node Group";
// default-selfmng: m5.large, AL2023) is upgraded this way: the launch
// template gets the new AMI id (SetLaunchTemplate) and an instance refresh
// replaces every instance (StartInstanceRefresh). EKS does not know the
// group exists, and the group does not know Kubernetes: an instance is
// healthy when EC2 runs it, not when its Node is Ready — the instance warmup
// is what has to cover the kubelet's join.
//
// One concern per file: asg.go (groups and launch templates), capacity.go
// (refresh preferences, their validation and the healthy-percentage
// arithmetic), instance.go (launching, AZ balance, which instance goes
// first), refresh.go (the instance refresh), lifecycle.go (termination and
// the lifecycle hook), nth.go (the Node Termination Handler), status.go
// (what a report reads) and events.go (the activity log).
//
// Every node is launched and terminated through internal/twin/worker, time
// is the simulation engine's, and every choice is made in a fixed order, so
// the same seed gives the same run.
package asg

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/worker"
)

// Labels every node of a self-managed group carries. The eksctl label is the
// one internal/rehearse/static.go already puts on self-managed nodes; the
// lifecycle label is what the workshop selects them by (workshop 6.4:
// kubectl get nodes -l node.kubernetes.io/lifecycle=self-managed).
const (
	LabelNodegroupName   = "alpha.eksctl.io/nodegroup-name"
	LabelLifecycle       = "node.kubernetes.io/lifecycle"
	LifecycleSelfManaged = "self-managed"
)

// DefaultHealthCheckGracePeriod is the group's HealthCheckGracePeriod when
// the spec does not set one. The API's default is 0 s but the console's is
// 300 s (docs: health-check-grace-period.html); the twin takes 300 s because
// it is also the default instance warmup of a refresh (§C InstanceWarmup:
// "DefaultInstanceWarmup if set, else HealthCheckGracePeriod"), and a 0 s
// warmup would have every refresh race ahead of the kubelet's join.
const DefaultHealthCheckGracePeriod = 300 * time.Second

// Options configure the twin.
type Options struct {
	// InstanceTypes is the EC2 catalog the region offers.
	InstanceTypes []catalog.InstanceType
	// ExtraAMIs resolves image ids the embedded catalog does not know (a
	// scenario's AMIs, such as the workshop's 1.31 AMI).
	ExtraAMIs []catalog.AMI
	// Zones are the cluster's zones: a group without zones of its own spans
	// them all.
	Zones []string
}

// LaunchTemplate is the group's launch template version: a self-managed
// node's AMI comes from ImageID (scenario.LaunchTemplate has the same
// fields).
type LaunchTemplate struct {
	Name    string
	Version string
	ImageID string
}

func (lt LaunchTemplate) String() string { return lt.Name + ":" + lt.Version }

// Spec is an Auto Scaling group: the fields of scenario.SelfManagedGroup plus
// the lifecycle hook's and the Node Termination Handler's settings.
type Spec struct {
	Name         string
	InstanceType string
	// Desired, Min and Max are the group's capacity; Max 0 means Desired.
	Desired, Min, Max int
	// Zones defaults to Options.Zones.
	Zones          []string
	LaunchTemplate LaunchTemplate
	// Labels and Taints are added to every node (besides LabelNodegroupName
	// and LabelLifecycle).
	Labels map[string]string
	Taints []corev1.Taint
	// TerminationHook is an autoscaling:EC2_INSTANCE_TERMINATING lifecycle
	// hook whose events the Node Termination Handler consumes (scenario:
	// terminationHook). Without it an instance is terminated at once and its
	// pods die without eviction (§C: "Without this lifecycle hook, the
	// instance will terminate immediately").
	TerminationHook bool
	Hook            LifecycleHook
	NTH             NodeTerminationHandler
	// HealthCheckGracePeriod defaults to DefaultHealthCheckGracePeriod.
	HealthCheckGracePeriod *time.Duration
	// DefaultInstanceWarmup is unset by default.
	DefaultInstanceWarmup *time.Duration
}

// Kube is what the groups do to Kubernetes besides launching and
// terminating their nodes (the worker pool's): the Node Termination
// Handler's taint and drain (nth.go), and the pods that died without
// eviction, for the report. The twin's cluster implements it; so does a
// real API server through client-go.
type Kube interface {
	// Node returns the node, or nil if there is none by that name.
	Node(name string) *corev1.Node
	AddTaint(node string, t corev1.Taint) error
	// Drain is kubectl drain NODE with opts: done runs once, when the
	// drain has finished or failed; an error means it did not start.
	Drain(node string, opts kube.DrainOptions, done func(error)) error
	// Killed lists the pods terminated with their node, never evicted.
	Killed() []kube.KilledPod
}

var _ Kube = (*kube.Cluster)(nil)

// ASG is the twin: the account's Auto Scaling groups of self-managed nodes.
type ASG struct {
	eng     *sim.Engine
	kube    Kube
	workers *worker.Pool
	opts    Options

	groups      map[string]*group
	order       []string // group names, sorted
	emit        func(Event)
	refreshSeq  uint64
	nodeToGroup map[string]*group
}

// group is one Auto Scaling group.
type group struct {
	a    *ASG
	spec Spec
	it   catalog.InstanceType
	lt   LaunchTemplate // the group's launch template version (desired configuration)
	ami  catalog.AMI    // lt's image
	// ltVersion is the highest numeric version handed out, for
	// SetLaunchTemplate without a version.
	ltVersion int
	// instances are the group's instances that have not terminated yet, in
	// launch order (existing ones first).
	instances []*instance
	refresh   *refresh // the current or last instance refresh
	stats     stats
	failures  []Failure
}

// New returns the twin.
func New(eng *sim.Engine, kc Kube, workers *worker.Pool, opts Options) *ASG {
	return &ASG{
		eng: eng, kube: kc, workers: workers, opts: opts,
		groups:      map[string]*group{},
		emit:        func(Event) {},
		nodeToGroup: map[string]*group{},
	}
}

// Create creates a group whose Desired instances already run at the start,
// launched age ago on the spec's launch template and spread over its zones
// in turn — the even spread Auto Scaling's AZ balancing keeps.
func (a *ASG) Create(spec Spec, age time.Duration) error {
	g, err := a.newGroup(spec)
	if err != nil {
		return err
	}
	created := a.eng.Now().Add(-age)
	for i := 0; i < g.spec.Desired; i++ {
		if _, err := g.existing(g.spec.Zones[i%len(g.spec.Zones)], created); err != nil {
			return fmt.Errorf("auto scaling group %s: %v", spec.Name, err)
		}
	}
	g.stats.minInService = g.inService()
	g.observe()
	return nil
}

func (a *ASG) newGroup(spec Spec) (*group, error) {
	if spec.Name == "" {
		return nil, fmt.Errorf("auto scaling group: name is required")
	}
	if _, dup := a.groups[spec.Name]; dup {
		return nil, fmt.Errorf("auto scaling group %s already exists", spec.Name)
	}
	fail := func(format string, args ...any) (*group, error) {
		return nil, fmt.Errorf("auto scaling group %s: %s", spec.Name, fmt.Sprintf(format, args...))
	}
	it, ok := a.instanceType(spec.InstanceType)
	if !ok {
		return fail("instance type %q is not in the catalog", spec.InstanceType)
	}
	if spec.Max == 0 {
		spec.Max = spec.Desired
	}
	if spec.Min < 0 || spec.Desired < spec.Min || spec.Desired > spec.Max {
		return fail("capacity must satisfy 0 <= min (%d) <= desired (%d) <= max (%d)", spec.Min, spec.Desired, spec.Max)
	}
	if len(spec.Zones) == 0 {
		spec.Zones = a.opts.Zones
	}
	if len(spec.Zones) == 0 {
		return fail("no zones (set Spec.Zones or Options.Zones)")
	}
	for _, z := range spec.Zones {
		if !contains(a.opts.Zones, z) {
			return fail("zone %q is not one of the cluster's zones %v", z, a.opts.Zones)
		}
	}
	if spec.LaunchTemplate.Name == "" {
		spec.LaunchTemplate.Name = spec.Name
	}
	if spec.LaunchTemplate.Version == "" {
		spec.LaunchTemplate.Version = "1"
	}
	ami, err := a.imageFor(spec.LaunchTemplate, it)
	if err != nil {
		return fail("%v", err)
	}
	if err := spec.Hook.validate(); err != nil {
		return fail("%v", err)
	}
	spec.Hook = spec.Hook.withDefaults(spec.Name)
	spec.NTH = spec.NTH.withDefaults()
	if spec.HealthCheckGracePeriod == nil {
		d := DefaultHealthCheckGracePeriod
		spec.HealthCheckGracePeriod = &d
	}
	spec.Zones = append([]string(nil), spec.Zones...)
	g := &group{a: a, spec: spec, it: it, lt: spec.LaunchTemplate, ami: ami}
	g.ltVersion, _ = strconv.Atoi(spec.LaunchTemplate.Version)
	a.groups[spec.Name] = g
	a.order = append(a.order, spec.Name)
	sort.Strings(a.order)
	return g, nil
}

// SetLaunchTemplate gives the group a new launch template version — the
// desired configuration an instance refresh rolls out (workshop 6.4: the new
// AMI id in the launch template). Running instances keep the version they
// were launched with. An empty Name keeps the template, an empty Version is
// the next number, an empty ImageID keeps the image.
func (a *ASG) SetLaunchTemplate(name string, lt LaunchTemplate) error {
	g, err := a.group(name)
	if err != nil {
		return err
	}
	if g.refreshing() {
		return fmt.Errorf("auto scaling group %s: an instance refresh is in progress; wait for it before changing the launch template", name)
	}
	if lt.Name == "" {
		lt.Name = g.lt.Name
	}
	if lt.ImageID == "" {
		lt.ImageID = g.lt.ImageID
	}
	if lt.Version == "" {
		lt.Version = strconv.Itoa(g.ltVersion + 1)
	}
	ami, err := a.imageFor(lt, g.it)
	if err != nil {
		return fmt.Errorf("auto scaling group %s: %v", name, err)
	}
	if v, err := strconv.Atoi(lt.Version); err == nil && v > g.ltVersion {
		g.ltVersion = v
	}
	g.lt, g.ami = lt, ami
	return nil
}

// OnEvent sets the receiver of the group's activity lines.
func (a *ASG) OnEvent(fn func(Event)) { a.emit = fn }

// Groups lists group names, sorted.
func (a *ASG) Groups() []string { return append([]string(nil), a.order...) }

// GroupOf returns the group a node belongs (or belonged) to, or "".
func (a *ASG) GroupOf(node string) string {
	if g, ok := a.nodeToGroup[node]; ok {
		return g.spec.Name
	}
	return ""
}

// Busy reports whether some group still has work in flight: a refresh not
// finished, or instances pending or terminating.
func (a *ASG) Busy() bool {
	for _, name := range a.order {
		g := a.groups[name]
		if g.refreshing() {
			return true
		}
		for _, in := range g.instances {
			if in.state != InService {
				return true
			}
		}
	}
	return false
}

func (a *ASG) group(name string) (*group, error) {
	g, ok := a.groups[name]
	if !ok {
		return nil, fmt.Errorf("auto scaling group %s not found", name)
	}
	return g, nil
}

func (a *ASG) instanceType(name string) (catalog.InstanceType, bool) {
	for _, t := range a.opts.InstanceTypes {
		if t.Name == name {
			return t, true
		}
	}
	return catalog.InstanceType{}, false
}

// imageFor resolves a launch template's AMI and checks it boots the
// instance type's architecture.
func (a *ASG) imageFor(lt LaunchTemplate, it catalog.InstanceType) (catalog.AMI, error) {
	if lt.ImageID == "" {
		return catalog.AMI{}, fmt.Errorf("launch template %s has no image id", lt)
	}
	var ami catalog.AMI
	found := false
	for _, x := range a.opts.ExtraAMIs {
		if x.ID == lt.ImageID {
			ami, found = x, true
			break
		}
	}
	if !found {
		ami, found = catalog.LookupAMI(lt.ImageID)
	}
	if !found {
		return catalog.AMI{}, fmt.Errorf("launch template %s: AMI %s is not in the catalog (declare it as an extra AMI)", lt, lt.ImageID)
	}
	if ami.KubeArch() != it.Arch {
		return catalog.AMI{}, fmt.Errorf("launch template %s: AMI %s is %s but %s is %s", lt, ami.ID, ami.KubeArch(), it.Name, it.Arch)
	}
	return ami, nil
}

// nodeLabels are the labels of the group's nodes.
func (g *group) nodeLabels() map[string]string {
	l := map[string]string{
		LabelNodegroupName: g.spec.Name,
		LabelLifecycle:     LifecycleSelfManaged,
	}
	for k, v := range g.spec.Labels {
		l[k] = v
	}
	return l
}

func (g *group) refreshing() bool { return g.refresh != nil && !g.refresh.finished }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
