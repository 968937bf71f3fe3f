// Package rehearse runs a scenario in the twin: it builds the cluster (the
// in-memory Kubernetes, EC2, the EKS control plane and each node group's
// twin), applies the manifests, plays the script of actions in virtual time
// and turns what happened into a report.
package rehearse

import (
	"fmt"
	"sort"
	"strings"
	"time"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
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
}

// run is one rehearsal in progress.
type run struct {
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
	// fargateKubelets caches the kubelet of new Fargate pods per minor.
	fargateKubelets map[string]string
	// fargateMaxDisrupted is, per profile, the most pods terminating at once
	// during its restarts.
	fargateMaxDisrupted map[string]int
	// rolling are the workloads whose pod template the rehearsal changed
	// (apply, patch, rollout restart) and whose rollout may not be done;
	// started is set once the starting cluster is in place.
	rolling map[string]scenario.WorkloadRef
	started bool
	// liveGroup maps a managed group of the scenario to the group that
	// holds its nodes now (its green after a blue-green hop); greens are the
	// groups blue-green created; deletedNodes counts a deleted group's nodes.
	liveGroup    map[string]string
	greens       []string
	deletedNodes map[string]int
	limit        time.Time
	objects      map[string]manifest.Object // applied manifests by kind/namespace/name
	groups       map[string]string          // NodePool → node group name
	to           string                     // Options.To
	events       []report.Event
	notes        []string
	failure      string

	// The playbook's record (playbook.go) and the probe's (probe.go).
	startVersion  kubeversion.Minor
	hops          []report.Hop
	phases        []report.Phase
	currentPhase  int
	addonVersions map[string]string
	addonNotes    map[string]string
	probe         *probe
	// clusterAPI is the EKS API the executor calls (eksapi.go).
	clusterAPI *clusterAPI
	// inPhase is set while a playbook step runs (currentPhase);
	// violations are the PDB breaches so far (violations.go).
	inPhase    bool
	violations []report.Violation
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
	seed := uint64(1)
	if sc.Spec.Seed != nil {
		seed = *sc.Spec.Seed
	}
	if opts.Seed != nil {
		seed = *opts.Seed
	}
	start := sc.Spec.Start.UTC()
	eng := sim.New(start, seed)
	limit := sc.Spec.TimeLimit.Get(scenario.DefaultTimeLimit)
	if opts.TimeLimit > 0 {
		limit = opts.TimeLimit
	}
	t := sc.Spec.Timings
	if t == nil {
		t = &scenario.Timings{}
	}
	kt := kube.DefaultTimings
	kt.PodStartup = t.PodStartup.Get(kt.PodStartup)
	kt.PodShutdown = t.PodShutdown.Get(kt.PodShutdown)
	kt.VolumeAttach = t.VolumeAttach.Get(kt.VolumeAttach)
	kt.VolumeDetach = t.VolumeDetach.Get(kt.VolumeDetach)
	c := sc.Spec.Cluster
	r := &run{
		sc: sc, seed: seed, eng: eng,
		kube:    kube.New(eng, kube.Options{Timings: kt, Region: c.Region, Zones: c.Zones}),
		cloud:   ec2.New(c.Region, c.Zones, eng.Rand()),
		limit:   start.Add(limit),
		objects: map[string]manifest.Object{},
		groups:  map[string]string{},
		to:      opts.To,
	}
	r.cp = eks.New(eng, c.Name, c.Region, kubeversion.MustParse(c.Version), t.ControlPlaneUpdate.Get(eks.DefaultUpdateDuration))
	r.startVersion = r.cp.Version()
	r.addonVersions = map[string]string{}
	r.addonNotes = map[string]string{}
	r.currentPhase = -1
	r.cp.Kubelets = func() map[string]string {
		out := map[string]string{}
		for _, n := range r.kube.Nodes() {
			out[n.Name] = n.Status.NodeInfo.KubeletVersion
		}
		return out
	}
	kpt := karpenter.DefaultTimings
	kpt.Launch = t.NodeLaunch.Get(kpt.Launch)
	kpt.Register = t.NodeRegister.Get(kpt.Register)
	kpt.Initialize = t.NodeReady.Get(kpt.Initialize)
	kpt.Terminate = t.InstanceTerminate.Get(kpt.Terminate)
	r.karp = karpenter.New(eng, r.kube, r.cloud, karpenter.Options{
		ClusterName:         c.Name,
		Timings:             kpt,
		InstanceTypes:       sc.InstanceTypes(),
		ExtraAMIs:           sc.ExtraAMIs(),
		ControlPlaneVersion: func() string { return r.cp.Version().String() },
	})
	r.workers = worker.New(eng, r.kube, r.cloud, worker.Timings{Launch: kpt.Launch, Register: kpt.Register, Ready: kpt.Initialize, Terminate: kpt.Terminate})
	r.liveGroup, r.deletedNodes = map[string]string{}, map[string]int{}
	r.mng = mng.New(eng, r.kube, r.workers, mng.Options{InstanceTypes: sc.InstanceTypes(), ExtraAMIs: sc.ExtraAMIs(), Zones: c.Zones,
		ControlPlaneVersion: func() kubeversion.Minor { return r.cp.Version() }})
	r.mng.OnEvent(r.mngEvent)
	r.cp.NodeGroupVersions = r.mng.Versions
	r.asg = asg.New(eng, r.kube, r.workers, asg.Options{InstanceTypes: sc.InstanceTypes(), ExtraAMIs: sc.ExtraAMIs(), Zones: c.Zones})
	r.asg.OnEvent(r.asgEvent)
	r.fargateKubelets, r.fargateMaxDisrupted = map[string]string{}, map[string]int{}
	r.rolling = map[string]scenario.WorkloadRef{}
	r.fargate = fargate.New(eng, r.kube, r.cloud, fargate.Options{Kubelet: r.fargateKubelet, Provision: t.FargateProvision.Get(fargate.DefaultProvision)})
	r.karp.OnEvent(r.karpenterEvent)
	r.kube.OnEvent(r.kubeEvent)
	r.kube.OnPDBBreach(r.pdbBreach)
	for _, g := range sc.Spec.NodeGroups {
		if g.Karpenter != nil {
			r.groups[g.Karpenter.NodePool] = g.Name
		}
	}
	for kind, n := range sc.Ignored {
		r.notes = append(r.notes, fmt.Sprintf("%d %s manifest(s) parsed and ignored: the twin does not model %s", n, kind, kind))
	}
	sort.Strings(r.notes)

	if err := r.addFargateProfiles(); err != nil {
		return nil, err
	}
	if err := r.applyAll(sc.Objects); err != nil {
		return nil, err
	}
	if err := r.createNodes(); err != nil {
		return nil, err
	}
	if err := r.bootstrap(); err != nil {
		return nil, err
	}
	// The starting Fargate pods were running before the rehearsal.
	r.fargate.OnEvent(r.fargateEvent)
	r.started = true
	if sc.Spec.Probe != nil {
		r.probe = r.startProbe(sc.Spec.Probe)
	}
	return r, nil
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

// applyOrder is the order kinds are applied in, dependencies first (as Helm
// installs them).
var applyOrder = map[string]int{
	"Namespace": 0, "StorageClass": 1, "PriorityClass": 1, "PersistentVolume": 2, "PersistentVolumeClaim": 3,
	"EC2NodeClass": 4, "NodePool": 5, "PodDisruptionBudget": 6,
	"DaemonSet": 7, "StatefulSet": 8, "Deployment": 9, "Pod": 10,
}

func (r *run) applyAll(objs []manifest.Object) error {
	sorted := append([]manifest.Object(nil), objs...)
	sort.SliceStable(sorted, func(i, j int) bool { return applyOrder[sorted[i].GVK.Kind] < applyOrder[sorted[j].GVK.Kind] })
	for _, o := range sorted {
		if err := r.apply(o); err != nil {
			return err
		}
	}
	return nil
}

func objectKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// apply sends one manifest to the twin that owns its kind.
func (r *run) apply(o manifest.Object) error {
	var err error
	switch obj := o.Object.(type) {
	case *awsv1.EC2NodeClass:
		err = r.karp.ApplyNodeClass(obj)
	case *karpv1.NodePool:
		err = r.karp.ApplyNodePool(obj)
	case *corev1.Namespace, *storagev1.StorageClass, *schedulingv1.PriorityClass, *corev1.PersistentVolume, *corev1.PersistentVolumeClaim,
		*policyv1.PodDisruptionBudget, *appsv1.DaemonSet, *appsv1.StatefulSet, *appsv1.Deployment, *corev1.Pod:
		err = r.kube.Apply(obj)
	default:
		err = fmt.Errorf("the twin does not apply %s", o.GVK.Kind)
	}
	if err != nil {
		return fmt.Errorf("%s: %s: %v", o.Source, o.Name(), err)
	}
	key := objectKey(o.GVK.Kind, o.Object.GetNamespace(), o.Object.GetName())
	r.objects[key] = o
	if _, rolls := rolloutKinds[o.GVK.Kind]; rolls && r.started {
		r.rolling[key] = scenario.WorkloadRef{Kind: o.GVK.Kind, Namespace: o.Object.GetNamespace(), Name: o.Object.GetName()}
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

// createNodes starts each node group with the nodes it has at the start.
func (r *run) createNodes() error {
	start := r.eng.Now()
	for gi, g := range r.sc.Spec.NodeGroups {
		switch g.Type {
		case scenario.Karpenter:
			for ni, n := range g.Karpenter.Nodes {
				count := n.Count
				if count == 0 {
					count = 1
				}
				for i := 0; i < count; i++ {
					if _, err := r.karp.Adopt(g.Karpenter.NodePool, n.InstanceType, n.Zone, n.CapacityType, n.AMI, start.Add(-n.Age.Get(0))); err != nil {
						return fmt.Errorf("%s: spec.nodeGroups[%d].karpenter.nodes[%d]: %v", r.sc.Path, gi, ni, err)
					}
				}
			}
		case scenario.Managed:
			if err := r.createManaged(gi, g); err != nil {
				return err
			}
		case scenario.SelfManaged:
			if err := r.createSelfManaged(gi, g); err != nil {
				return err
			}
		}
	}
	return nil
}

// bootstrap places the starting workloads as a running cluster has them:
// pods bound and Ready at the start, created when their node was; Fargate
// pods on nodes of the control plane's version.
func (r *run) bootstrap() error {
	r.kube.HoldPodStarts()
	r.eng.Run(r.eng.Now(), nil)
	if err := r.fargate.Bootstrap(r.eng.Now()); err != nil {
		return fmt.Errorf("%s: %v", r.sc.Path, err)
	}
	for _, n := range r.kube.Nodes() {
		r.kube.StartPodsNow(n.Name, n.CreationTimestamp.Time)
	}
	r.kube.ReleasePodStarts()
	r.eng.Run(r.eng.Now(), nil)
	r.kube.StartTracking()
	return nil
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
	r.events = append(r.events, report.Event{
		T: r.eng.Elapsed().Seconds(), Type: e.Type, Message: e.Message, Node: e.Node, Group: group,
		Reason: e.Reason, Source: "karpenter", Code: e.Code, Fields: append(fields, e.Fields...),
	})
}

func (r *run) kubeEvent(e kube.Event) {
	group := ""
	if n := r.kube.Node(e.Node); n != nil {
		group, _ = r.nodeGroup(n)
	}
	r.events = append(r.events, report.Event{
		T: r.eng.Elapsed().Seconds(), Type: e.Type, Message: e.Message, Node: e.Node, Group: group,
		Source: "kubernetes", Code: e.Reason,
	})
}

func (r *run) event(eventType, code, message string) {
	r.events = append(r.events, report.Event{T: r.eng.Elapsed().Seconds(), Type: eventType, Message: message, Source: "scenario", Code: code})
}
