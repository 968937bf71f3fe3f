package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/ladder-eks/ladder/internal/insights"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rehearse"
	"github.com/ladder-eks/ladder/internal/runbook"
	"github.com/ladder-eks/ladder/internal/scenario"
)

func newPlanCommand() *cobra.Command {
	var target liveTarget
	var scenarioArg, to, output, now, htmlFile, strategy string
	cmd := &cobra.Command{
		Use:   "plan [--to V] [--scenario NAME|FILE | --kubeconfig K --context C --cluster NAME] [-o markdown|json] [--strategy instance-refresh|ladder]",
		Short: "Write the upgrade's runbook: every step rehearsed, with its manual command and rollback",
		Long: `Plan rehearses the upgrade to --to (default: the next minor) and writes it as
a runbook to follow and file with a change ticket. Hop by hop (one minor
each): the findings of "ladder check" that block the hop; then the control
plane, each add-on and its target version, each node group with its
mechanism, in the order the playbook runs them. For each step:

  rehearsed     when it starts and ends in the rehearsal, nodes replaced and
                launched, surge, disruptions at once, probe failure, PDB
                violations, each drain a PDB held up (pod, PDB, node, how long)
  by hand       the equivalent commands: AWS CLI, eksctl, kubectl, or the
                terraform-aws-eks variable the AWS workshop changes
  rollback      how to undo it: EKS's control-plane rollback within 7 days,
                the previous launch template version, the EC2NodeClass revert

and the cost: the support status of both versions today (an extended-support
surcharge ended or started) and a bound on the surge's instance-hours.

The cluster is a scenario (--scenario), or a live EKS cluster read as
"ladder capture" reads it (the kubeconfig's current context, or --kubeconfig,
--context, --cluster, --region; AWS credentials from the SDK's default
chain). Nothing is changed: plan only reads and rehearses.`,
		Example: `  # The workshop's runbook to 1.31, as Markdown
  ladder plan --scenario workshop --to 1.31

  # The current context's cluster, two hops, as JSON (schema: docs/plan.md)
  ladder plan --to 1.33 -o json | jq '.hops[].steps[] | {kind, name, seconds}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "markdown" && output != "json" {
				return fmt.Errorf("-o %q: use markdown or json", output)
			}
			// Before the cluster is read and rehearsed: a page that cannot
			// be written should not cost them.
			if err := checkReportDir(htmlFile); err != nil {
				return err
			}
			at := time.Now().UTC()
			if now != "" {
				t, err := time.Parse(time.RFC3339, now)
				if err != nil {
					return fmt.Errorf("--now %q: use RFC 3339, e.g. 2026-12-03T10:00:00Z", now)
				}
				at = t.UTC()
			}
			var sc *scenario.Scenario
			var source string
			var err error
			if scenarioArg != "" {
				if target.kubeconfig != "" || target.kubeContext != "" || target.cluster != "" {
					return fmt.Errorf("--scenario plans a scenario, --kubeconfig/--context/--cluster a live cluster: give one or the other")
				}
				if sc, err = scenario.Resolve(scenarioArg); err != nil {
					return err
				}
				source = "scenario " + sc.Metadata.Name
			} else {
				if sc, err = captureLive(cmd.Context(), target); err != nil {
					return err
				}
				source = "live cluster " + sc.Spec.Cluster.Name + " (captured " + at.Format(time.RFC3339) + ")"
			}
			if to == "" {
				v, err := kubeversion.Parse(sc.Spec.Cluster.Version)
				if err != nil {
					return fmt.Errorf("spec.cluster.version: %w", err)
				}
				to = v.Next().String()
			}
			if err := applyStrategy(sc, strategy); err != nil {
				return err
			}
			// A plan is the playbook's: a scenario without one gets the
			// default playbook (spec.upgrade: {}), and a script that does not
			// run it (a write-up's own steps) is left out.
			notes := playbookOnly(sc)
			if htmlFile == "-" {
				// Standard output holds the page alone; the runbook
				// goes to standard error.
				return writeRunbookReport(cmd.OutOrStdout(), cmd.ErrOrStderr(), sc, source, to, at, output, htmlFile, notes...)
			}
			return writeRunbookReport(nil, cmd.OutOrStdout(), sc, source, to, at, output, htmlFile, notes...)
		},
	}
	f := cmd.Flags()
	f.StringVar(&to, "to", "", "target Kubernetes minor (default: the next one)")
	f.StringVar(&scenarioArg, "scenario", "", "plan a scenario (a built-in name or a file) instead of a live cluster")
	target.register(f)
	f.StringVarP(&output, "output", "o", "markdown", "markdown or json")
	f.StringVar(&now, "now", "", "judge support status at this instant (RFC 3339; default: now)")
	f.StringVar(&htmlFile, "report", "", "also write the plan's rehearsal as a self-contained HTML file with charts (docs/report-html.md)")
	addStrategyFlag(f, &strategy)
	return cmd
}

// writeRunbook rehearses sc's upgrade to `to`, runs the checks, and
// writes the runbook as markdown or json.
func writeRunbook(w io.Writer, sc *scenario.Scenario, source, to string, at time.Time, output string, notes ...string) error {
	return writeRunbookReport(nil, w, sc, source, to, at, output, "", notes...)
}

// writeRunbookReport is writeRunbook that, with htmlFile named, also writes
// the rehearsal as the HTML report (plan --report), to page for "-".
func writeRunbookReport(page, w io.Writer, sc *scenario.Scenario, source, to string, at time.Time, output, htmlFile string, notes ...string) error {
	rep, err := rehearseWithReport(sc, rehearse.Options{To: to}, htmlFile, page)
	if err != nil {
		return err
	}
	check, err := planCheck(sc, to, at)
	if err != nil {
		return err
	}
	rb := runbook.Make(runbook.Input{Scenario: sc, Source: source, To: to, Report: rep, Check: check, Now: at})
	rb.Notes = append(notes, rb.Notes...)
	if output == "json" {
		return rb.WriteJSON(w)
	}
	return rb.WriteMarkdown(w)
}

// playbookOnly makes sc run the playbook: the default one when it has
// none, without a script that has no upgrade action. It says what it left
// out.
func playbookOnly(sc *scenario.Scenario) []string {
	for _, a := range sc.Spec.Actions {
		if a.Upgrade != nil {
			return nil // the script runs the playbook, with its own steps around it
		}
	}
	var notes []string
	if n := len(sc.Spec.Actions); n > 0 {
		notes = append(notes, fmt.Sprintf("the scenario's script (%d actions, no upgrade among them) is not played: the runbook is the playbook's", n))
		sc.Spec.Actions = nil
	}
	if sc.Spec.Upgrade == nil {
		sc.Spec.Upgrade = &scenario.Upgrade{}
	}
	return notes
}

// planCheck runs every check of `ladder check` on the scenario from its
// version to `to`.
func planCheck(sc *scenario.Scenario, to string, at time.Time) (*insights.Report, error) {
	in, err := scenarioCheckInput(sc)
	if err != nil {
		return nil, err
	}
	if in.Target, err = kubeversion.Parse(to); err != nil {
		return nil, fmt.Errorf("--to: %w", err)
	}
	in.Now = at
	return insights.Run(in, nil), nil
}

// captureLive reads a live cluster as `ladder capture` does, into a
// scenario.
func captureLive(ctx context.Context, target liveTarget) (*scenario.Scenario, error) {
	lc, err := openLive(ctx, target)
	if err != nil {
		return nil, err
	}
	return captureScenario(ctx, lc)
}
