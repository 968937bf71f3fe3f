// Package runbook turns a rehearsed upgrade into the document a platform
// team follows and files with its change ticket: hop by hop, the findings
// that block the hop, then each step — the control plane, each add-on, each
// node group by its mechanism — with what the rehearsal measured (how long,
// how many nodes replaced, the surge, the disruptions, the drains that
// block), the manual command that does the same step (AWS CLI, eksctl,
// kubectl, or the Terraform variable the seed's workshop changes), how to
// roll it back, and what the hop costs or saves.
//
// It is built from the rehearsal's report (internal/report) and the
// check's findings (internal/insights), both deterministic, so the same
// scenario and seed give the same runbook.
package runbook

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/insights"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// Runbook is the upgrade of one cluster to a version. Its JSON is
// documented in docs/plan.md.
type Runbook struct {
	Cluster string `json:"cluster"`
	Region  string `json:"region"`
	From    string `json:"from"`
	To      string `json:"to"`
	// Source says what was rehearsed: a scenario, or a live cluster.
	Source    string    `json:"source"`
	Rehearsal Rehearsal `json:"rehearsal"`
	Hops      []Hop     `json:"hops"`
	Cost      Cost      `json:"cost"`
	Notes     []string  `json:"notes,omitempty"`
}

// Rehearsal is how the rehearsal of the whole upgrade went.
type Rehearsal struct {
	Status             string  `json:"status"`
	Seed               uint64  `json:"seed"`
	Seconds            float64 `json:"seconds"`
	ProbeFailedSeconds float64 `json:"probeFailedSeconds"`
	PDBViolations      int     `json:"pdbViolations"`
	Failure            string  `json:"failure,omitempty"`
}

// Hop is one minor version up.
type Hop struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Blocking are the ERROR findings of `ladder check` for this hop: fix
	// them before it.
	Blocking []Finding `json:"blocking"`
	// Warnings counts the WARNING findings (`ladder check` lists them).
	Warnings int    `json:"warnings"`
	Steps    []Step `json:"steps"`
}

// Finding is one `ladder check` finding.
type Finding struct {
	Check          string `json:"check"`
	Object         string `json:"object"`
	Message        string `json:"message"`
	Recommendation string `json:"recommendation"`
}

// Step is one thing to do, as rehearsed.
type Step struct {
	Kind     string `json:"kind"`
	Name     string `json:"name,omitempty"`
	Strategy string `json:"strategy,omitempty"`
	From     string `json:"from"`
	To       string `json:"to"`
	// StartSeconds and Seconds place the step in the rehearsal.
	StartSeconds float64 `json:"startSeconds"`
	Seconds      float64 `json:"seconds"`
	Status       string  `json:"status"`
	Message      string  `json:"message,omitempty"`
	// NodesReplaced, NodesLaunched and SurgeNodes are the node group's
	// (for a node-group step).
	NodesReplaced            int `json:"nodesReplaced,omitempty"`
	NodesLaunched            int `json:"nodesLaunched,omitempty"`
	SurgeNodes               int `json:"surgeNodes,omitempty"`
	MaxConcurrentDisruptions int `json:"maxConcurrentDisruptions,omitempty"`
	// ProbeFailedSeconds and PDBViolations are the disruptions during the
	// step.
	ProbeFailedSeconds float64 `json:"probeFailedSeconds"`
	PDBViolations      int     `json:"pdbViolations"`
	// Blocked are the drains of this group's nodes a PDB held up, as the
	// rehearsal's report has them.
	Blocked []report.Blocked `json:"blocked,omitempty"`
	// Commands do the same step by hand.
	Commands []Command `json:"commands"`
	// Rollback says how to undo the step.
	Rollback string `json:"rollback"`
}

// Command is a manual equivalent of a step.
type Command struct {
	// Tool is aws, eksctl, kubectl or terraform.
	Tool string `json:"tool"`
	Line string `json:"line"`
}

