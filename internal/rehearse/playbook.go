package rehearse

import (
	"context"
	"errors"
	"strings"

	"github.com/ladder-eks/ladder/internal/awsport/twinaws"
	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/executor"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/plan"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twin/eks"
)

// The playbook runs a plan (internal/plan) in the twin: the executor
// (internal/executor) carries out each hop — the pre-checks, the control
// plane, the add-ons, then every node group by its strategy, each step
// waiting until it is done, every node of a group at the hop's version,
// before the next starts — on the twin's ports, with the scenario's
// per-group settings (executor.ScenarioGroups). The run is its observer: it records
// the hops and phases, and what the report tells of a node group's step
// that the twin does not keep (nodeGroupEnded).

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
	// SSM's recommended AMIs and EC2's images, on the twin's clock: the
	// executor finds the hop's AMI as it does on a real account.
	amiPorts := twinaws.NewAMIs(r.eng.Now, r.sc.ExtraAMIs()...)
	return &executor.Executor{
		Cluster: r.sc.Spec.Cluster.Name,
		Ports: executor.Ports{Kube: r.kubePort(), EKS: r.eksAPI, AutoScaling: r.asgAPI, LaunchTemplates: r.eksAPI.LaunchTemplates(r.asgAPI),
			Parameters: amiPorts, Images: amiPorts},
		AMIs:     amis{r},
		Groups:   executor.ScenarioGroups(r.sc, func(zone string) string { return twinaws.SubnetID(r.sc.Spec.Cluster.Name, zone) }),
		Observer: r,
		Deadline: r.limit,
		Journal:  r.journal,

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
	if st.Kind == plan.NodeGroup && st.Strategy == scenario.InstanceRefresh {
		r.refreshBefore, _ = r.asg.Status(st.Name)
	}
}

// StepEnded implements executor.Observer.
func (r *run) StepEnded(st plan.Step, err error) {
	i := r.currentPhase
	r.inPhase = false
	r.phases[i].End = seconds(r.eng.Elapsed())
	if st.Kind == plan.NodeGroup {
		r.nodeGroupEnded(st)
	}
	switch {
	case executor.IsTimeLimit(err):
		if d := (*executor.DrainBlocked)(nil); errors.As(err, &d) {
			r.ownDrainStuck = d
		}
		msg := "the time limit ran out during this step"
		if why, ok := strings.CutPrefix(err.Error(), executor.ErrTimeLimit.Error()+": "); ok {
			// What the step waited on when it ran out, such as the pod
			// and PDB a drain of Ladder's own is blocked by.
			msg += ": " + why
		} else if why := r.stuckReasons(); len(why) > 0 {
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

// amis looks AMIs up in the scenario's and the catalog's.
type amis struct{ r *run }

func (a amis) LookupAMI(id string) (catalog.AMI, bool) { return a.r.lookupAMI(id) }

// nodeGroupEnded records what a node group's step did that the report
// tells and the twin does not keep.
func (r *run) nodeGroupEnded(st plan.Step) {
	for _, g := range r.sc.Spec.NodeGroups {
		if g.Name != st.Name {
			continue
		}
		switch st.Strategy {
		case scenario.BlueGreen:
			r.blueGreenEnded(g)
		case scenario.InstanceRefresh:
			r.refreshEnded(g.Name, r.refreshBefore)
		}
	}
}
