// Package rehearse runs a scenario in the twin: on the starting cluster
// internal/twinbuild builds (the in-memory Kubernetes, EC2, the EKS control
// plane and each node group's twin, the manifests applied), it plays the
// script of actions in virtual time and turns what happened into a report.
package rehearse

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ladder-eks/ladder/internal/awsport/twinaws"
	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/executor"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/asg"
	"github.com/ladder-eks/ladder/internal/twin/ec2"
	"github.com/ladder-eks/ladder/internal/twin/eks"
	"github.com/ladder-eks/ladder/internal/twin/fargate"
	"github.com/ladder-eks/ladder/internal/twin/karpenter"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/mng"
	"github.com/ladder-eks/ladder/internal/twin/worker"
	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// Options adjust a rehearsal.
type Options struct {
	// Seed overrides the scenario's seed when non-nil.
	Seed *uint64
	// TimeLimit overrides the scenario's virtual-time limit when positive.
	TimeLimit time.Duration
	// To is the playbook's target minor (ladder rehearse --to), over
	// spec.upgrade.to and the upgrade actions' own.
	To string
	// Journal, when set, is the executor's journal: the rehearsal writes
	// what `ladder upgrade` would write (in virtual time), which is how
	// `ladder upgrade status` is tested.
	Journal executor.Journal
	// Progress, when set, hears how far the rehearsal is every
	// ProgressEvery events of the twin (or every ProgressSteps, when
	// set). It only reads: the report is the same with it or without it.
	Progress      func(Progress)
	ProgressSteps uint64
}

// ProgressEvery is how many events of the twin run between two calls of
// Options.Progress: often enough for a line redrawn a few times a second
// on a 5,000-node run, rare enough to cost nothing measurable.
const ProgressEvery = 1 << 14

// Progress is how far a rehearsal is: for a progress line, never part of
// its report.
type Progress struct {
	// Elapsed is the virtual time so far, Limit the run's virtual-time
	// limit.
	Elapsed, Limit time.Duration
	// Step is the upgrade's step under way (executor.StepKey), "" between
	// steps; Hop its hop's target minor.
	Step, Hop string
	// Nodes is the cluster's node count now.
	Nodes int
	// AtHop counts the nodes that run the hop's minor: a pass over every
	// node, to call only when it is shown.
	AtHop func() int
}

// run is one rehearsal in progress.
type run struct {
	// twin is the scenario's cluster; the fields below up to fargate are
	// its twins.
	twin    *twinbuild.Twin
	sc      *scenario.Scenario
	seed    uint64
	eng     *sim.Engine
	kube    *kube.Cluster
	cloud   *ec2.Cloud
	cp      *eks.ControlPlane
	karp    *karpenter.Karpenter
	workers *worker.Pool // managed and self-managed nodes
	asg     *asg.ASG     // self-managed node groups
	mng     *mng.Service // managed node groups
	fargate *fargate.Fargate
	// fargateMaxDisrupted is, per profile, the most pods terminating at once
	// during its restarts.
	fargateMaxDisrupted map[string]int
	// rolling are the workloads whose pod template the rehearsal changed
	// (apply, patch, rollout restart) and whose rollout may not be done;
	rolling map[string]scenario.WorkloadRef
	// liveGroup maps a managed group of the scenario to the group that
	// holds its nodes now (its green after a blue-green hop); greens are the
	// groups blue-green created; deletedNodes counts a deleted group's nodes.
	liveGroup    map[string]string
	greens       []string
	deletedNodes map[string]int
	// refreshBefore is, while a self-managed group's step runs, the
	// group's status when it began.
	refreshBefore asg.GroupStatus
	limit         time.Time
	objects       map[string]manifest.Object // applied manifests by kind/namespace/name
	groups        map[string]string          // NodePool → node group name
	to            string                     // Options.To
	journal       executor.Journal           // Options.Journal
	events        []report.Event
	notes         []string
	failure       string

	// The playbook's record (playbook.go) and the probe's (probe.go).
	startVersion  kubeversion.Minor
	hops          []report.Hop
	phases        []report.Phase
	currentPhase  int
	addonVersions map[string]string
	addonNotes    map[string]string
	probe         *probe
	// eksAPI is the EKS API the executor calls, on the twins.
	eksAPI *twinaws.EKS
	// asgAPI is the Auto Scaling and launch template API, on the twin.
	asgAPI *twinaws.AutoScaling
	// inPhase is set while a playbook step runs (currentPhase);
	// violations are the PDB breaches so far (violations.go).
	inPhase    bool
	violations []report.Violation
	// dropAt locates each PDB drop (by PDB namespace/name and index) in
	// the phase it happened in; phaseDrops counts each phase's drops by a
	// workload's own controller (rollouts.go).
	dropAt     map[dropKey]report.Drop
	phaseDrops map[int][]string
	// ownBlocked are the pods whose eviction Ladder's own drains saw
	// refused (executor.BlockObserver), in the order first seen;
	// ownDrainStuck is the drain of Ladder's own a step was still held up
	// by when the time limit ran out.
	ownBlocked    []blockedSpan
	ownDrainStuck *executor.DrainBlocked
	// recorder records the rehearsal over time for the HTML report; nil
	// unless RunTimeline asked for it.
	recorder *recorder
}

