package rehearse

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twin/karpenter"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/mng"
)

// maxStuckLines caps how many pending pods a stuck report lists.
const maxStuckLines = 10

func seconds(d time.Duration) float64 { return float64(d.Milliseconds()) / 1000 }

// report turns the finished run into a report; a run that succeeded but
// broke a PodDisruptionBudget is reported violated.
func (r *run) report(status string) *report.Report {
	now := r.eng.Now()
	pdbs, rollouts := r.pdbReport(now)
	status = r.statusWithViolations(status, rollouts)
	rep := &report.Report{
		Scenario:         r.sc.Metadata.Name,
		Seed:             r.seed,
		Status:           status,
		Start:            r.eng.Start().UTC().Format(time.RFC3339),
		MakespanSeconds:  seconds(r.eng.Elapsed()),
		TimeLimitSeconds: seconds(r.limit.Sub(r.eng.Start())),
		ControlPlane: report.ControlPlane{Version: r.cp.Version().String(), From: r.startVersion.String(),
			Endpoint: r.cp.Endpoint(), OIDCIssuer: r.cp.OIDCIssuer()},
		Hops:      append([]report.Hop{}, r.hops...),
		Phases:    append([]report.Phase{}, r.phases...),
		Addons:    r.addonReport(),
		Failure:   r.failure,
		Events:    r.events,
		Nodes:     []report.Node{},
		Workloads: []report.Workload{},
		Groups:    []report.Group{},
		Blocked:   []report.Blocked{},
	}
	if r.probe != nil {
		rep.Probe = r.probe.result()
	}
	if rep.Events == nil {
		rep.Events = []report.Event{}
	}
	nodeCount := map[string]int{}
	for _, n := range r.kube.Nodes() {
		group, typ := r.nodeGroup(n)
		nodeCount[group]++
		rep.Nodes = append(rep.Nodes, report.Node{
			Name: n.Name, Group: group, GroupType: typ,
			Version:      n.Status.NodeInfo.KubeletVersion,
			Ready:        kube.IsNodeReady(n),
			Schedulable:  !n.Spec.Unschedulable,
			InstanceType: n.Labels[corev1.LabelInstanceTypeStable],
			Zone:         n.Labels[corev1.LabelTopologyZone],
			CapacityType: capacityType(n),
			AMI:          n.Annotations[karpenter.ImageIDAnnotation],
			AgeSeconds:   seconds(now.Sub(n.CreationTimestamp.Time)),
		})
	}
	for _, w := range r.kube.Workloads() {
		rep.Workloads = append(rep.Workloads, report.Workload{
			Namespace: w.Namespace, Name: w.Name, Kind: w.Kind, Desired: w.Desired, Ready: w.Ready,
			MinReady: w.MinReady, ZeroReadySeconds: seconds(w.ZeroReady), PDBViolations: w.PDBViolations,
			UnschedulableSeconds: seconds(w.Unschedulable),
		})
	}
	sort.SliceStable(rep.Workloads, func(i, j int) bool {
		a, b := rep.Workloads[i], rep.Workloads[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Kind < b.Kind
	})
	upgraded := map[string]bool{}
	for _, ph := range r.phases {
		if ph.Kind == "node-group" {
			upgraded[ph.Name] = true
		}
	}
	for _, g := range r.sc.Spec.NodeGroups {
		grp := report.Group{Name: g.Name, Type: g.Type, Nodes: nodeCount[g.Name]}
		if upgraded[g.Name] {
			grp.Strategy = g.StrategyOf()
		}
		if g.Managed != nil {
			r.managedReport(&grp)
		}
		if g.SelfManaged != nil {
			r.selfManagedReport(&grp)
			if st, err := r.asg.Status(g.Name); err == nil && g.StrategyOf() == scenario.Ladder {
				// Ladder raises the desired capacity itself: its surge is
				// above the group's size in the scenario, not above the
				// desired capacity of the moment.
				grp.SurgeNodes = max(0, st.MaxLive-g.SelfManaged.Desired)
			}
		}
		if g.Fargate != nil {
			st := r.fargate.Stats(g.Name)
			grp.Replaced, grp.Launched = st.Removed, st.Launched
			grp.MaxConcurrentDisruptions = r.fargateMaxDisrupted[g.Name]
		}
		if g.Karpenter != nil {
			st := r.karp.Stats(g.Karpenter.NodePool)
			grp.Replaced, grp.Launched, grp.MaxConcurrentDisruptions = st.Replaced, st.Launched, st.MaxConcurrentDisruptions
		}
		rep.Groups = append(rep.Groups, grp)
	}
	for _, green := range r.greens {
		grp := report.Group{Name: green, Type: report.GroupManaged, Nodes: nodeCount[green], Strategy: "blue-green"}
		r.managedReport(&grp)
		rep.Groups = append(rep.Groups, grp)
	}
	for _, b := range r.blocked() {
		rep.Blocked = append(rep.Blocked, report.Blocked{Node: b.node, Pod: b.pod, PDB: b.pdb, Seconds: seconds(b.end(now).Sub(b.since)), Outcome: b.outcome, Message: b.message})
	}
	rep.Violations = append(rep.Violations, r.violations...)
	rep.PDBs, rep.RolloutsBelowFloor = pdbs, rollouts
	rep.Notes = append(rep.Notes, r.notes...)
	for _, k := range r.kube.Killed() {
		if r.violated(k.Namespace, k.Name) {
			continue // violations[] says it, with its PDB
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("pod %s/%s was Ready on node %s when the node went away (%s): it was not evicted", k.Namespace, k.Name, k.Node, k.Reason))
	}
	if status == report.Stuck {
		rep.Stuck = r.stuckReasons()
	}
	return rep
}

// addonReport is each add-on's version at the start and now.
func (r *run) addonReport() []report.Addon {
	out := []report.Addon{}
	for _, a := range r.sc.Spec.Addons {
		out = append(out, report.Addon{Name: a.Name, From: a.Version, To: r.addonVersion(a.Name), Note: r.addonNotes[a.Name]})
	}
	return out
}

// nodeGroup is the scenario node group a node belongs to and its type.
func (r *run) nodeGroup(n *corev1.Node) (name, typ string) { return r.twin.NodeGroup(n) }

func capacityType(n *corev1.Node) string {
	if ct := n.Labels[karpv1.CapacityTypeLabelKey]; ct != "" {
		return ct
	}
	switch n.Labels[mng.LabelCapacityType] {
	case "SPOT":
		return karpv1.CapacityTypeSpot
	case "ON_DEMAND":
		return karpv1.CapacityTypeOnDemand
	}
	return ""
}

// stuckReasons says what kept the cluster from settling.
func (r *run) stuckReasons() []string {
	var out []string
	now := r.eng.Now()
	if r.cp.Updating() {
		out = append(out, "the control-plane update had not finished")
	}
	out = append(out, r.kube.RefusedCreates()...)
	pending := r.kube.PendingPods()
	for i, p := range pending {
		if i == maxStuckLines {
			out = append(out, fmt.Sprintf("… and %d more pending pod(s)", len(pending)-maxStuckLines))
			break
		}
		msg := fmt.Sprintf("pod %s/%s is Pending (%s): %s", p.Namespace, p.Name,
			(now.Sub(p.CreationTimestamp.Time)).Round(time.Second), r.kube.Unschedulable(p.Namespace, p.Name))
		if why := r.karp.Unschedulable(p.Namespace, p.Name); why != "" {
			msg += "; Karpenter: " + why
		}
		out = append(out, msg)
	}
	for _, b := range r.karp.BlockedPods() {
		if !b.Until.IsZero() {
			continue
		}
		what := "eviction"
		if b.Outcome == "disruption-blocked" {
			what = "disruption"
		}
		pdb := ""
		if b.PDB != "" {
			pdb = " by PodDisruptionBudget " + b.PDB
		}
		out = append(out, fmt.Sprintf("node %s: %s blocked%s for %s: %s", b.Node, what, pdb, now.Sub(b.Since).Round(time.Second), b.Message))
	}
	out = append(out, r.ownDrainsStuck(now)...)
	out = append(out, r.karp.BudgetBlocks()...)
	var drifted []string
	for _, c := range r.karp.Drifted() {
		drifted = append(drifted, fmt.Sprintf("%s (%s)", c.Node, c.Drifted))
	}
	if len(drifted) > 0 {
		out = append(out, fmt.Sprintf("%d drifted node(s) not replaced: %s", len(drifted), strings.Join(drifted, ", ")))
	}
	for _, key := range slices.Sorted(maps.Keys(r.rolling)) {
		w := r.rolling[key]
		if done, msg, err := r.kube.RolloutStatus(w.Kind, w.Namespace, w.Name); err != nil {
			out = append(out, fmt.Sprintf("%s %s/%s: %v", strings.ToLower(w.Kind), w.Namespace, w.Name, err))
		} else if !done {
			out = append(out, fmt.Sprintf("%s %s/%s: %s", strings.ToLower(w.Kind), w.Namespace, w.Name, msg))
		}
	}
	if len(pending) == 0 {
		for i, p := range r.kube.NotReadyPods() {
			if i == maxStuckLines {
				break
			}
			out = append(out, fmt.Sprintf("pod %s/%s on %s is not Ready", p.Namespace, p.Name, p.Spec.NodeName))
		}
	}
	if len(out) == 0 {
		out = append(out, fmt.Sprintf("the cluster was still changing when the %s time limit ran out (raise spec.timeLimit)", r.limit.Sub(r.eng.Start())))
	}
	return out
}
