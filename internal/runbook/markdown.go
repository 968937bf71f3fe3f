package runbook

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/termtext"
)

// WriteJSON writes the runbook as indented JSON (docs/plan.md).
func (rb *Runbook) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rb)
}

// WriteMarkdown writes the runbook as a document to follow: a summary,
// then per hop the blocking findings, a table of the steps and each step
// with its commands and its rollback.
func (rb *Runbook) WriteMarkdown(w io.Writer) error {
	b := &strings.Builder{}
	// Every value is escaped for a terminal and for a Markdown table
	// (termtext.MarkdownCell): names and messages come from the cluster.
	p := func(format string, args ...any) {
		fmt.Fprintf(b, format, termtext.ArgsWith(args, termtext.MarkdownCell)...)
	}
	p("# Upgrade runbook: %s %s → %s\n\n", rb.Cluster, rb.From, rb.To)
	r := rb.Rehearsal
	p("Rehearsed by Ladder on %s (seed %d): **%s** after %s of virtual time", rb.Source, r.Seed, r.Status, span(r.Seconds))
	p("; the availability probe failed %s; %d PDB violation(s).\n", span(r.ProbeFailedSeconds), r.PDBViolations)
	if r.Failure != "" {
		p("\n> **The rehearsal failed:** %s\n", r.Failure)
	}
	p("\n| | |\n|---|---|\n")
	p("| cluster | %s (%s) |\n", rb.Cluster, rb.Region)
	hops := "1 hop"
	if len(rb.Hops) != 1 {
		hops = fmt.Sprintf("%d hops", len(rb.Hops))
	}
	p("| versions | %s → %s, %s of one minor each |\n", rb.From, rb.To, hops)
	c := rb.Cost
	p("| support at %s | %s; %s |\n", c.At[:10], supportText(c.From), supportText(c.To))
	switch {
	case c.ExtendedSupportMonthlyUSD > 0:
		p("| extended support | the upgrade ends a surcharge of $%.0f a month |\n", c.ExtendedSupportMonthlyUSD)
	case c.ExtendedSupportMonthlyUSD < 0:
		p("| extended support | %s is itself in extended support: $%.0f a month |\n", rb.To, -c.ExtendedSupportMonthlyUSD)
	}
	p("| surge | at most %.1f instance-hours, $%.2f on demand |\n", c.SurgeInstanceHours, c.SurgeUSD)
	for _, n := range rb.Notes {
		p("\nNote: %s.\n", n)
	}
	n := 0
	for i, h := range rb.Hops {
		p("\n## Hop %d: %s → %s\n\n", i+1, h.From, h.To)
		if len(h.Blocking) == 0 {
			p("No blocking finding")
		} else {
			p("**Fix before this hop** (`ladder check --target %s`):\n\n", h.To)
			for _, f := range h.Blocking {
				p("- `%s` %s: %s — %s\n", f.Check, f.Object, f.Message, f.Recommendation)
			}
			p("\n%d blocking finding(s)", len(h.Blocking))
		}
		p("; %d warning(s) (`ladder check --target %s` lists them).\n\n", h.Warnings, h.To)
		p("| # | step | strategy | from → to | rehearsed | nodes replaced | surge | probe failed | status |\n")
		p("|---|---|---|---|---|---|---|---|---|\n")
		for j, s := range h.Steps {
			p("| %d | %s | %s | %s → %s | %s–%s | %s | %s | %s | %s |\n", n+j+1, stepName(s), dash(s.Strategy), s.From, s.To,
				clock(s.StartSeconds), clock(s.StartSeconds+s.Seconds), count(s.NodesReplaced), count(s.SurgeNodes), clock(s.ProbeFailedSeconds), s.Status)
		}
		for _, s := range h.Steps {
			n++
			p("\n### %d. %s\n\n", n, stepName(s))
			p("Rehearsed: %s → %s, %s (%s–%s)", s.From, s.To, human(s.Seconds), clock(s.StartSeconds), clock(s.StartSeconds+s.Seconds))
			if s.NodesReplaced > 0 || s.NodesLaunched > 0 {
				p("; %d node(s) replaced, %d launched, surge %d", s.NodesReplaced, s.NodesLaunched, s.SurgeNodes)
				if s.MaxConcurrentDisruptions > 0 {
					p(", at most %d disrupted at once", s.MaxConcurrentDisruptions)
				}
			}
			if s.PDBViolations > 0 {
				p("; **%d PDB violation(s)**", s.PDBViolations)
			}
			p(".\n")
			if s.Message != "" {
				p("\n> %s\n", s.Message)
			}
			for _, bl := range s.Blocked {
				p("\n- drain blocked %s: pod %s on %s by PDB %s (%s)", human(bl.Seconds), bl.Pod, bl.Node, bl.PDB, bl.Outcome)
			}
			if len(s.Blocked) > 0 {
				p("\n")
			}
			if len(s.Commands) > 0 {
				p("\nBy hand:\n")
				for _, lang := range []string{"sh", "hcl"} {
					var lines []string
					for _, cmd := range s.Commands {
						if (cmd.Tool == "terraform") == (lang == "hcl") {
							// A code block shows a backslash as
							// itself: the line is escaped for
							// the terminal only.
							lines = append(lines, termtext.Escape(cmd.Line))
						}
					}
					if len(lines) > 0 {
						fmt.Fprintf(b, "\n```%s\n%s\n```\n", lang, strings.Join(lines, "\n"))
					}
				}
			}
			if s.Rollback != "" {
				p("\nRollback: %s.\n", s.Rollback)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func stepName(s Step) string {
	switch s.Kind {
	case "pre-checks":
		return "Pre-checks"
	case "control-plane":
		return "Control plane"
	case "addon":
		return "Add-on " + s.Name
	case "node-group":
		return "Node group " + s.Name
	}
	return s.Kind + " " + s.Name
}

func supportText(s Support) string {
	switch s.Status {
	case catalog.StatusStandardSupport:
		return fmt.Sprintf("%s in standard support until %s", s.Version, s.StandardUntil)
	case catalog.StatusExtendedSupport:
		return fmt.Sprintf("%s in extended support until %s", s.Version, s.ExtendedUntil)
	case catalog.StatusUnsupported:
		return s.Version + " unsupported"
	}
	return s.Version + " not in the embedded calendar"
}

// clock is seconds as hh:mm:ss, as the rehearsal's timeline prints them.
func clock(sec float64) string {
	d := time.Duration(sec * float64(time.Second)).Round(time.Second)
	return fmt.Sprintf("%02d:%02d:%02d", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
}

// span is seconds as a Go duration, as the rehearsal's summary prints it.
func span(sec float64) string {
	return time.Duration(sec * float64(time.Second)).Round(time.Second).String()
}

func human(sec float64) string {
	if sec <= 0 {
		return "0s"
	}
	return duration.HumanDuration(time.Duration(sec * float64(time.Second)))
}

func count(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
