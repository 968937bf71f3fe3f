package rehearse

import (
	"context"
	"fmt"
	"time"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/awsport/twinaws"
	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/executor"
	"github.com/ladder-eks/ladder/internal/kubeport/twinport"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/plan"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twin/eks"
)

// The playbook runs a plan (internal/plan) in the twin: for each hop the
// pre-checks, the control plane, the add-ons, then every node group with its
// own mechanism, each step waiting until it is done — every node of a group
// at the hop's version — before the next starts.

// upgrade runs the playbook to target: the executor carries out the plan
// on the twin's ports, and the run, as its observer, records the hops and
// phases.
func (r *run) upgrade(target kubeversion.Minor) error {
	var order []string
	if u := r.sc.Spec.Upgrade; u != nil {
		order = u.Order
		if u.Precondition == "relaxed" {
			r.cp.Precondition = eks.Relaxed
		}
	}
	p, err := plan.Make(r.inventory(), target, order)
	if err != nil {
		return err
	}
	return r.executor().Run(context.Background(), p)
}

// executor is the playbook's executor on the twin's ports, its deadline the
// run's time limit.
func (r *run) executor() *executor.Executor {
	if r.eksAPI == nil {
		var addons []twinaws.Addon
		for _, a := range r.sc.Spec.Addons {
			addons = append(addons, twinaws.Addon{Name: a.Name, Version: a.Version})
		}
		c := r.sc.Spec.Cluster
		r.eksAPI = twinaws.NewEKS(twinaws.EKSOptions{Engine: r.eng, Cluster: c.Name, Region: c.Region, ControlPlane: r.cp,
			Nodegroups: r.mng, Fargate: r.fargate, Addons: addons, ApplyAddon: r.applyAddon})
		r.asgAPI = twinaws.NewAutoScaling(r.asg)
	}
	return &executor.Executor{
		Cluster:    r.sc.Spec.Cluster.Name,
		Ports:      executor.Ports{Kube: twinport.New(r.kube, twinport.Options{Karpenter: r.karp}), EKS: r.eksAPI, AutoScaling: r.asgAPI, LaunchTemplates: r.eksAPI.LaunchTemplates(r.asgAPI)},
		AMIs:       amis{r},
		Mechanisms: mechanisms{r},
		Observer:   r,
		Deadline:   r.limit,

		// spec.upgrade.precondition, as the twin's control plane holds it.
		Precondition: r.cp.Precondition,
	}
}

// inventory is what the planner needs from the scenario and the twins.
func (r *run) inventory() plan.Inventory {
	inv := plan.Inventory{ControlPlane: r.cp.Version()}
	for _, a := range r.sc.Spec.Addons {
		inv.Addons = append(inv.Addons, plan.Addon{Name: a.Name, Version: r.addonVersion(a.Name), Pins: a.Versions})
	}
	for _, g := range r.sc.Spec.NodeGroups {
		inv.Groups = append(inv.Groups, plan.Group{Name: g.Name, Type: g.Type, Strategy: g.StrategyOf()})
	}
	return inv
}

// HopStarted implements executor.Observer.
func (r *run) HopStarted(h plan.Hop) {
	r.hops = append(r.hops, report.Hop{From: h.From.String(), To: h.To.String()})
}

// StepStarted implements executor.Observer: a step is a phase of the
// report.
func (r *run) StepStarted(_ plan.Hop, st plan.Step) {
	r.phases = append(r.phases, report.Phase{Hop: len(r.hops) - 1, Kind: st.Kind, Name: st.Name, Strategy: st.Strategy,
		From: st.From, To: st.To, Start: seconds(r.eng.Elapsed()), Status: report.Succeeded})
	r.currentPhase = len(r.phases) - 1
	r.inPhase = true
}

// StepEnded implements executor.Observer.
func (r *run) StepEnded(_ plan.Step, err error) {
	i := r.currentPhase
	r.inPhase = false
	r.phases[i].End = seconds(r.eng.Elapsed())
	switch {
	case executor.IsTimeLimit(err):
		msg := "the time limit ran out during this step"
		if why := r.stuckReasons(); len(why) > 0 {
			msg += ": " + why[0]
		}
		r.phases[i].Status = report.Stuck
		r.phaseNote(msg)
	case err != nil:
		r.phases[i].Status = report.Failed
		r.phaseNote(err.Error())
	default:
		r.phaseViolated(i)
	}
}

// Event implements executor.Observer: the executor's lines are the
// scenario's own.
func (r *run) Event(eventType, reason, message string) { r.event(eventType, reason, message) }

