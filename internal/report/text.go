package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/ladder-eks/ladder/internal/termtext"
)

// WriteText renders the report the way an operator reads a cluster: a
// timeline like Karpenter's log, a node table like kubectl get nodes, then
// availability per workload and per node group.
func (r *Report) WriteText(w io.Writer) error {
	p := &printer{w: w}
	makespan := time.Duration(r.MakespanSeconds * float64(time.Second))
	p.printf("Scenario %s (seed %d): %s after %s of virtual time\n", r.Scenario, r.Seed, r.Status, makespan.Round(time.Second))
	if r.Failure != "" {
		p.printf("  failed: %s\n", r.Failure)
	}
	for _, s := range r.Stuck {
		p.printf("  stuck: %s\n", s)
	}
	for i, v := range r.Violations {
		if i == maxViolationLines {
			p.printf("  violated: … and %d more PDB violation(s) (-o json lists them in violations[])\n", len(r.Violations)-maxViolationLines)
			break
		}
		p.printf("  violated: %s\n", v.Summary())
	}
	for i, b := range r.RolloutsBelowFloor {
		if i == maxViolationLines {
			p.printf("  violated: … and %d more span(s) below a PodDisruptionBudget's floor (-o json lists them in rolloutsBelowFloor[])\n", len(r.RolloutsBelowFloor)-maxViolationLines)
			break
		}
		p.printf("  violated: %s\n", b.Summary())
	}
	for _, n := range r.Notes {
		p.printf("  note: %s\n", n)
	}

	if len(r.Hops) > 0 {
		r.writeUpgrade(p, w)
	}

	p.printf("\nTIMELINE (virtual time since %s)\n", r.Start)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, e := range r.Events {
		line := e.Message
		if e.Reason != "" {
			line += fmt.Sprintf("  reason=%s", e.Reason)
		}
		for _, f := range e.Fields {
			line += "  " + f
		}
		if e.Node != "" && !strings.Contains(line, e.Node) {
			line += "  Node=" + e.Node
		}
		level := ""
		if e.Type == "Warning" {
			level = "WARN "
		}
		termtext.Fprintf(tw, "%s\t%s\t%s%s\n", Clock(e.T), e.Source, level, line)
	}
	tw.Flush()

	p.printf("\nNODES (kubectl get nodes)\n")
	tw = tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATUS\tROLES\tAGE\tVERSION\tGROUP\tINSTANCE-TYPE\tZONE")
	for _, n := range r.Nodes {
		status := "Ready"
		if !n.Ready {
			status = "NotReady"
		}
		if !n.Schedulable {
			status += ",SchedulingDisabled"
		}
		termtext.Fprintf(tw, "%s\t%s\t<none>\t%s\t%s\t%s\t%s\t%s\n", n.Name, status,
			duration.HumanDuration(time.Duration(n.AgeSeconds*float64(time.Second))), n.Version, n.Group, n.InstanceType, n.Zone)
	}
	tw.Flush()

	p.printf("\nWORKLOADS\n")
	tw = tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tKIND\tNAME\tDESIRED\tREADY\tMIN-READY\tZERO-READY\tUNSCHEDULABLE\tPDB-VIOLATIONS")
	for _, wl := range r.Workloads {
		termtext.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%d\n", wl.Namespace, wl.Kind, wl.Name, wl.Desired, wl.Ready, wl.MinReady,
			Duration(wl.ZeroReadySeconds), Duration(wl.UnschedulableSeconds), wl.PDBViolations)
	}
	tw.Flush()

	if len(r.PDBs) > 0 {
		p.printf("\nPODDISRUPTIONBUDGETS\n")
		tw = tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
		fmt.Fprintln(tw, "NAMESPACE\tNAME\tMIN-AVAILABLE\tMAX-UNAVAILABLE\tALLOWED-DISRUPTIONS\tMIN-HEALTHY\tBELOW-FLOOR\tDROPS")
		for _, b := range r.PDBs {
			allowed := "-"
			if n := len(b.Series.Allowed); n > 0 {
				allowed = fmt.Sprint(b.Series.Allowed[n-1])
			}
			termtext.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%d\n", b.Namespace, b.Name, dash(b.MinAvailable), dash(b.MaxUnavailable), allowed,
				b.MinHealthy, Duration(b.BelowFloorSeconds), len(b.Drops))
		}
		tw.Flush()
		for _, b := range r.PDBs {
			if b.SyncError != "" {
				termtext.Fprintf(w, "  %s/%s: the disruption controller fails safe (no disruption allowed): %s\n", b.Namespace, b.Name, b.SyncError)
			}
		}
	}

	p.printf("\nNODE GROUPS\n")
	tw = tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTYPE\tNODES\tREPLACED\tLAUNCHED\tMAX-CONCURRENT-DISRUPTIONS\tSURGE\tSTRATEGY")
	for _, g := range r.Groups {
		termtext.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", g.Name, g.Type, g.Nodes, g.Replaced, g.Launched, g.MaxConcurrentDisruptions, g.SurgeNodes, dash(g.Strategy))
	}
	tw.Flush()

	if len(r.Blocked) > 0 {
		p.printf("\nBLOCKED\n")
		tw = tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
		fmt.Fprintln(tw, "NODE\tPOD\tPDB\tFOR\tOUTCOME\tMESSAGE")
		for _, b := range r.Blocked {
			termtext.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", b.Node, b.Pod, dash(b.PDB), Duration(b.Seconds), b.Outcome, b.Message)
		}
		tw.Flush()
	}
	return p.err
}

