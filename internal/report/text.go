package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
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
	for _, n := range r.Notes {
		p.printf("  note: %s\n", n)
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
		fmt.Fprintf(tw, "%s\t%s\t%s%s\n", clock(e.T), e.Source, level, line)
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
		fmt.Fprintf(tw, "%s\t%s\t<none>\t%s\t%s\t%s\t%s\t%s\n", n.Name, status,
			duration.HumanDuration(time.Duration(n.AgeSeconds*float64(time.Second))), n.Version, n.Group, n.InstanceType, n.Zone)
	}
	tw.Flush()

	p.printf("\nWORKLOADS\n")
	tw = tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tKIND\tNAME\tDESIRED\tREADY\tMIN-READY\tZERO-READY\tPDB-VIOLATIONS")
	for _, wl := range r.Workloads {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%d\n", wl.Namespace, wl.Kind, wl.Name, wl.Desired, wl.Ready, wl.MinReady,
			seconds(wl.ZeroReadySeconds), wl.PDBViolations)
	}
	tw.Flush()

	p.printf("\nNODE GROUPS\n")
	tw = tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTYPE\tNODES\tREPLACED\tLAUNCHED\tMAX-CONCURRENT-DISRUPTIONS")
	for _, g := range r.Groups {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\n", g.Name, g.Type, g.Nodes, g.Replaced, g.Launched, g.MaxConcurrentDisruptions)
	}
	tw.Flush()

	if len(r.Blocked) > 0 {
		p.printf("\nBLOCKED\n")
		tw = tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
		fmt.Fprintln(tw, "NODE\tPOD\tPDB\tFOR\tOUTCOME\tMESSAGE")
		for _, b := range r.Blocked {
			pdb := b.PDB
			if pdb == "" {
				pdb = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", b.Node, b.Pod, pdb, seconds(b.Seconds), b.Outcome, b.Message)
		}
		tw.Flush()
	}
	return p.err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

// clock prints seconds since the start as HH:MM:SS.
func clock(t float64) string {
	d := time.Duration(t * float64(time.Second)).Round(time.Second)
	return fmt.Sprintf("%02d:%02d:%02d", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
}

func seconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Second).String()
}