// phaseNote adds what a reader of the current phase must know.
func (r *run) phaseNote(msg string) {
	if r.currentPhase < 0 {
		return
	}
	if ph := &r.phases[r.currentPhase]; ph.Message == "" {
		ph.Message = msg
	} else {
		ph.Message += "; " + msg
	}
}

// errTimeLimit reports that a step was still waiting when the virtual-time
// limit ran out: the rehearsal is stuck, not failed.
var errTimeLimit = executor.ErrTimeLimit

// everySecond wraps a costly condition (kubectl rollout status walks every
// pod of a DaemonSet) so it is evaluated at most once per virtual second,
// as a client polling the API would; in between it reports false.
func (r *run) everySecond(cond func() bool) func() bool {
	var next time.Time
	return func() bool {
		now := r.eng.Now()
		if now.Before(next) {
			return false
		}
		next = now.Add(time.Second)
		return cond()
	}
}

// waitFor runs the twin until done or the time limit.
func (r *run) waitFor(done func() bool) error {
	if !r.runUntil(done) {
		return errTimeLimit
	}
	return nil
}

// amis looks AMIs up in the scenario's and the catalog's.
type amis struct{ r *run }

func (a amis) LookupAMI(id string) (catalog.AMI, bool) { return a.r.lookupAMI(id) }

// mechanisms are the twin's ways of carrying out the steps the executor
// does not drive through ports yet.
type mechanisms struct{ r *run }

func (m mechanisms) NodeGroup(_ context.Context, st plan.Step, to kubeversion.Minor) error {
	g, ok := m.r.nodeGroupNamed(st.Name)
	if !ok {
		return fmt.Errorf("node group %s is not in the scenario", st.Name)
	}
	return m.r.upgradeGroup(g, st.Strategy, to)
}

// upgradeGroup runs a node group's mechanism for one hop.
func (r *run) upgradeGroup(g scenario.NodeGroup, strategy string, to kubeversion.Minor) error {
	switch strategy {
	case scenario.Drift:
		return r.driftKarpenter(g, to)
	case scenario.InstanceRefresh:
		return r.refreshSelfManaged(g, to)
	case scenario.InPlace:
		return r.updateManaged(g, to)
	case scenario.BlueGreen:
		return r.blueGreen(g, to)
	case scenario.Restart:
		return r.restartFargate(g, to)
	}
	return fmt.Errorf("node group %s: the %s strategy is not rehearsed yet", g.Name, strategy)
}

func (r *run) nodeGroupNamed(name string) (scenario.NodeGroup, bool) {
	for _, g := range r.sc.Spec.NodeGroups {
		if g.Name == name {
			return g, true
		}
	}
	return scenario.NodeGroup{}, false
}

// driftKarpenter is the executor's drift of the group's NodePool.
func (r *run) driftKarpenter(g scenario.NodeGroup, to kubeversion.Minor) error {
	mode := "latest"
	if g.Upgrade != nil && g.Upgrade.AMI != "" {
		mode = g.Upgrade.AMI
	}
	err := r.executor().DriftNodePool(context.Background(), g.Name, g.Karpenter.NodePool, mode, to)
	r.syncNodeClassTerms(g.Karpenter.NodePool)
	return err
}

// syncNodeClassTerms copies the amiSelectorTerms the executor patched into
// the applied EC2NodeClass manifest, so that a later patch action of the
// script starts from them, as kubectl apply's three-way merge would.
func (r *run) syncNodeClassTerms(pool string) {
	np := r.karp.NodePool(pool)
	if np == nil {
		return
	}
	name := np.Spec.Template.Spec.NodeClassRef.Name
	nc := r.karp.NodeClass(name)
	o, ok := r.objects[objectKey("EC2NodeClass", "", name)]
	if nc == nil || !ok {
		return
	}
	if applied, ok := o.Object.(*awsv1.EC2NodeClass); ok {
		applied.Spec.AMISelectorTerms = append([]awsv1.AMISelectorTerm(nil), nc.Spec.AMISelectorTerms...)
	}
}

// groupAt reports whether every node of a group runs a kubelet of minor to.
func (r *run) groupAt(group string, to kubeversion.Minor) bool {
	for _, n := range r.kube.Nodes() {
		if name, _ := r.nodeGroup(n); name != group {
			continue
		}
		v, err := kubeversion.Parse(n.Status.NodeInfo.KubeletVersion)
		if err != nil || v != to {
			return false
		}
	}
	return true
}