// Cost is what the upgrade costs and saves.
type Cost struct {
	// From and To are the support status of the versions at At.
	At   string  `json:"at"`
	From Support `json:"from"`
	To   Support `json:"to"`
	// ExtendedSupportMonthlyUSD is the extended-support surcharge a month
	// that the upgrade stops (positive) or starts (negative) paying, per
	// cluster.
	ExtendedSupportMonthlyUSD float64 `json:"extendedSupportMonthlyUSD"`
	// SurgeInstanceHours bounds the extra instance-hours the node-group
	// steps run: each step's surge nodes for the step's whole duration.
	SurgeInstanceHours float64 `json:"surgeInstanceHours"`
	SurgeUSD           float64 `json:"surgeUSD"`
}

// Support is a version's place in the EKS calendar.
type Support struct {
	Version string `json:"version"`
	// Status is STANDARD_SUPPORT, EXTENDED_SUPPORT or UNSUPPORTED.
	Status string `json:"status"`
	// StandardUntil and ExtendedUntil are the first days of extended
	// support and of no support.
	StandardUntil string `json:"standardUntil,omitempty"`
	ExtendedUntil string `json:"extendedUntil,omitempty"`
}

// Extended support's surcharge over standard support, per cluster-hour
// (eks-data.md: $0.60 in total, $0.10 standard).
const extendedSurchargePerHour = 0.50

// hoursPerMonth is AWS's billing month (730 hours).
const hoursPerMonth = 730

// Input is what a runbook is made of.
type Input struct {
	Scenario *scenario.Scenario
	// Source describes what was rehearsed, for the header.
	Source string
	// To is the target minor.
	To string
	// Report is the rehearsal of the scenario's playbook to To.
	Report *report.Report
	// Check is `ladder check`'s report from the scenario's version to To.
	Check *insights.Report
	// Now is when the support status is judged.
	Now time.Time
}

// Make builds the runbook.
func Make(in Input) *Runbook {
	sc, r := in.Scenario, in.Report
	cl := sc.Spec.Cluster
	rb := &Runbook{
		Cluster: cl.Name, Region: cl.Region, From: cl.Version, To: in.To, Source: in.Source,
		Rehearsal: Rehearsal{Status: r.Status, Seed: r.Seed, Seconds: r.MakespanSeconds, Failure: r.Failure},
	}
	if r.Probe != nil {
		rb.Rehearsal.ProbeFailedSeconds = r.Probe.FailedSeconds
	}
	rb.Rehearsal.PDBViolations = len(r.Violations)
	groups := map[string]report.Group{}
	for _, g := range r.Groups {
		groups[g.Name] = g
	}
	nodeGroup := map[string]string{} // node → group, from the events
	for _, e := range r.Events {
		if e.Node != "" && e.Group != "" {
			nodeGroup[e.Node] = e.Group
		}
	}
	cmd := commands{sc: sc}
	for i, h := range r.Hops {
		hop := Hop{From: h.From, To: h.To, Blocking: []Finding{}, Steps: []Step{}}
		if in.Check != nil {
			for _, f := range in.Check.Findings {
				if f.Hop != "" && f.Hop != h.To {
					continue
				}
				switch f.Severity {
				case insights.Error:
					hop.Blocking = append(hop.Blocking, Finding{Check: f.Check, Object: f.Object.String(), Message: f.Message, Recommendation: f.Recommendation})
				case insights.Warning:
					hop.Warnings++
				}
			}
		}
		for _, p := range r.Phases {
			if p.Hop != i {
				continue
			}
			s := Step{Kind: p.Kind, Name: p.Name, Strategy: p.Strategy, From: p.From, To: p.To,
				StartSeconds: p.Start, Seconds: p.End - p.Start, Status: p.Status, Message: p.Message,
				ProbeFailedSeconds: p.ProbeFailedSeconds, PDBViolations: p.PDBViolations}
			if g, ok := groups[p.Name]; ok && p.Kind == "node-group" {
				s.NodesReplaced, s.NodesLaunched, s.SurgeNodes, s.MaxConcurrentDisruptions = g.Replaced, g.Launched, g.SurgeNodes, g.MaxConcurrentDisruptions
				// A blue/green migration launches the green group: all of it
				// runs beside blue until blue is gone, the migration's surge.
				if green, ok := groups[greenOf(sc, p.Name)]; ok && p.Strategy == scenario.BlueGreen {
					s.NodesLaunched += max(green.Launched, green.Nodes)
					s.SurgeNodes = max(s.SurgeNodes, green.Nodes)
				}
				for _, b := range r.Blocked {
					if nodeGroup[b.Node] == p.Name {
						s.Blocked = append(s.Blocked, b)
					}
				}
			}
			s.Commands, s.Rollback = cmd.step(s)
			hop.Steps = append(hop.Steps, s)
		}
		rb.Hops = append(rb.Hops, hop)
	}
	if len(r.Hops) > 1 {
		rb.Notes = append(rb.Notes, "node counts per step are the group's over the whole upgrade (every hop)")
	}
	rb.Cost = cost(rb, sc, in.Now)
	return rb
}

