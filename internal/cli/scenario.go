package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/outfile"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// scenarioFormat is the short description of the scenario format that the
// scenario commands' help shares; docs/scenario.md is the full reference.
const scenarioFormat = `A scenario is one YAML document (apiVersion: ladder.dev/v1alpha1,
kind: Scenario) describing a cluster and a script to play on it:

  metadata.name        the scenario's name (and an optional description)
  spec.start           virtual start, RFC 3339 in UTC: "2026-03-30T10:00:00Z"
  spec.seed            default random seed (--seed overrides it)
  spec.timeLimit       virtual-time limit, e.g. 2h (default 6h)
  spec.cluster         name, version ("1.31"), region and zones
  spec.nodeGroups[]    name, type (karpenter, managed, self-managed, fargate)
                       and the matching block; a karpenter group names its
                       NodePool and the nodes it already has:
                         karpenter: {nodePool: default, nodes: [{instanceType:
                         m6i.large, zone: us-west-2a, capacityType: spot}]}
  spec.manifests[]     your Kubernetes and Karpenter manifests, exactly as you
                       would kubectl apply them: {file: path relative to the
                       scenario} or {inline: YAML}
  spec.actions[]       the script, run in order, each at or after its "at":
                       scale, apply, patch, upgradeControlPlane, wait
  spec.instanceTypes[], spec.amis[], spec.timings
                       catalog additions and latency overrides

Every field is read strictly: a misspelled field is an error, as the API
server's strict field validation makes it. The full reference is
docs/scenario.md.`

func newScenarioCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scenario",
		Short: "Validate, generate, list and show scenario files",
		Long: `Work with scenarios, the input of "ladder rehearse".

` + scenarioFormat + `

The quickest way to write one is to start from a built-in scenario:

  ladder scenario show karpenter-drift --to ./my-cluster
  $EDITOR ./my-cluster/scenario.yaml ./my-cluster/manifests/*.yaml
  ladder scenario validate ./my-cluster/scenario.yaml
  ladder rehearse --scenario ./my-cluster/scenario.yaml`,
		Example: `  # Check a scenario before rehearsing it
  ladder scenario validate ./my-cluster/scenario.yaml

  # A synthetic 300-node cluster for a scale test
  ladder scenario generate --nodes 300 --pods-per-node 20 --seed 1 -o big.yaml

  # The built-in scenarios, and one of them with its manifests
  ladder scenario list
  ladder scenario show karpenter-drift`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q for \"ladder scenario\" (use validate, generate, list, show or instance-types; see ladder scenario --help)", args[0])
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(
		newScenarioValidateCommand(),
		newScenarioGenerateCommand(),
		newScenarioListCommand(),
		newScenarioShowCommand(),
		newScenarioInstanceTypesCommand(),
	)
	return cmd
}

// oneScenarioArg accepts exactly one scenario, a file or a built-in name.
func oneScenarioArg(what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return fmt.Errorf("%s needs a scenario: a file or a built-in name (%s)", what, builtinList())
		case len(args) > 1:
			return fmt.Errorf("%s takes one scenario, got %d: %s", what, len(args), strings.Join(args, " "))
		}
		return nil
	}
}

// ---- validate ----

func newScenarioValidateCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "validate FILE|NAME [-o text|json]",
		Short: "Check a scenario and its manifests without rehearsing it",
		Long: `Validate reads a scenario — a file, or a built-in scenario by name — and the
manifests it names, and checks everything a rehearsal relies on, before it
runs:

  - the YAML, strictly: unknown and duplicate fields are errors, in the
    scenario and in every manifest (as kubectl apply --validate=strict);
  - versions against the embedded EKS release calendar, and control-plane
    updates one minor version at a time (1.30 → 1.31, never → 1.32);
  - instance types, zones and AMI ids against the catalogs and the cluster;
  - NodePools as the API server and Karpenter read them (budgets' cron
    schedules and durations, nodeClassRef to an EC2NodeClass that exists),
    EC2NodeClass AMI selectors, PodDisruptionBudgets, selectors, namespaces
    and PersistentVolumeClaims that some manifest must create;
  - actions: each sets exactly one verb and targets an object the scenario
    has.

Every problem is reported, not just the first, one line each, naming the
file and line, the object, the field and the fix. Warnings (a NodePool no
node group reports, a budget that is never active) go to stderr and do not
fail.

Kinds the twin does not model (Service, ConfigMap, ...) are parsed and
counted as ignored; they do not change a rehearsal.

Exit status: 0 valid, 1 invalid or unreadable.

` + scenarioFormat,
		Example: `  # A scenario file; manifests are read relative to it
  ladder scenario validate ./my-cluster/scenario.yaml

  # A built-in scenario
  ladder scenario validate karpenter-drift

  # For CI: a JSON verdict with every error and warning
  ladder scenario validate ./my-cluster/scenario.yaml -o json`,
		Args: oneScenarioArg("ladder scenario validate"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runScenarioValidate(cmd, args[0], output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

// validateJSON is the -o json verdict; the lists are never null.
type validateJSON struct {
	Scenario string   `json:"scenario"`
	Valid    bool     `json:"valid"`
	Errors   []string `json:"errors"`
	Warnings []string `json:"warnings"`
}

func runScenarioValidate(cmd *cobra.Command, name, output string) error {
	if output != "text" && output != "json" {
		return fmt.Errorf("-o %q: use text or json", output)
	}
	sc, err := scenario.Resolve(name)
	var warnings []string
	if err == nil {
		warnings, err = sc.Validate()
	}
	out, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if output == "json" {
		v := validateJSON{Scenario: name, Valid: err == nil, Errors: errorLines(err), Warnings: warnings}
		if v.Warnings == nil {
			v.Warnings = []string{}
		}
		if werr := writeJSON(out, v); werr != nil {
			return werr
		}
		if err != nil {
			return withExit(1, fmt.Errorf("scenario %s is not valid: %d error(s)", name, len(v.Errors)))
		}
		return nil
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "scenario %s is valid: %d node group(s), %s, %d action(s)\n",
		name, len(sc.Spec.NodeGroups), manifestSummary(sc), len(sc.Spec.Actions))
	return err
}

// errorLines splits a joined error into its lines; never nil.
func errorLines(err error) []string {
	out := []string{}
	if err == nil {
		return out
	}
	for _, l := range strings.Split(err.Error(), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// manifestSummary is "12 manifest(s) (2 ignored: Service×2)".
func manifestSummary(sc *scenario.Scenario) string {
	ignored := 0
	kinds := make([]string, 0, len(sc.Ignored))
	for kind, n := range sc.Ignored {
		ignored += n
		kinds = append(kinds, kind)
	}
	s := fmt.Sprintf("%d manifest(s)", len(sc.Objects)+ignored)
	if ignored == 0 {
		return s
	}
	sort.Strings(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s×%d", k, sc.Ignored[k])
	}
	return fmt.Sprintf("%s (%d ignored: %s)", s, ignored, strings.Join(parts, ", "))
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ---- generate ----

type generateOptions struct {
	scenario.GenerateOptions
	output string
}

// budgetRE is the pattern Karpenter's CRD gives a budget's nodes.
var budgetRE = regexp.MustCompile(`^((100|[0-9]{1,2})%|[0-9]+)$`)

func newScenarioGenerateCommand() *cobra.Command {
	var o generateOptions
	cmd := &cobra.Command{
		Use:   "generate --nodes N --pods-per-node K [--seed S] [--mix] [-o FILE]",
		Short: "Write a synthetic scenario of any size, for scale tests",
		Long: `Generate writes a synthetic scenario: --nodes Karpenter nodes of one
instance type, spread evenly over three zones of us-west-2, filled with
--pods-per-node application pods each (Deployments of 20 replicas sized to
fill about 80% of a node, each with a PodDisruptionBudget of
maxUnavailable: 25%), and the aws-node, kube-proxy and ebs-csi-node
DaemonSets every EKS node runs.

The nodes start one minor version behind the control plane (--version) on
that version's AL2023 AMI. Unless --no-drift, the script then points the
EC2NodeClass at the new version's AMI, so every node drifts and Karpenter
replaces them under the NodePool's Drifted budget (--budget), and waits for
the cluster to settle.

With --mix the cluster mixes every node-group type EKS has, as the
workshop scenario does, and is upgraded by the whole-cluster playbook
(spec.upgrade.to: --version) instead of a drift action. The control plane
and every node start one minor behind --version; the --nodes EC2 nodes are
shared out:

  ~45%  Karpenter NodePool "default" (the remainder); its EC2NodeClass
        selects al2023@latest, so the nodes drift when the control plane
        is upgraded, under the --budget budget for Drifted
   30%  managed node groups managed-1, ... updated in place, 10% of the
        nodes at a time
   10%  custom-AMI managed groups custom-ami-1, ... (an image id in the
        launch template; the upgrade writes the new AMI into it)
   15%  self-managed ASG "self-managed": instance refresh (min healthy
        90%, max 110%) with a termination lifecycle hook that drains nodes

Managed groups hold at most 450 nodes each (the EKS quota), so larger
shares become several groups. On top come a Fargate profile for namespace
serverless with 5% as many pods as the EC2 nodes carry (at least 1, at most
200; each pod is a node of its own and not counted in --nodes), and the
vpc-cni, coredns, kube-proxy and aws-ebs-csi-driver add-ons (spec.addons,
versions from the embedded table) with their kube-system workloads; the
DaemonSets' node affinity (eks.amazonaws.com/compute-type NotIn [fargate])
keeps them off Fargate. Each group's Deployments pin their pods to it by
nodeSelector. --mix needs --nodes 10 or more and excludes --no-drift.

The same flags give byte-identical output; --seed changes node ages and,
in the rehearsal, names, zones and tie-breaks. The result is an ordinary
scenario file: validate it, edit it, rehearse it.`,
		Example: `  # 30 nodes, 600 pods, to stdout
  ladder scenario generate --nodes 30 --pods-per-node 20

  # A 1000-node cluster on m5.2xlarge, drifting 5% at a time, to a file
  ladder scenario generate --nodes 1000 --pods-per-node 40 --seed 3 \
      --instance-type m5.2xlarge --budget 5% -o big.yaml
  ladder rehearse --scenario big.yaml

  # The same cluster at rest: no drift, nothing to do
  ladder scenario generate --nodes 1000 --pods-per-node 40 --no-drift

  # 5000 EC2 nodes of every kind (100,000 pods) and 200 Fargate pods,
  # upgraded from 1.30 to 1.31 by the playbook
  ladder scenario generate --nodes 5000 --pods-per-node 20 --mix -o mix.yaml
  ladder scenario validate mix.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runScenarioGenerate(cmd, o) },
	}
	f := cmd.Flags()
	f.IntVar(&o.Nodes, "nodes", 0, "Karpenter nodes at the start (1 to 5000); with --mix, EC2 nodes of every kind (10 to 5000); at most 149,000 pods in all")
	f.IntVar(&o.PodsPerNode, "pods-per-node", 0, "application pods per node (1 to 200, within the instance type's max pods)")
	f.Uint64Var(&o.Seed, "seed", 1, "random seed, also the scenario's spec.seed")
	f.StringVar(&o.Version, "version", "1.31", "the control plane's Kubernetes minor; the nodes start one minor behind")
	f.StringVar(&o.InstanceType, "instance-type", "m5.xlarge", "instance type of the nodes (see ladder scenario instance-types)")
	f.StringVar(&o.Budget, "budget", "10%", `the NodePool's Drifted budget: a node count ("5") or a percentage ("10%")`)
	f.IntVar(&o.Namespaces, "namespaces", 0, "namespaces to spread the workloads over (default: one per 50 Deployments)")
	f.BoolVar(&o.NoDrift, "no-drift", false, "leave out the AMI switch: the cluster only starts and settles")
	f.BoolVar(&o.Mix, "mix", false, "mix every node type (Karpenter, managed, custom-AMI managed, self-managed, Fargate) with the EKS add-ons, upgraded by the playbook to --version")
	f.StringVarP(&o.output, "output", "o", "-", "file to write (- for stdout)")
	_ = cmd.MarkFlagRequired("nodes")
	_ = cmd.MarkFlagRequired("pods-per-node")
	return cmd
}

func runScenarioGenerate(cmd *cobra.Command, o generateOptions) error {
	if !budgetRE.MatchString(o.Budget) {
		return fmt.Errorf(`--budget %q: use a node count such as "5" or a percentage from "0%%" to "100%%"`, o.Budget)
	}
	if o.Namespaces < 0 {
		return fmt.Errorf("--namespaces %d: must be 0 (one per 50 Deployments) or more", o.Namespaces)
	}
	if err := checkGenerateVersion(o.Version); err != nil {
		return err
	}
	if _, ok := catalog.LookupInstanceType(o.InstanceType); !ok {
		return fmt.Errorf("--instance-type %q is not in the catalog (list them with: ladder scenario instance-types)", o.InstanceType)
	}
	if o.output == "" {
		o.output = "-"
	}
	// Before generating, which may take a while: only a new or a regular
	// file is written (internal/outfile).
	out := outfile.File{Name: "-o", Path: o.output, Stdout: cmd.OutOrStdout()}
	if err := out.Check(); err != nil {
		return err
	}
	data, err := scenario.Generate(o.GenerateOptions)
	if err != nil {
		return err
	}
	if err := out.Write(data); err != nil || out.IsStdout() {
		return err
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (check it with: ladder scenario validate %s)\n", o.output, o.output)
	return err
}

// checkGenerateVersion accepts a target minor for which the catalog has
// AL2023 AMIs both for it and for the minor before it, where the generated
// nodes start.
func checkGenerateVersion(version string) error {
	targets := generateTargets()
	if minor, ok := catalog.NormalizeMinor(version); ok {
		for _, t := range targets {
			if t == minor {
				return nil
			}
		}
	}
	return fmt.Errorf("--version %q: use a Kubernetes minor that has an AL2023 AMI, as does the minor before it (%s)", version, strings.Join(targets, ", "))
}

// generateTargets lists the minors scenario.Generate can drift to.
func generateTargets() []string {
	hasAMI := func(minor string) bool {
		_, err := catalog.ResolveAlias("al2023@latest", minor, catalog.ArchX8664, time.Time{})
		return err == nil
	}
	var out []string
	known := scenario.KnownVersions()
	for i := 1; i < len(known); i++ {
		if hasAMI(known[i-1]) && hasAMI(known[i]) {
			out = append(out, known[i])
		}
	}
	return out
}

// ---- list ----

func newScenarioListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the built-in scenarios",
		Long: `List the scenarios built into Ladder, with their descriptions. Rehearse one
with "ladder rehearse --scenario NAME"; print it, and the manifests it
uses, with "ladder scenario show NAME".`,
		Example: `  ladder scenario list
  ladder scenario show karpenter-drift`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 8, 3, ' ', 0)
			fmt.Fprintln(tw, "NAME\tDESCRIPTION")
			for _, name := range scenario.Builtins() {
				sc, err := scenario.LoadBuiltin(name)
				if err != nil {
					return err
				}
				desc := sc.Metadata.Description
				if desc == "" {
					desc = "<none>"
				}
				fmt.Fprintf(tw, "%s\t%s\n", name, desc)
			}
			return tw.Flush()
		},
	}
}

// ---- show ----

func newScenarioShowCommand() *cobra.Command {
	var to string
	cmd := &cobra.Command{
		Use:   "show NAME [--to DIR]",
		Short: "Print a built-in scenario and its manifests, to copy and edit",
		Long: `Show prints a built-in scenario's YAML and then each manifest file it
references, each file preceded by a "# file: PATH" comment line (PATH is
relative to the scenario, as its spec.manifests name it).

With --to DIR it writes the same files into DIR instead (DIR/scenario.yaml,
DIR/manifests/...), ready to edit and rehearse; it never overwrites a file.`,
		Example: `  # Read the default scenario
  ladder scenario show karpenter-drift

  # Make it yours
  ladder scenario show karpenter-drift --to ./my-cluster
  ladder rehearse --scenario ./my-cluster/scenario.yaml`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("ladder scenario show takes one built-in scenario name (%s)", builtinList())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			files, notes, err := builtinFiles(args[0])
			if err != nil {
				return err
			}
			if to != "" {
				return writeFiles(cmd.OutOrStdout(), cmd.ErrOrStderr(), to, files, notes)
			}
			var b bytes.Buffer
			for _, n := range notes {
				fmt.Fprintf(&b, "# note: %s\n", n)
			}
			for i, f := range files {
				if i > 0 {
					b.WriteString("\n")
				}
				fmt.Fprintf(&b, "# file: %s\n", f.path)
				b.Write(f.data)
			}
			_, err = cmd.OutOrStdout().Write(b.Bytes())
			return err
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "write the files into this directory instead of printing them")
	return cmd
}

// sourceFile is one file of a built-in scenario, by its path relative to
// the scenario.
type sourceFile struct {
	path string
	data []byte
}

// builtinFiles returns a built-in scenario's files: scenario.yaml, then each
// manifest file it references, in the order it references them.
//
// The scenario package exposes only scenario.yaml, so each manifest file is
// rebuilt from the documents the decoder kept: every document of a kind the
// twin models, comments included, in file order. Documents of kinds the twin
// ignores are not kept; notes say so.
func builtinFiles(name string) ([]sourceFile, []string, error) {
	src, err := scenario.BuiltinSource(name)
	if err != nil {
		return nil, nil, err
	}
	sc, err := scenario.LoadBuiltin(name)
	if err != nil {
		return nil, nil, err
	}
	files := []sourceFile{{path: "scenario.yaml", data: src}}

	var refs []string
	seen := map[string]bool{}
	ref := func(s *scenario.Source) {
		if s != nil && s.File != "" && !seen[path.Clean(s.File)] {
			seen[path.Clean(s.File)] = true
			refs = append(refs, path.Clean(s.File))
		}
	}
	for i := range sc.Spec.Manifests {
		ref(&sc.Spec.Manifests[i])
	}
	for _, a := range sc.Spec.Actions {
		ref(a.Apply)
	}

	for _, r := range refs {
		data, err := scenario.BuiltinFile(name, r)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, sourceFile{path: r, data: data})
	}
	return files, nil, nil
}

// writeFiles writes files under dir, refusing to overwrite, to leave it,
// or to write through a link found in it (internal/outfile).
func writeFiles(stdout, stderr io.Writer, dir string, files []sourceFile, notes []string) error {
	if err := outfile.CheckDir("--to", dir); err != nil {
		return err
	}
	for _, f := range files {
		if !filepath.IsLocal(filepath.FromSlash(f.path)) {
			return fmt.Errorf("%s: not a path inside --to %s", f.path, dir)
		}
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("--to %s: %s already exists (choose a new or empty directory; show never overwrites)", dir, p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("--to %s: %v", dir, err)
		}
	}
	d, err := outfile.OpenDir("--to", dir)
	if err != nil {
		return err
	}
	defer d.Close()
	for _, f := range files {
		if err := d.Create(f.path, f.data); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", d.Join(f.path))
	}
	for _, n := range notes {
		fmt.Fprintln(stderr, "note:", n)
	}
	return nil
}

// ---- instance-types ----

func newScenarioInstanceTypesCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "instance-types [FAMILY|TYPE...] [-o text|json]",
		Short: "List the EC2 instance types the twin knows",
		Long: `List the embedded EC2 instance-type catalog the twin launches nodes from and
checks scenarios against: vCPUs, memory, the EKS ENI-based max pods, and
us-west-2 Linux prices in USD per hour (spot is a dated estimate).

Arguments filter by family (m5, c7g) or exact type (m5.large). A type the
catalog lacks can be added to a scenario under spec.instanceTypes.`,
		Example: `  ladder scenario instance-types m5 m6i
  ladder scenario instance-types m5.large -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return fmt.Errorf("-o %q: use text or json", output)
			}
			var list []catalog.InstanceType
			for _, it := range catalog.InstanceTypes() {
				if matchesType(it, args) {
					list = append(list, it)
				}
			}
			if len(list) == 0 {
				return fmt.Errorf("no catalogued instance type matches %s (filter by family, e.g. m5, or by type, e.g. m5.large)", strings.Join(args, " "))
			}
			out := cmd.OutOrStdout()
			if output == "json" {
				type row struct {
					Name          string  `json:"name"`
					Arch          string  `json:"arch"`
					VCPU          int     `json:"vcpu"`
					MemoryMiB     int64   `json:"memoryMiB"`
					MaxPods       int     `json:"maxPods"`
					OnDemandPrice float64 `json:"onDemandPrice"`
					SpotPrice     float64 `json:"spotPrice"`
				}
				rows := make([]row, len(list))
				for i, it := range list {
					rows[i] = row{it.Name, it.Arch, it.VCPU, it.MemoryMiB, it.MaxPods, it.OnDemandPrice, it.SpotPrice}
				}
				return writeJSON(out, rows)
			}
			tw := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
			fmt.Fprintln(tw, "NAME\tARCH\tVCPU\tMEMORY\tMAX-PODS\tON-DEMAND\tSPOT")
			for _, it := range list {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%dMi\t%d\t$%.4f\t$%.4f\n", it.Name, it.Arch, it.VCPU, it.MemoryMiB, it.MaxPods, it.OnDemandPrice, it.SpotPrice)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

func matchesType(it catalog.InstanceType, filters []string) bool {
	if len(filters) == 0 {
		return true
	}
	for _, f := range filters {
		if it.Name == f || it.Family == f {
			return true
		}
	}
	return false
}
