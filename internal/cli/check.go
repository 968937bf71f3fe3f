package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
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
		files          []string
		target         string
		failOn         string
		output         string
		showPassing    bool
		scenarioArg    string
		kubeconfig     string
		kubeContext    string
		cluster        string
		now            string
		addVersions    string
		values         []string
		sets           []string
		noRender       bool
		requestTimeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "check [-f FILE|DIR|-]... [--scenario S] [--target V] [--fail-on SEVERITY] [-o text|wide|json|sarif]",
		Short: "Find what will break or block the next upgrade hop, before it happens",
		Long: `Check reads Kubernetes manifests — files, directories, standard input — or a
scenario, and reports everything that will break or block the upgrade to
--target: APIs the target no longer serves, PodDisruptionBudgets that never
allow an eviction, pods selected by two budgets, Karpenter NodePools and
EC2NodeClasses that will not drift, and the risks that make a hop hurt
(single replicas, no readiness probe, no spread, Immediate EBS binding,
rollouts that go below a budget's floor).
With a cluster (a scenario or a live one) it also checks the
cluster itself: kubelet and kube-proxy skew, node groups that must catch
up before each control-plane hop, add-ons to update, EBS volumes a
replacement group cannot reach, custom-AMI and Amazon Linux 2 node groups,
the EKS support window and its cost — and it predicts each node's drain in
Ladder's twin: the pods that block it, for how long, and the pods that would
go Pending.

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
on. Files that are not manifests (no apiVersion and kind: Chart.yaml,
values, CI files, JSON schemas), unrendered Helm templates and pipes or
devices found in a directory are skipped and counted on the summary line.
A file or standard input may hold at most 64 MiB.

Kustomizations and Helm charts are checked as they deploy: a directory with
a kustomization.yaml is built as "kubectl apply -k" builds it (kustomize's
Go API, offline), a directory with Chart.yaml is rendered as "helm
template" renders it (Helm's Go SDK) with its default values, --values and
--set, and the target as the Kubernetes version its templates see. Each
rendered object is reported at the source file and line it came from;
patches, values and templates are not judged as objects, Helm test hooks
are not workloads, and a chart template that does not render is still
scanned for literal apiVersion/kind pairs. --no-render reads them as plain
files instead.

--scenario reads a scenario's manifests, takes the current version
from it, and builds its starting cluster in the twin for the cluster
checks. --kubeconfig and --context read a live cluster, as does giving no
source at all (the current kubeconfig context). A live cluster's current
version is its API server's, or — with --cluster, or AWS_ENDPOINT_URL_EKS set
(a lab's: eval "$(ladder lab env)") — what EKS's DescribeCluster says, and the
report says so.

--target is the Kubernetes minor to upgrade to: by default the current
version + 1 (from --scenario); required with manifests alone. A target
several minors ahead reports each finding with the hop it breaks.

--additional-versions FILE reads a versions file in pluto's format
(target-versions, deprecated-versions): its rows add API versions, or
override Ladder's for the same apiVersion and kind; rows of another
component than k8s are custom resources removed by that component's
version, and target-versions says which version the cluster runs.

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
			live := kubeconfig != "" || kubeContext != "" || cluster != ""
			if live && scenarioArg != "" {
				return errors.New("--scenario and --kubeconfig/--context/--cluster: check one cluster at a time")
			}

			in := &insights.Input{}
			switch {
			case scenarioArg != "":
				if in, err = scenarioInput(scenarioArg); err != nil {
					return err
				}
			case live || len(files) == 0:
				// A live cluster: the one named, or the current
				// kubeconfig context's when nothing else is given.
				if in, err = liveInput(cmd.Context(), kubeconfig, kubeContext, cluster, requestTimeout); err != nil {
					return err
				}
			}
			// The target first: a chart is rendered for it.
			if in.Target, err = checkTarget(target, in.Current); err != nil {
				return err
			}
			if (len(values) > 0 || len(sets) > 0) && len(files) == 0 {
				return errors.New("--values and --set render Helm charts given with -f DIR; give the chart's directory with -f")
			}
			var skipped insights.SkippedFiles
			if len(files) > 0 {
				opts := insights.ReadOptions{Plain: noRender}
				opts.Helm.ValuesFiles, opts.Helm.Set, opts.Helm.KubeVersion = values, sets, in.Target.String()
				m, err := insights.Read(files, cmd.InOrStdin(), opts)
				if err != nil {
					return err
				}
				in.Add(m.Objects, m.Problems)
				skipped = m.Skipped
			}
			if addVersions != "" {
				if in.APIs, err = additionalVersions(addVersions); err != nil {
					return err
				}
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
			rep.FilesSkipped = skipped
			opts := insights.OutputOptions{ShowPassing: showPassing, Wide: output == "wide"}
			out := cmd.OutOrStdout()
			switch output {
			case "json":
				err = rep.WriteJSON(out, opts)
			case "sarif":
				err = rep.WriteSARIF(out, opts, buildVersion())
			default:
				err = writeText(out, func(w io.Writer) error { return rep.WriteText(w, opts) })
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
	f.StringVar(&scenarioArg, "scenario", "", "built-in scenario name or scenario file: its manifests, its control plane's version as the current one, its starting cluster (twin) for the cluster checks")
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of a live cluster (default: kubectl's loading rules)")
	f.StringVar(&kubeContext, "context", "", "kubeconfig context of a live cluster (default: the current context)")
	f.StringVar(&cluster, "cluster", "", clusterFlagHelp)
	addRequestTimeout(f, &requestTimeout)
	f.StringVar(&now, "now", "", "evaluate budget and support windows at this instant (RFC 3339; default: now)")
	f.StringArrayVar(&values, "values", nil, "values file for the Helm charts found under -f (as helm template --values); repeatable, later files win")
	f.StringArrayVar(&sets, "set", nil, "value for the Helm charts found under -f, e.g. --set replicaCount=3 (as helm template --set); repeatable")
	f.BoolVar(&noRender, "no-render", false, "read kustomizations and Helm charts as plain files instead of building them")
	f.StringVar(&addVersions, "additional-versions", "", "versions file in pluto's format: more API versions (Kubernetes or custom resources), overriding Ladder's rows for the same apiVersion and kind, and in target-versions the component versions the cluster runs")
	_ = f.MarkHidden("now")
	return cmd
}

// additionalVersions reads an --additional-versions file (pluto's
// versions.yaml format) over the shipped API table.
func additionalVersions(path string) (*deprecations.Table, error) {
	// A versions file is a few hundred rows; refuse anything that could
	// not be one rather than read it whole.
	const maxSize = 16 << 20
	if st, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("--additional-versions: %w", err)
	} else if st.Size() > maxSize {
		return nil, fmt.Errorf("--additional-versions %s: %d bytes is not a versions file (at most %d); give pluto's versions.yaml format", path, st.Size(), maxSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--additional-versions: %w", err)
	}
	f, err := deprecations.ParseVersionsFile(path, data)
	if err != nil {
		return nil, fmt.Errorf("--additional-versions %w", err)
	}
	return deprecations.Shipped().WithVersionsFile(f, path), nil
}

// scenarioInput is a scenario's manifests, its control plane's version as
// the current one, its start as the instant, and the facts of its starting
// cluster as the twin builds it, drains predicted (insights.ScenarioCluster).
func scenarioInput(name string) (*insights.Input, error) {
	sc, err := scenario.Resolve(name)
	if err != nil {
		return nil, err
	}
	in, err := scenarioCheckInput(sc)
	if err != nil {
		return nil, fmt.Errorf("--scenario %s: %w", name, err)
	}
	return in, nil
}

// scenarioCheckInput is scenarioInput for a scenario already loaded.
func scenarioCheckInput(sc *scenario.Scenario) (*insights.Input, error) {
	cur, err := kubeversion.Parse(sc.Spec.Cluster.Version)
	if err != nil {
		return nil, fmt.Errorf("spec.cluster.version: %w", err)
	}
	cluster, err := insights.ScenarioCluster(sc)
	if err != nil {
		return nil, err
	}
	// Support windows and budget schedules are judged at the moment of the
	// check (or --now), not at the scenario's virtual start: the question
	// is whether the cluster can be upgraded today.
	in := &insights.Input{Current: cur, Cluster: cluster}
	in.Add(insights.FromManifests(sc.Objects), nil)
	return in, nil
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
	// One minor past the reviewed table is allowed, so a cluster at the
	// newest release has a next hop: k8s.io/api's lifecycle methods
	// (apis_generated.csv) already schedule the removals after it.
	if last := deprecations.MaxCovered.Next(); t.Less(deprecations.MinCovered) || last.Less(t) {
		return t, fmt.Errorf("--target %s: Ladder knows Kubernetes %s to %s", flag, deprecations.MinCovered, last)
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
