package cli

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/ladder-eks/ladder/internal/htmlreport"
	"github.com/ladder-eks/ladder/internal/outfile"
	"github.com/ladder-eks/ladder/internal/progress"
	"github.com/ladder-eks/ladder/internal/rehearse"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/timeline"
)

func newRehearseCommand() *cobra.Command {
	var (
		name      string
		seed      uint64
		output    string
		timeLimit time.Duration
		to        string
		htmlFile  string
		strategy  string
	)
	cmd := &cobra.Command{
		Use:   "rehearse [--scenario NAME|FILE] [--to VERSION] [--seed S] [-o text|json] [--report FILE.html]",
		Short: "Rehearse an upgrade in the digital twin, in virtual time",
		Long: `Rehearse runs a scenario — a cluster, its workloads as real Kubernetes and
Karpenter manifests, and a script of actions — in Ladder's twin of
Kubernetes, Karpenter and EKS, in virtual time, and reports what happened:
a timeline that reads like Karpenter's log, the nodes at the end (as
kubectl get nodes shows them), each workload's availability and each node
group's replacements.

A scenario with a playbook (spec.upgrade) and no script upgrades the whole
cluster one minor at a time: pre-checks, the control plane, the add-ons,
then every node group with its own mechanism (managed node group update or
blue/green, Karpenter drift, instance refresh, Fargate restart), each
caught up before the next hop. --to sets the target; each hop is reported
with its phases, the add-on versions and the availability probe.

--report FILE.html also writes the rehearsal as one HTML file that opens
offline: a timeline of the steps, each node's life coloured by kubelet
version, each workload's Ready replicas against desired, each
PodDisruptionBudget's healthy pods against its floor with every pod taken
below it and why, each NodePool's disruptions against its budget, the
blocked drains, and the report's tables (docs/report-html.md). --report - writes the page to
standard output and the text report to standard error. Only a new or a
regular file is written: a path that is a link, a FIFO, a device or a
directory is refused before the rehearsal runs.

The same scenario and seed give byte-identical output. A rehearsal stops at
its virtual-time limit; then its status is "stuck" and the report says what
is stuck and why (a pod that fits nowhere, a drain a PDB blocks). A run
that finished but took a pod down while its PodDisruptionBudget allowed no
disruption — a node group deleted with the pod still on it, a forced
update, an instance refresh without a lifecycle hook — is "violated", not
"succeeded": the report names each pod, its PDB, how and in which step.

A rehearsal of 1,000 nodes or more shows its progress on standard error
(--progress): the nodes at the hop's version, the virtual time against the
limit and the step under way — a live line on a terminal, a timestamped
line every 30 s elsewhere. Standard output is the same either way.

Exit status: 0 succeeded, 2 violated, failed or stuck, 1 the scenario could not run.

Built-in scenarios: ` + builtinList() + `
(show one with: ladder scenario show NAME)`,
		Example: `  # The seed's Karpenter drift upgrade, 1.30 → 1.31, one node at a time
  ladder rehearse

  # Your own scenario, as JSON for a pipeline
  ladder rehearse --scenario ./my-cluster.yaml -o json

  # Another seed changes node names, zones and tie-breaks, not the rules
  ladder rehearse --seed 7

  # Three hops, 1.30 → 1.33, every node caught up before the next hop
  ladder rehearse --scenario ./my-cluster.yaml --to 1.33

  # The workshop's upgrade as one HTML file with charts, to open offline
  ladder rehearse --scenario workshop --report workshop.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "json" {
				return fmt.Errorf("-o %q: use text or json", output)
			}
			if cmd.Flags().Changed("time-limit") && (timeLimit <= 0 || timeLimit > scenario.MaxTimeLimit) {
				return fmt.Errorf("--time-limit %s: use a positive virtual duration of at most %s, e.g. --time-limit 6h", timeLimit, scenario.MaxTimeLimit)
			}
			sc, err := resolveScenario(cmd, name, strategy)
			if err != nil {
				return err
			}
			pr, err := progressOf(cmd)
			if err != nil {
				return err
			}
			opts := rehearse.Options{TimeLimit: timeLimit, To: to}
			if cmd.Flags().Changed("seed") {
				opts.Seed = &seed
			}
			var show *rehearsalProgress
			if pr != nil {
				show = &rehearsalProgress{rep: pr, name: sc.Metadata.Name, now: time.Now}
				opts.Progress = show.update
			}
			rep, err := rehearseWithReport(sc, opts, htmlFile, cmd.OutOrStdout())
			show.end(rep, err)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if htmlFile == "-" {
				// Standard output holds the page alone.
				out = cmd.ErrOrStderr()
			}
			if output == "json" {
				err = rep.WriteJSON(out)
			} else {
				err = writeText(out, rep.WriteText)
			}
			if err != nil {
				return err
			}
			if rep.Status != report.Succeeded {
				return withExit(2, fmt.Errorf("rehearsal %s", rep.Status))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "scenario", scenario.Default, "built-in scenario name or scenario file")
	cmd.Flags().Uint64Var(&seed, "seed", 0, "random seed (default: the scenario's)")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	cmd.Flags().StringVar(&to, "to", "", "upgrade to this Kubernetes minor, hop by hop (default: the scenario's spec.upgrade.to, else the next minor)")
	cmd.Flags().StringVar(&htmlFile, "report", "", "also write the rehearsal as a self-contained HTML file with charts (e.g. --report rehearsal.html)")
	addStrategyFlag(cmd.Flags(), &strategy)
	cmd.Flags().DurationVar(&timeLimit, "time-limit", 0, "virtual-time limit, positive and at most 720h (default: the scenario's spec.timeLimit, else 6h)")
	return cmd
}

// bigRehearsal is the node count from which a rehearsal shows its
// progress: smaller ones take a few seconds.
const bigRehearsal = 1000

// rehearsalProgress shows a big rehearsal's progress: the nodes at the
// hop's version, the virtual time against the limit and the step.
type rehearsalProgress struct {
	rep     *progress.Reporter
	name    string
	now     func() time.Time
	started bool
	last    time.Time
}

// countEvery is the least wall time between two counts of the nodes at
// the hop's version (a pass over every node).
const countEvery = 250 * time.Millisecond

func (p *rehearsalProgress) update(r rehearse.Progress) {
	if r.Nodes < bigRehearsal {
		return
	}
	if !p.started {
		p.started = true
		p.rep.Start("rehearsing " + p.name)
	}
	if now := p.now(); now.Sub(p.last) >= countEvery {
		p.last = now
		// Before the first hop there is no version to count nodes at: a
		// spinner, not an empty bar.
		at, total, detail := 0, 0, fmt.Sprintf("virtual %s of %s", r.Elapsed.Truncate(time.Minute), r.Limit)
		if r.AtHop != nil {
			at, total = r.AtHop(), r.Nodes
			detail = "nodes at " + r.Hop + ", " + detail
		}
		if r.Step != "" {
			detail += ", " + r.Step
		}
		p.rep.Update(at, total, detail)
	}
}

func (p *rehearsalProgress) end(rep *report.Report, err error) {
	if p == nil || !p.started {
		return
	}
	if err == nil && rep.Status != report.Succeeded {
		err = fmt.Errorf("rehearsal %s", rep.Status)
	}
	p.rep.End("", err)
}

func builtinList() string {
	s := ""
	for i, n := range scenario.Builtins() {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}

// rehearseWithReport runs the rehearsal; with an HTML file named, it
// records the timeline too and writes the page (the report is the same),
// to stdout for "-".
func rehearseWithReport(sc *scenario.Scenario, opts rehearse.Options, htmlFile string, stdout io.Writer) (*report.Report, error) {
	if htmlFile == "" {
		return rehearse.Run(sc, opts)
	}
	// Before the rehearsal, which may take a while: a page that cannot be
	// written should not cost one.
	if err := checkReportDir(htmlFile); err != nil {
		return nil, err
	}
	rep, tl, err := rehearse.RunTimeline(sc, opts)
	if err != nil {
		return nil, err
	}
	return rep, writeHTMLReport(htmlFile, stdout, rep, tl)
}

// writeHTMLReport writes the rehearsal's page.
func writeHTMLReport(path string, stdout io.Writer, rep *report.Report, tl *timeline.Timeline) error {
	var buf bytes.Buffer
	if err := htmlreport.Write(&buf, rep, tl); err != nil {
		return err
	}
	return writePage(path, stdout, buf.Bytes())
}

// reportFile is the --report output: a regular file written whole, or
// standard output for "-" (internal/outfile).
func reportFile(path string, stdout io.Writer) outfile.File {
	return outfile.File{Name: "--report", Path: path, Stdout: stdout}
}

// writePage writes a page whole or not at all: a reader never opens half
// a file, and only a regular file is written.
func writePage(path string, stdout io.Writer, page []byte) error {
	return reportFile(path, stdout).Write(page)
}

// checkReportDir refuses, before anything runs, a --report that names
// anything but a new or regular file in an existing directory.
func checkReportDir(htmlFile string) error {
	if htmlFile == "" {
		return nil
	}
	return reportFile(htmlFile, io.Discard).Check()
}