// greenOf is the name of a blue/green group's green group ("" for none).
func greenOf(sc *scenario.Scenario, group string) string {
	for _, g := range sc.Spec.NodeGroups {
		if g.Name == group && g.Upgrade != nil && g.Upgrade.Green != nil {
			return g.Upgrade.Green.Name
		}
	}
	return ""
}

// cost is the support status of both ends at now and the surge's bound.
func cost(rb *Runbook, sc *scenario.Scenario, now time.Time) Cost {
	c := Cost{At: now.UTC().Format(time.RFC3339), From: support(rb.From, now), To: support(rb.To, now)}
	surcharge := func(s Support) float64 {
		if s.Status == catalog.StatusExtendedSupport {
			return extendedSurchargePerHour * hoursPerMonth
		}
		return 0
	}
	c.ExtendedSupportMonthlyUSD = surcharge(c.From) - surcharge(c.To)
	price := map[string]float64{}
	for _, g := range sc.Spec.NodeGroups {
		price[g.Name] = groupPrice(g)
	}
	for _, h := range rb.Hops {
		for _, s := range h.Steps {
			if s.Kind != "node-group" || s.SurgeNodes == 0 {
				continue
			}
			hours := float64(s.SurgeNodes) * s.Seconds / 3600
			c.SurgeInstanceHours += hours
			c.SurgeUSD += hours * price[s.Name]
		}
	}
	return c
}

// groupPrice is the on-demand price an hour of a group's (first) instance
// type, from the embedded catalog; 0 when unknown.
func groupPrice(g scenario.NodeGroup) float64 {
	var it, capacity string
	switch {
	case g.Managed != nil && len(g.Managed.InstanceTypes) > 0:
		it, capacity = g.Managed.InstanceTypes[0], strings.ToLower(strings.ReplaceAll(g.Managed.CapacityType, "_", "-"))
	case g.SelfManaged != nil:
		it = g.SelfManaged.InstanceType
	case g.Karpenter != nil && len(g.Karpenter.Nodes) > 0:
		it, capacity = g.Karpenter.Nodes[0].InstanceType, g.Karpenter.Nodes[0].CapacityType
	}
	t, ok := catalog.LookupInstanceType(it)
	if !ok {
		return 0
	}
	if capacity == "" {
		capacity = "on-demand"
	}
	return t.Price(capacity)
}

func support(minor string, now time.Time) Support {
	s := Support{Version: minor}
	if st, err := catalog.SupportStatus(minor, now); err == nil {
		s.Status = st
	}
	if rel, ok := catalog.LookupRelease(minor); ok {
		s.StandardUntil = rel.EndOfStandardSupport.Format(time.DateOnly)
		s.ExtendedUntil = rel.EndOfExtendedSupport.Format(time.DateOnly)
	}
	return s
}

// Steps lists every step of every hop, for callers that count them.
func (rb *Runbook) Steps() []Step {
	var out []Step
	for _, h := range rb.Hops {
		out = append(out, h.Steps...)
	}
	return slices.Clip(out)
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