// imageAnnotation is where every twin records the AMI a node booted.
const imageAnnotation = worker.ImageIDAnnotation

// Run rehearses a validated scenario and reports. An error means the
// rehearsal could not be set up (the scenario is inconsistent); problems
// during the run are in the report's status.
func Run(sc *scenario.Scenario, opts Options) (*report.Report, error) {
	r, err := setup(sc, opts)
	if err != nil {
		return nil, err
	}
	status := r.play()
	return r.report(status), nil
}

func setup(sc *scenario.Scenario, opts Options) (*run, error) {
	if _, err := sc.Validate(); err != nil {
		return nil, err
	}
	if opts.To != "" {
		if err := checkTarget(sc, opts.To); err != nil {
			return nil, err
		}
	}
	r := &run{
		sc:                  sc,
		to:                  opts.To,
		journal:             opts.Journal,
		liveGroup:           map[string]string{},
		deletedNodes:        map[string]int{},
		fargateMaxDisrupted: map[string]int{},
		rolling:             map[string]scenario.WorkloadRef{},
		addonVersions:       map[string]string{},
		addonNotes:          map[string]string{},
		currentPhase:        -1,
	}
	// The rehearsal records every event of the starting cluster's
	// construction but the Fargate scheduler's: its starting pods were
	// running before the rehearsal.
	tw, err := twinbuild.Build(sc, twinbuild.Options{Seed: opts.Seed, Observe: func(tw *twinbuild.Twin) {
		r.twin = tw
		r.seed, r.eng, r.kube, r.cloud, r.cp = tw.Seed, tw.Engine, tw.Kube, tw.Cloud, tw.ControlPlane
		r.karp, r.workers, r.asg, r.mng, r.fargate = tw.Karpenter, tw.Workers, tw.ASG, tw.MNG, tw.Fargate
		r.objects, r.groups = tw.Objects, tw.NodePools
		r.mng.OnEvent(r.mngEvent)
		r.asg.OnEvent(r.asgEvent)
		r.karp.OnEvent(r.karpenterEvent)
		r.kube.OnEvent(r.kubeEvent)
		r.kube.OnPDBBreach(r.pdbBreach)
		r.kube.OnPDBDrop(r.pdbDrop)
	}})
	if err != nil {
		return nil, err
	}
	limit := sc.Spec.TimeLimit.Get(scenario.DefaultTimeLimit)
	if opts.TimeLimit > 0 {
		limit = opts.TimeLimit
	}
	r.limit = sc.Spec.Start.UTC().Add(limit)
	r.startVersion = r.cp.Version()
	for _, g := range sc.Spec.NodeGroups {
		if g.Type == scenario.Managed {
			r.liveGroup[g.Name] = g.Name
		}
	}
	for kind, n := range sc.Ignored {
		r.notes = append(r.notes, fmt.Sprintf("%d %s manifest(s) parsed and ignored: the twin does not model %s", n, kind, kind))
	}
	sort.Strings(r.notes)
	tw.Fargate.OnEvent(r.fargateEvent)
	if opts.Progress != nil {
		every := uint64(ProgressEvery)
		if opts.ProgressSteps > 0 {
			every = opts.ProgressSteps
		}
		r.eng.OnSteps(every, func() { opts.Progress(r.progress(limit)) })
	}
	if sc.Spec.Probe != nil {
		r.probe = r.startProbe(sc.Spec.Probe)
	}
	return r, nil
}

// progress is how far the run is.
func (r *run) progress(limit time.Duration) Progress {
	p := Progress{Elapsed: r.eng.Elapsed(), Limit: limit, Nodes: len(r.kube.Nodes())}
	if len(r.hops) == 0 {
		return p
	}
	p.Hop = r.hops[len(r.hops)-1].To
	if r.inPhase {
		ph := r.phases[r.currentPhase]
		p.Step = p.Hop + "/" + ph.Kind
		if ph.Name != "" {
			p.Step += "/" + ph.Name
		}
	}
	hop := kubeversion.MustParse(p.Hop)
	p.AtHop = func() int { return executor.AtMinor(r.kube.Nodes(), hop) }
	return p
}

