package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ladder-eks/ladder/internal/insights"
	"github.com/ladder-eks/ladder/internal/insights/deprecations"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/scenario"
)

func newCheckCommand() *cobra.Command {
	var (
		files       []string
		target      string
		failOn      string
		output      string
		showPassing bool
		scenarioArg string
		kubeconfig  string
		kubeContext string
		now         string
	)
	cmd := &cobra.Command{
		Use:   "check [-f FILE|DIR|-]... [--scenario S] [--target V] [--fail-on SEVERITY] [-o text|wide|json|sarif]",
		Short: "Find what will break or block the next upgrade hop, before it happens",
		Long: `Check reads Kubernetes manifests — files, directories, standard input — or a
scenario, and reports everything that will break or block the upgrade to
--target: APIs the target no longer serves, PodDisruptionBudgets that never
allow an eviction, pods selected by two budgets, Karpenter NodePools and
EC2NodeClasses that will not drift, and the risks that make a hop hurt
(single replicas, no readiness probe, no spread, Immediate EBS binding).

Each finding has a stable check id, a severity as EKS Upgrade Insights
grades them — ERROR blocks or breaks the next hop, WARNING breaks a later
one or is a risk, PASSING a check that found nothing (--show-passing) — the
object and where it came from (file:line), a message and a recommendation.

Sources: -f as kubectl takes it, repeatable: a file (multi-document YAML,
JSON, List kinds), a directory (every *.yaml, *.yml and *.json below it;
directories starting with "." are skipped) or "-" for standard input. Any
kind is read: custom resources and kinds Ladder does not model keep their
apiVersion, kind and metadata, so API checks still see them. A document
that does not parse is reported (check invalid-manifest) and the scan goes
on. --scenario reads a scenario's manifests and takes the current version
from it. Reading a live cluster (--kubeconfig, --context) is not supported
yet.

--target is the Kubernetes minor to upgrade to: by default the current
version + 1 (from --scenario); required with manifests alone. A target
several minors ahead reports each finding with the hop it breaks.

Checks: ` + checkIDs() + `.
Every check is described in docs/check.md.

Exit status: 0 no finding at or above --fail-on (default ERROR), 2 findings
at or above it, 1 Ladder could not run (bad flags, unreadable paths).`,
		Example: `  # Everything in a GitOps repository, before upgrading to 1.33
  ladder check -f ./clusters/prod --target 1.33

  # A Helm chart as it renders
  helm template shop ./charts/shop | ladder check -f - --target 1.32

  # CI: fail on warnings too, and upload SARIF to code scanning
  ladder check -f ./manifests --target 1.32 --fail-on WARNING -o sarif > ladder.sarif

  # A scenario, from its control plane's version to the next minor
  ladder check --scenario workshop

  # Three hops ahead, as JSON, with the checks that passed
  ladder check --scenario workshop --target 1.33 -o json --show-passing`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch output {
			case "text", "wide", "json", "sarif":
			default:
				return fmt.Errorf("-o %q: use text, wide, json or sarif", output)
			}
			fail, err := insights.ParseSeverity(failOn)
			if err != nil || fail == insights.Passing {
				return fmt.Errorf("--fail-on %q: use ERROR or WARNING", failOn)
			}
			if kubeconfig != "" || kubeContext != "" {
				return errors.New("--kubeconfig and --context: reading a live cluster is not supported yet; check its manifests with -f, or a scenario with --scenario")
			}
			if len(files) == 0 && scenarioArg == "" {
				return errors.New("nothing to check: give manifests with -f FILE|DIR|- (repeatable) or a scenario with --scenario (reading the current kubeconfig's cluster is not supported yet)")
			}

			in := &insights.Input{}
			if scenarioArg != "" {
				sc, err := scenario.Resolve(scenarioArg)
				if err != nil {
					return err
				}
				cur, err := kubeversion.Parse(sc.Spec.Cluster.Version)
				if err != nil {
					return fmt.Errorf("--scenario %s: spec.cluster.version: %w", scenarioArg, err)
				}
				in.Current = cur
				in.Cluster = &insights.Cluster{Name: sc.Spec.Cluster.Name, Version: cur}
				in.Now = sc.Spec.Start.UTC()
				in.Add(insights.FromManifests(sc.Objects), nil)
			}
			if len(files) > 0 {
				objs, problems, err := insights.ReadPaths(files, cmd.InOrStdin())
				if err != nil {
					return err
				}
				in.Add(objs, problems)
			}
			if in.Target, err = checkTarget(target, in.Current); err != nil {
				return err
			}
			if now != "" {
				t, err := time.Parse(time.RFC3339, now)
				if err != nil {
					return fmt.Errorf("--now %q: use RFC 3339, e.g. 2026-12-03T10:00:00Z", now)
				}
				in.Now = t.UTC()
			}
			if in.Now.IsZero() {
				in.Now = time.Now().UTC()
			}

			rep := insights.Run(in, nil)
			opts := insights.OutputOptions{ShowPassing: showPassing, Wide: output == "wide"}
			out := cmd.OutOrStdout()
			switch output {
			case "json":
				err = rep.WriteJSON(out, opts)
			case "sarif":
				err = rep.WriteSARIF(out, opts, buildVersion())
			default:
				err = rep.WriteText(out, opts)
			}
			if err != nil {
				return err
			}
			if rep.Fails(fail) {
				s := rep.Summary()
				return withExit(2, fmt.Errorf("check: %d ERROR, %d WARNING; failing on %s and above (--fail-on)", s[insights.Error], s[insights.Warning], fail))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&files, "filename", "f", nil, "manifest file, directory (recursive) or - for stdin; repeatable")
	f.StringVar(&target, "target", "", "Kubernetes minor to upgrade to, e.g. 1.32 (default: the current version + 1)")
	f.StringVar(&failOn, "fail-on", "ERROR", "exit 2 when a finding is at or above this severity: ERROR or WARNING")
	f.StringVarP(&output, "output", "o", "text", "output format: text, wide (recommendations in a column), json or sarif")
	f.BoolVar(&showPassing, "show-passing", false, "also list the checks that found nothing (PASSING)")
	f.StringVar(&scenarioArg, "scenario", "", "built-in scenario name or scenario file: its manifests, and its control plane's version as the current one")
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of a live cluster (not supported yet)")
	f.StringVar(&kubeContext, "context", "", "kubeconfig context (not supported yet)")
	f.StringVar(&now, "now", "", "evaluate budget windows at this instant (RFC 3339; default: now, or the scenario's start)")
	_ = f.MarkHidden("now")
	return cmd
}

// checkTarget resolves --target against the current version (zero when
// unknown) and the range the API table covers.
func checkTarget(flag string, current kubeversion.Minor) (kubeversion.Minor, error) {
	if flag == "" {
		if current.IsZero() {
			return kubeversion.Minor{}, errors.New("--target is required when only manifests are given (there is no cluster or scenario to take the current version from), e.g. --target 1.32")
		}
		flag = current.Next().String()
	}
	t, err := kubeversion.Parse(flag)
	if err != nil {
		return t, fmt.Errorf("--target: %w", err)
	}
	if t.Less(deprecations.MinCovered) || deprecations.MaxCovered.Less(t) {
		return t, fmt.Errorf("--target %s: Ladder knows Kubernetes %s to %s", flag, deprecations.MinCovered, deprecations.MaxCovered)
	}
	if !current.IsZero() && !current.Less(t) {
		return t, fmt.Errorf("--target %s: the cluster is already at %s; the target must be a later minor, e.g. %s", flag, current, current.Next())
	}
	return t, nil
}

// checkIDs lists the registered checks, wrapped for --help.
func checkIDs() string {
	var b strings.Builder
	col := len("Checks: ")
	for i, c := range insights.Checks() {
		id := c.Info().ID
		if i > 0 {
			b.WriteString(",")
			col++
			if col+1+len(id) > 76 {
				b.WriteString("\n")
				col = 0
			} else {
				b.WriteString(" ")
				col++
			}
		}
		b.WriteString(id)
		col += len(id)
	}
	return b.String()
}