// writeUpgrade prints the playbook: hops, the control plane's identity,
// each phase, the add-ons and the probe.
func (r *Report) writeUpgrade(p *printer, w io.Writer) {
	var hops []string
	for _, h := range r.Hops {
		hops = append(hops, h.From+" → "+h.To)
	}
	p.printf("\nUPGRADE %s\n", strings.Join(hops, ", "))
	cp := r.ControlPlane
	p.printf("  control plane %s → %s; endpoint %s and OIDC issuer %s unchanged\n", cp.From, cp.Version, cp.Endpoint, cp.OIDCIssuer)
	if r.Probe != nil {
		pct := 100.0
		if r.Probe.Seconds > 0 {
			pct = 100 * (r.Probe.Seconds - r.Probe.FailedSeconds) / r.Probe.Seconds
		}
		p.printf("  probe %s: %s of %s failed (%.2f%% of requests succeeded)\n", r.Probe.Name, Duration(r.Probe.FailedSeconds), Duration(r.Probe.Seconds), pct)
		for _, o := range r.Probe.Outages {
			p.printf("    %s-%s  no Ready pod in %s\n", Clock(o.Start), Clock(o.End), strings.Join(o.Missing, ", "))
		}
	}
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "HOP\tSTEP\tNAME\tSTRATEGY\tFROM\tTO\tSTART\tEND\tSTATUS\tPROBE-FAILED")
	for _, ph := range r.Phases {
		hop := "-"
		if ph.Hop < len(r.Hops) {
			hop = r.Hops[ph.Hop].To
		}
		termtext.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", hop, ph.Kind, dash(ph.Name), dash(ph.Strategy), dash(ph.From), dash(ph.To),
			Clock(ph.Start), Clock(ph.End), ph.Status, Duration(ph.ProbeFailedSeconds))
	}
	tw.Flush()
	for _, ph := range r.Phases {
		if ph.Message != "" {
			p.printf("  %s %s: %s\n", ph.Kind, ph.Name, ph.Message)
		}
	}
	if len(r.Addons) > 0 {
		p.printf("\nADD-ONS\n")
		tw = tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
		fmt.Fprintln(tw, "NAME\tFROM\tTO\tNOTE")
		for _, a := range r.Addons {
			termtext.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.Name, a.From, a.To, dash(a.Note))
		}
		tw.Flush()
	}
}

// maxViolationLines caps the violations the summary lists.
const maxViolationLines = 20

// Summary is the violation in one line: when, which pod, which budget, how
// and in which step.
func (v Violation) Summary() string {
	how := "it was deleted without the Eviction API"
	if v.Mechanism == "node-removed" {
		how = "its node " + v.Node + " went away with it"
	}
	line := fmt.Sprintf("%s pod %s taken down while PodDisruptionBudget %s allowed no disruption: %s (%s)", Clock(v.T), v.Pod, v.PDB, how, v.By)
	if v.Step != "" {
		line += "; step " + strings.Join(nonEmpty(v.Hop, v.Step, v.Name), " ")
	}
	return line
}

// Summary is the span in one line: when, which workload held which
// budget how far below its floor, for how long, and in which step.
func (b RolloutBelowFloor) Summary() string {
	end := Clock(b.End)
	if b.Ongoing {
		end = "the end"
	}
	line := fmt.Sprintf("%s-%s %s of %s held PodDisruptionBudget %s below its floor of %d for %s (%d healthy at worst, %d pod(s) taken by the %s; PodDisruptionBudgets do not guard rollouts)",
		Clock(b.Start), end, b.Cause, b.Workload, b.PDB, b.Desired, Duration(b.Seconds), b.MinHealthy, b.Pods, b.Cause)
	if b.Step != "" {
		line += "; step " + strings.Join(nonEmpty(b.Hop, b.Step, b.Name), " ")
	}
	return line
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printer writes the report's lines with every value escaped (termtext):
// names, messages and reasons come from manifests and clusters.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = termtext.Fprintf(p.w, format, args...)
	}
}

// Clock prints virtual seconds since the start as HH:MM:SS, as the text
// report's timeline does.
func Clock(t float64) string {
	d := time.Duration(t * float64(time.Second)).Round(time.Second)
	return fmt.Sprintf("%02d:%02d:%02d", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
}

// Duration prints seconds as a duration rounded to the second (1m30s), as
// the text report's tables do.
func Duration(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Second).String()
}