// checkTarget validates --to against the scenario.
func checkTarget(sc *scenario.Scenario, to string) error {
	target, err := kubeversion.Parse(to)
	if err != nil {
		return fmt.Errorf("--to: %v", err)
	}
	if _, ok := catalog.LookupRelease(target.String()); !ok {
		return fmt.Errorf("--to: unknown EKS version %s (known: %s)", target, strings.Join(scenario.KnownVersions(), ", "))
	}
	from := kubeversion.MustParse(sc.Spec.Cluster.Version)
	if !from.Less(target) {
		return fmt.Errorf("--to: %s is not newer than the scenario's control plane %s", target, from)
	}
	// --to sets the playbook's target: the playbook a scenario without a
	// script runs, or its script's upgrade actions. A script without one
	// would ignore it and report a rehearsal that never went to target.
	if len(sc.Spec.Actions) == 0 && sc.Spec.Upgrade == nil {
		return fmt.Errorf("--to %s: %s has no playbook (spec.upgrade) and no script, so nothing would upgrade (add spec.upgrade: {} or leave out --to)", target, sc.Path)
	}
	if len(sc.Spec.Actions) > 0 {
		for _, a := range sc.Spec.Actions {
			if a.Upgrade != nil {
				return nil
			}
		}
		return fmt.Errorf("--to %s: the script of %s (spec.actions) has no upgrade action, so --to would change nothing (add an action {upgrade: {to: %q}} or leave out --to)", target, sc.Path, target.String())
	}
	return nil
}

func objectKey(kind, namespace, name string) string {
	return twinbuild.ObjectKey(kind, namespace, name)
}

// apply sends one manifest to the twin that owns its kind; a workload's
// rollout is followed until it is done.
func (r *run) apply(o manifest.Object) error {
	if err := r.twin.Apply(o); err != nil {
		return err
	}
	if rolloutKinds[o.GVK.Kind] {
		key := objectKey(o.GVK.Kind, o.Object.GetNamespace(), o.Object.GetName())
		r.rolling[key] = scenario.WorkloadRef{Kind: o.GVK.Kind, Namespace: o.Object.GetNamespace(), Name: o.Object.GetName()}
	}
	return nil
}

// applyAll applies manifests in the order the twin applies a scenario's.
func (r *run) applyAll(objs []manifest.Object) error {
	for _, o := range twinbuild.InApplyOrder(objs) {
		if err := r.apply(o); err != nil {
			return err
		}
	}
	return nil
}

var rolloutKinds = map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true}

// rolledOut reports whether every rollout the rehearsal started is done,
// as kubectl rollout status says it.
func (r *run) rolledOut() bool {
	for key, w := range r.rolling {
		done, _, err := r.kube.RolloutStatus(w.Kind, w.Namespace, w.Name)
		if err == nil && !done {
			return false
		}
		delete(r.rolling, key)
	}
	return true
}

// settled reports whether nothing is left to happen: every pod bound and
// Ready, nothing terminating, every rollout the rehearsal started done,
// Karpenter idle with no drifted node left, no node group changing and the
// control plane not updating.
func (r *run) settled() bool {
	if !r.kube.Quiet() || r.cp.Updating() || r.asg.Busy() || r.managedBusy() || !r.rolledOut() {
		return false
	}
	return !r.karp.Busy() && !r.karp.AnyDrifted()
}

func (r *run) karpenterEvent(e karpenter.Event) {
	group := r.groups[e.NodePool]
	if group == "" {
		group = e.NodePool
	}
	// Karpenter logs the objects it acts on as NodePool=… NodeClaim=….
	var fields []string
	if e.NodePool != "" {
		fields = append(fields, "NodePool="+e.NodePool)
	}
	if e.NodeClaim != "" {
		fields = append(fields, "NodeClaim="+e.NodeClaim)
	}
	r.log(report.Event{
		T: r.eng.Elapsed().Seconds(), Type: e.Type, Message: e.Message, Node: e.Node, Group: group,
		Reason: e.Reason, Source: "karpenter", Code: e.Code, Fields: append(fields, e.Fields...),
	})
}

func (r *run) kubeEvent(e kube.Event) {
	group := ""
	if n := r.kube.Node(e.Node); n != nil {
		group, _ = r.nodeGroup(n)
	}
	r.log(report.Event{
		T: r.eng.Elapsed().Seconds(), Type: e.Type, Message: e.Message, Node: e.Node, Group: group,
		Source: "kubernetes", Code: e.Reason,
	})
}

func (r *run) event(eventType, code, message string) {
	r.log(report.Event{T: r.eng.Elapsed().Seconds(), Type: eventType, Message: message, Source: "scenario", Code: code})
}

// log adds a line to the report's timeline, and tells the recorder of the
// HTML report's, when the rehearsal has one.
func (r *run) log(e report.Event) {
	r.events = append(r.events, e)
	if r.recorder != nil {
		r.recorder.event(e)
	}
}
