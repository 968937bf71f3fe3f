package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/disruption"
	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/termtext"
)

type budgetsOptions struct {
	file       string
	nodes      int
	disrupting int
	at         string
	window     string
	nodepool   string
	output     string
}

func newBudgetsCommand() *cobra.Command {
	var o budgetsOptions
	cmd := &cobra.Command{
		Use:   "budgets -f NODEPOOL.yaml --nodes N",
		Short: "How many nodes Karpenter may disrupt now, per reason",
		Long: `Show how many nodes Karpenter may disrupt in a NodePool, per reason
(Drifted, Empty, Underutilized), from its spec.disruption.budgets, at one
instant and, with --window, every time the numbers change after it. The
numbers come from Karpenter's own code (sigs.k8s.io/karpenter v1.14.1).

How Karpenter reads budgets:
  - A percentage is of the NodePool's nodes and rounds up: 20% of 19 is 4.
  - Each reason gets the smallest active budget that lists it (a budget
    without reasons covers all). A reason no active budget covers is
    unbounded. Omitted budgets mean one budget of 10%.
  - schedule is cron in UTC; the budget is active on [hit, hit+duration):
    "0 9 * * mon-fri" with 8h is active from 09:00 up to, not at, 17:00.
  - If any budget cannot be evaluated (bad cron or nodes), Karpenter fails
    closed: 0 for every reason.
  - --nodes counts the NodePool's initialized nodes, NotReady and deleting
    ones included. --disrupting (NotReady or being deleted, for any reason)
    is subtracted from every reason: ALLOWED = max(budget - disrupting, 0).
  - Expiration (expireAfter) ignores budgets, but an expiring node counts as
    disrupting.

Budgets are validated as the API server and Karpenter read them; an invalid
budget is an error naming its file:line and field. --window takes a Go duration or days:
90m, 24h, 7d, 1d12h (at most 366d).`,
		Example: `  # Business hours: may drifted nodes be replaced on Monday at 10:00 UTC?
  ladder budgets -f nodepool.yaml --nodes 20 --at 2024-01-01T10:00:00Z

  # When do the numbers change over the next week? As JSON, with 1 node already draining.
  ladder budgets -f nodepool.yaml --nodes 20 --disrupting 1 --window 7d -o json

  # A live NodePool, from stdin.
  kubectl get nodepool default -o yaml | ladder budgets -f - --nodes 12`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBudgets(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "filename", "f", "", "manifest holding the NodePool (YAML or JSON, several documents allowed; - for stdin)")
	f.IntVar(&o.nodes, "nodes", 0, "the NodePool's initialized nodes, NotReady and deleting ones included")
	f.IntVar(&o.disrupting, "disrupting", 0, "how many of --nodes are NotReady or being deleted (for any reason, expiry included)")
	f.StringVar(&o.at, "at", "", "instant to evaluate, RFC 3339 (default: now)")
	f.StringVar(&o.window, "window", "", "also list every change in this window after --at: 24h, 7d, 1d12h (at most 366d)")
	f.StringVar(&o.nodepool, "nodepool", "", "name of the NodePool, when the file holds several")
	f.StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	_ = cmd.MarkFlagRequired("filename")
	_ = cmd.MarkFlagRequired("nodes")
	return cmd
}

func runBudgets(cmd *cobra.Command, o budgetsOptions) error {
	if o.nodes < 0 {
		return fmt.Errorf("--nodes %d: must be 0 or more", o.nodes)
	}
	if o.disrupting < 0 || o.disrupting > o.nodes {
		return fmt.Errorf("--disrupting %d: must be between 0 and --nodes (%d): disrupting nodes are counted in --nodes", o.disrupting, o.nodes)
	}
	if o.output != "text" && o.output != "json" {
		return fmt.Errorf("-o %q: use text or json", o.output)
	}
	// The only wall-clock read of the command.
	at := time.Now().UTC().Truncate(time.Second)
	if o.at != "" {
		t, err := time.Parse(time.RFC3339, o.at)
		if err != nil {
			return fmt.Errorf("--at %q: not an RFC 3339 time, e.g. 2024-01-01T09:00:00Z", o.at)
		}
		at = t.UTC()
	}
	var window time.Duration
	if o.window != "" {
		var err error
		if window, err = parseWindow(o.window); err != nil {
			return err
		}
	}

	name, data, err := readManifest(cmd.InOrStdin(), o.file)
	if err != nil {
		return err
	}
	obj, np, err := pickNodePool(name, data, o.nodepool)
	if err != nil {
		return err
	}
	w, err := disruption.WrittenFromManifest(data, np.Name)
	if err != nil {
		w = nil // unknown: default and validate from the decoded object alone
	}
	disruption.DefaultNodePoolAsWritten(np, w)

	// CheckWritten's problems lie outside the budgets, so the numbers still
	// hold: warnings. So are budget warnings; anything else is an error.
	stderr := cmd.ErrOrStderr()
	for _, p := range disruption.CheckWritten(w) {
		termtext.Fprintln(stderr, "warning:", obj.FieldError(p.Field, p.Msg, p.Fix))
	}
	var fatal []error
	for _, p := range disruption.ValidateBudgetsAsWritten(np, w) {
		e := obj.FieldError(p.Field, p.Msg, p.Fix)
		if p.Kind == disruption.Warning {
			termtext.Fprintln(stderr, "warning:", e)
			continue
		}
		fatal = append(fatal, e)
	}
	if len(fatal) > 0 {
		return errors.Join(fatal...)
	}

	allowed, err := disruption.AllowedByReason(np, at, o.nodes)
	if err != nil {
		return err
	}
	var changes []disruption.Change
	if window > 0 {
		if changes, err = disruption.Changes(np, at, window, o.nodes, o.disrupting); err != nil {
			return err
		}
	}
	out := cmd.OutOrStdout()
	if o.output == "json" {
		return printBudgetsJSON(out, np.Name, at, allowed, o.disrupting, window, changes)
	}
	return printBudgetsText(out, np.Name, o.nodes, o.disrupting, at, allowed, window, changes)
}

var daysRE = regexp.MustCompile(`^([0-9]+)d(.*)$`)

// parseWindow reads a Go duration, optionally led by whole days: 7d, 1d12h.
func parseWindow(s string) (time.Duration, error) {
	bad := fmt.Errorf("--window %q: use a duration such as 90m, 24h, 7d or 1d12h", s)
	var d time.Duration
	rest := s
	if m := daysRE.FindStringSubmatch(s); m != nil {
		days, err := strconv.Atoi(m[1])
		if err != nil || days > 366 {
			return 0, fmt.Errorf("--window %q: at most 366d", s)
		}
		d, rest = time.Duration(days)*24*time.Hour, m[2]
	}
	if rest != "" {
		more, err := time.ParseDuration(rest)
		if err != nil {
			return 0, bad
		}
		d += more
	}
	switch {
	case d <= 0:
		return 0, fmt.Errorf("--window %q: must be more than 0", s)
	case d > disruption.MaxWindow:
		return 0, fmt.Errorf("--window %q: at most 366d", s)
	}
	return d, nil
}

func readManifest(stdin io.Reader, file string) (name string, data []byte, err error) {
	if file == "-" {
		data, err = io.ReadAll(stdin)
		if err != nil {
			return "", nil, fmt.Errorf("reading stdin: %w", err)
		}
		return "<stdin>", data, nil
	}
	data, err = os.ReadFile(file)
	if err != nil {
		return "", nil, err
	}
	return file, data, nil
}

// pickNodePool decodes the manifest and returns the NodePool to evaluate (a copy).
func pickNodePool(file string, data []byte, want string) (manifest.Object, *karpv1.NodePool, error) {
	objs, err := manifest.Decode(file, data)
	if err != nil {
		return manifest.Object{}, nil, err
	}
	var found []manifest.Object
	var names []string
	for _, o := range objs {
		if np, ok := o.Object.(*karpv1.NodePool); ok {
			found = append(found, o)
			names = append(names, np.Name)
		}
	}
	switch {
	case len(found) == 0:
		return manifest.Object{}, nil, fmt.Errorf("%s has no NodePool (apiVersion: karpenter.sh/v1, kind: NodePool)", file)
	case want != "":
		for _, o := range found {
			if o.Object.GetName() == want {
				return o, o.Object.(*karpv1.NodePool).DeepCopy(), nil
			}
		}
		return manifest.Object{}, nil, fmt.Errorf("%s has no NodePool %q; it has %s", file, want, strings.Join(names, ", "))
	case len(found) > 1:
		return manifest.Object{}, nil, fmt.Errorf("%s has %d NodePools (%s); choose one with --nodepool", file, len(found), strings.Join(names, ", "))
	}
	return found[0], found[0].Object.(*karpv1.NodePool).DeepCopy(), nil
}

// shown is what ALLOWED says for a reason: nil for unbounded, else what the
// disruption controller may still start, max(allowed - disrupting, 0).
func shown(allowed, disrupting int) *int {
	if allowed == disruption.Unbounded {
		return nil
	}
	v := disruption.Available(allowed, disrupting)
	return &v
}

func cell(v *int) string {
	if v == nil {
		return "unbounded"
	}
	return strconv.Itoa(*v)
}

func printBudgetsText(out io.Writer, name string, nodes, disrupting int, at time.Time, allowed map[karpv1.DisruptionReason]int,
	window time.Duration, changes []disruption.Change) error {
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NODEPOOL\tNODES\tDISRUPTING\tREASON\tALLOWED")
	for _, r := range disruption.Reasons {
		termtext.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", name, nodes, disrupting, r, cell(shown(allowed[r], disrupting)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if window == 0 {
		return nil
	}
	if len(changes) == 0 {
		_, err := fmt.Fprintf(out, "\nNo changes in the %s after %s.\n", window, at.Format(time.RFC3339))
		return err
	}
	fmt.Fprintf(out, "\nChanges in the %s after %s:\n", window, at.Format(time.RFC3339))
	tw = tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	header := []string{"TIME"}
	for _, r := range disruption.Reasons {
		header = append(header, strings.ToUpper(string(r)))
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, c := range changes {
		row := []string{c.At.UTC().Format(time.RFC3339)}
		for _, r := range disruption.Reasons {
			row = append(row, cell(shown(c.Allowed[r], disrupting)))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// budgetsJSON fixes the key order of -o json.
type budgetsJSON struct {
	NodePool string          `json:"nodepool"`
	At       string          `json:"at"`
	Allowed  allowedJSON     `json:"allowed"`
	Window   string          `json:"window,omitempty"`
	Changes  *[]budgetChange `json:"changes,omitempty"`
}

type budgetChange struct {
	At      string      `json:"at"`
	Allowed allowedJSON `json:"allowed"`
}

// allowedJSON holds one value per reason; null means unbounded.
type allowedJSON struct {
	Drifted       *int `json:"Drifted"`
	Empty         *int `json:"Empty"`
	Underutilized *int `json:"Underutilized"`
}

func toAllowedJSON(allowed map[karpv1.DisruptionReason]int, disrupting int) allowedJSON {
	return allowedJSON{
		Drifted:       shown(allowed[karpv1.DisruptionReasonDrifted], disrupting),
		Empty:         shown(allowed[karpv1.DisruptionReasonEmpty], disrupting),
		Underutilized: shown(allowed[karpv1.DisruptionReasonUnderutilized], disrupting),
	}
}

func printBudgetsJSON(out io.Writer, name string, at time.Time, allowed map[karpv1.DisruptionReason]int, disrupting int,
	window time.Duration, changes []disruption.Change) error {
	v := budgetsJSON{NodePool: name, At: at.Format(time.RFC3339), Allowed: toAllowedJSON(allowed, disrupting)}
	if window > 0 {
		v.Window = window.String()
		list := make([]budgetChange, 0, len(changes))
		for _, c := range changes {
			list = append(list, budgetChange{At: c.At.UTC().Format(time.RFC3339), Allowed: toAllowedJSON(c.Allowed, disrupting)})
		}
		v.Changes = &list
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = out.Write(append(b, '\n'))
	return err
}
