package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/awsport/sdkaws"
	"github.com/ladder-eks/ladder/internal/capture"
	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/executor"
	"github.com/ladder-eks/ladder/internal/htmlreport"
	"github.com/ladder-eks/ladder/internal/journal"
	"github.com/ladder-eks/ladder/internal/kubeport/live"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/plan"
	"github.com/ladder-eks/ladder/internal/probe"
	"github.com/ladder-eks/ladder/internal/progress"
	"github.com/ladder-eks/ladder/internal/rehearse"
	"github.com/ladder-eks/ladder/internal/rules/controlplane"
	"github.com/ladder-eks/ladder/internal/rules/window"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/termtext"
)

func newUpgradeCommand() *cobra.Command {
	var f upgradeFlags
	cmd := &cobra.Command{
		Use:   "upgrade [--to V] [--approve] [--journal FILE] [--kubeconfig K] [--context C] [--cluster NAME] [--region R]",
		Short: "Upgrade a live EKS cluster one minor at a time (a dry run unless --approve)",
		Long: `Upgrade carries out the playbook on a live EKS cluster: hop by hop (one minor
each), the pre-checks, the control plane (UpdateClusterVersion), each add-on
(UpdateAddon), then each node group by its mechanism — managed in place
(UpdateNodegroupVersion) or blue/green (CreateNodegroup, then DeleteNodegroup),
Karpenter drift (the EC2NodeClass's AMI), self-managed instance refresh
(a launch template version, StartInstanceRefresh), Fargate (rollout restart) —
waiting on each AWS update and for the nodes and pods to settle before the next
step. It is the executor "ladder rehearse" runs on the twin, on the real APIs.

Without --approve nothing is changed: the cluster is read as "ladder capture"
reads it, its upgrade rehearsed, and the runbook printed ("ladder plan").

With --approve every step is written to a journal before and after it acts —
the ConfigMap kube-system/ladder-upgrade, guarded by the Lease of that name so
that two upgrades of one cluster never run at once (or --journal FILE). A run
that stops — a refused update, a drain that blocks, Ctrl-C, kill -9 — is
resumed by running the same command again: steps done are skipped, an AWS
update in flight is waited on by its id, and no disruption is made twice.
"ladder upgrade status" shows the journal.

Credentials and region come only from the AWS SDK's default chain (never
printed); the cluster is the kubeconfig's context (docs/upgrade.md: the IAM
actions and the Kubernetes RBAC it needs).`,
		Example: `  # What would happen: the runbook, nothing changed
  ladder upgrade --to 1.31

  # Do it; run the same command again to resume after a stop
  ladder upgrade --to 1.31 --approve

  # Pause before the next step when the shop stops answering (the seed's curl loop)
  ladder upgrade --to 1.31 --approve --probe-url http://shop.example.com/

  # Only at night, Seoul time: each step waits for the window
  ladder upgrade --to 1.31 --approve --window "Mon-Fri 22:00-06:00 Asia/Seoul"

  # Where a run stopped
  ladder upgrade status`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runUpgrade(cmd, f) },
	}
	fl := cmd.Flags()
	f.register(cmd)
	fl.StringVar(&f.to, "to", "", "target Kubernetes minor (default: the next one)")
	fl.BoolVar(&f.approve, "approve", false, "carry the upgrade out (default: a dry run that prints the runbook)")
	fl.DurationVar(&f.timeout, "timeout", 12*time.Hour, "give up waiting after this long (the journal keeps the place)")
	fl.StringVar(&f.probeURL, "probe-url", "", "request this URL every second during the upgrade; 5 failures in a row pause it before the next step")
	fl.StringVar(&f.window, "window", "", `hold every step but the pre-checks until this maintenance window is open, e.g. "Mon-Fri 22:00-06:00 Asia/Seoul"`)
	fl.StringVar(&f.htmlFile, "report", "", "when the run ends (done or paused), write the upgrade as a self-contained HTML file: its steps over time and, once done, its comparison with the rehearsal")
	addStrategyFlag(fl, &f.strategy)
	cmd.AddCommand(newUpgradeStatusCommand())
	return cmd
}

// upgradeFlags are the flags of upgrade and its status.
type upgradeFlags struct {
	liveTarget
	journal, to, window, probeURL, htmlFile, strategy string
	approve                                           bool
	timeout                                           time.Duration
}

func (f *upgradeFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	f.liveTarget.register(fl)
	fl.StringVar(&f.journal, "journal", "", "keep the journal in this local file instead of the ConfigMap kube-system/ladder-upgrade")
}

// liveCluster is a kubeconfig context's cluster and its EKS account.
type liveCluster struct {
	name string
	cs   kubernetes.Interface
	dyn  dynamic.Interface
	aws  capture.Source
}

func openLive(ctx context.Context, t liveTarget) (*liveCluster, error) {
	cluster := t.cluster
	kt, err := liveConfig(t.kubeconfig, t.kubeContext, t.requestTimeout, "")
	if err != nil {
		return nil, err
	}
	cfg, entry := kt.cfg, kt.entry
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ports, region, err := sdkaws.New(ctx, t.region)
	if err != nil {
		return nil, err
	}
	if cluster == "" {
		cluster, _ = eksClusterFromKubeconfig(entry)
	}
	if cluster == "" {
		lister, ok := ports.EKS.(awsport.ClusterLister)
		if !ok {
			return nil, fmt.Errorf("no EKS cluster name: pass --cluster NAME")
		}
		if cluster, err = onlyCluster(ctx, lister, eksWhere(region)); err != nil {
			return nil, err
		}
	}
	return &liveCluster{name: cluster, cs: cs, dyn: dyn, aws: capture.Source{Kube: cs, Dynamic: dyn, AWS: ports, Cluster: cluster}}, nil
}

func runUpgrade(cmd *cobra.Command, f upgradeFlags) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Before the cluster is read: a page that cannot be written should
	// not cost a capture, let alone an upgrade.
	if err := checkReportDir(f.htmlFile); err != nil {
		return err
	}
	lc, err := openLive(ctx, f.liveTarget)
	if err != nil {
		return err
	}
	sc, err := captureScenario(ctx, lc)
	if err != nil {
		return err
	}
	if err := applyStrategy(sc, f.strategy); err != nil {
		return err
	}
	cur, err := kubeversion.Parse(sc.Spec.Cluster.Version)
	if err != nil {
		return fmt.Errorf("DescribeCluster: version %q: %w", sc.Spec.Cluster.Version, err)
	}
	to := cur.Next()
	if f.to != "" {
		if to, err = kubeversion.Parse(f.to); err != nil {
			return fmt.Errorf("--to: %w", err)
		}
	}
	if err := offerAddonVersions(ctx, lc.aws.AWS.EKS, sc, to); err != nil {
		return err
	}
	if f.probeURL != "" {
		if u, err := url.Parse(f.probeURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--probe-url %q: give an http:// or https:// URL, e.g. http://ui.example.com/", f.probeURL)
		}
	}
	var win *window.Window
	if f.window != "" {
		if win, err = window.Parse(f.window); err != nil {
			return fmt.Errorf("--window: %w", err)
		}
	}
	rep, err := progressOf(cmd)
	if err != nil {
		return err
	}
	out := rep.Writer(cmd.OutOrStdout())
	if f.htmlFile == "-" {
		// Standard output holds the page alone.
		out = rep.Writer(cmd.ErrOrStderr())
	}
	if !f.approve {
		if err := writeRunbook(out, sc, "live cluster "+lc.name, to.String(), time.Now().UTC(), "markdown"); err != nil {
			return err
		}
		fmt.Fprintf(out, "\nDry run: nothing was changed. To carry it out: ladder upgrade --to %s --approve\n", to)
		return nil
	}
	j, closeJournal, err := openJournal(ctx, lc, f.journal, to.String())
	if err != nil {
		return err
	}
	defer closeJournal()
	if err := keepRehearsal(j, sc, to.String()); err != nil {
		// The time left is a courtesy of "ladder upgrade status": not a
		// reason to hold the upgrade.
		termtext.Fprintf(cmd.ErrOrStderr(), "warning: %v; ladder upgrade status will show no time left\n", err)
	}
	// A resumed upgrade carries out the plan it began with: the control
	// plane may be at the target already, an add-on updated whose step
	// is not recorded done.
	p, resumed := j.Plan()
	if !resumed {
		if p, err = plan.Make(planInventory(sc), to, upgradeOrder(sc)); err != nil {
			return err
		}
		if err := j.Begin(p); err != nil {
			return err
		}
	}
	// The executor's waits poll; the port's drain prints what kubectl
	// drain prints.
	port := live.New(lc.cs, live.Options{Dynamic: lc.dyn, PollInterval: 5 * time.Second, Out: out, ErrOut: rep.Writer(cmd.ErrOrStderr())})
	log := &upgradeLog{out: out, rep: rep}
	if b, ok := j.(interface{ Beat(string, time.Time) error }); ok {
		log.beat = b.Beat
	}
	ex := &executor.Executor{
		Cluster: lc.name,
		Ports: executor.Ports{Kube: port, EKS: lc.aws.AWS.EKS, AutoScaling: lc.aws.AWS.AutoScaling,
			LaunchTemplates: lc.aws.AWS.LaunchTemplates, Parameters: lc.aws.AWS.Parameters, Images: lc.aws.AWS.Images},
		Observer:     log,
		Groups:       executor.ScenarioGroups(sc, nil),
		AMIs:         scenarioAMIs{sc},
		Precondition: controlplane.Strict,
		Deadline:     time.Now().Add(f.timeout),
		Journal:      reportingJournal{Journal: j, rep: rep},
	}
	log.nodes = func(ctx context.Context, h plan.Hop, st plan.Step) (int, int, error) {
		all, err := port.ListNodes(ctx)
		if err != nil {
			return 0, 0, err
		}
		nodes := ex.GroupNodes(all, st)
		return executor.AtMinor(nodes, h.To), len(nodes), nil
	}
	if win != nil {
		ex.Window = win
	}
	if f.probeURL != "" {
		pr := &probe.Probe{URL: f.probeURL}
		probeCtx, stopProbe := context.WithCancel(ctx)
		defer stopProbe()
		go pr.Run(probeCtx)
		ex.Healthy = pr.Healthy
	}
	if err := ex.Run(ctx, p); err != nil {
		if rerr := upgradeReport(f.htmlFile, cmd.OutOrStdout(), j, journalWhere(f.journal)); rerr != nil {
			termtext.Fprintf(cmd.ErrOrStderr(), "warning: %v\n", rerr)
		}
		return withExit(2, fmt.Errorf("upgrade paused: %v (fix it, then run ladder upgrade --to %s --approve again: the journal resumes where it stopped)", err, to))
	}
	termtext.Fprintf(out, "%s  upgrade of %s to %s done\n", stamp(), lc.name, to)
	if err := recordOutcome(ctx, lc, j); err != nil {
		// The upgrade is done; only its comparison with the rehearsal
		// is missing.
		termtext.Fprintf(cmd.ErrOrStderr(), "warning: %v; ladder upgrade status --compare will have no end state\n", err)
	}
	if k, ok := j.(interface{ Record() *journal.Record }); ok {
		if c, err := k.Record().Compare(); err == nil {
			termtext.Fprintf(out, "%s  %s (ladder upgrade status --compare)\n", stamp(), c.Verdict())
		}
	}
	return upgradeReport(f.htmlFile, cmd.OutOrStdout(), j, journalWhere(f.journal))
}

// journalWhere names the journal as status does.
func journalWhere(file string) string {
	if file != "" {
		return file
	}
	return "configmap " + journal.Namespace + "/" + journal.Name
}

// upgradeReport writes the upgrade's page from its journal, when asked.
func upgradeReport(htmlFile string, stdout io.Writer, j executor.Journal, where string) error {
	k, ok := j.(interface{ Record() *journal.Record })
	if htmlFile == "" || !ok {
		return nil
	}
	return writeUpgradeReport(htmlFile, stdout, k.Record(), where, time.Now())
}

// writeUpgradeReport writes the upgrade's page, to stdout for "-".
func writeUpgradeReport(htmlFile string, stdout io.Writer, rec *journal.Record, where string, now time.Time) error {
	var buf bytes.Buffer
	if err := htmlreport.WriteUpgrade(&buf, rec, where, now); err != nil {
		return fmt.Errorf("--report %s: %v", htmlFile, err)
	}
	return writePage(htmlFile, stdout, buf.Bytes())
}

// captureScenario reads the live cluster into a scenario, through a
// temporary directory as `ladder capture` writes one.
func captureScenario(ctx context.Context, lc *liveCluster) (*scenario.Scenario, error) {
	ctx, cancel := context.WithTimeout(ctx, captureTimeout)
	defer cancel()
	src := lc.aws
	src.Now = time.Now()
	c, err := capture.Read(ctx, src)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ladder-upgrade-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := c.Write(dir); err != nil {
		return nil, err
	}
	return scenario.LoadFile(dir + "/" + capture.ScenarioFile)
}

// upgradeJournal is the executor's journal, which keeps the plan the
// upgrade began with.
type upgradeJournal interface {
	executor.Journal
	Plan() (plan.Plan, bool)
	Begin(plan.Plan) error
}

// openJournal takes the cluster's Lease and opens the local journal file
// or the ConfigMap journal.
func openJournal(ctx context.Context, lc *liveCluster, file, to string) (upgradeJournal, func(), error) {
	if file != "" {
		// The Lease guards the cluster wherever its journal is.
		l, err := journal.HoldLease(ctx, lc.cs, journal.ClusterOptions{})
		if err != nil {
			return nil, nil, err
		}
		j, err := journal.OpenFile(file, lc.name, to)
		if err != nil {
			l.Close()
			return nil, nil, err
		}
		return j, func() { j.Close(); l.Close() }, nil
	}
	j, err := journal.OpenCluster(ctx, lc.cs, lc.name, to, journal.ClusterOptions{})
	if err != nil {
		return nil, nil, err
	}
	return j, func() { j.Close() }, nil
}

// keepRehearsal rehearses the captured cluster's upgrade into the journal
// when the journal has no rehearsal yet (the first run): each step's
// rehearsed time is what "ladder upgrade status" counts the time left
// from.
func keepRehearsal(j executor.Journal, sc *scenario.Scenario, to string) error {
	k, ok := j.(interface {
		Record() *journal.Record
		SetRehearsal([]journal.RehearsedStep, *journal.Prediction) error
	})
	if !ok || len(k.Record().Rehearsal) > 0 {
		return nil
	}
	playbookOnly(sc)
	// The rehearsal keeps a journal of its own: the prediction counts
	// what the upgrade's journal will count, by the same code.
	predicted := journal.NewMemory(sc.Spec.Cluster.Name, to)
	rep, err := rehearse.Run(sc, rehearse.Options{To: to, Journal: predicted})
	if err != nil {
		return fmt.Errorf("rehearsing the upgrade for the journal: %w", err)
	}
	return k.SetRehearsal(journal.RehearsedSteps(rep), journal.Predict(rep, predicted.Record()))
}

// planInventory is what the planner needs from a scenario: its control
// plane's version, its add-ons and its node groups.
func planInventory(sc *scenario.Scenario) plan.Inventory {
	inv := plan.Inventory{ControlPlane: kubeversion.MustParse(sc.Spec.Cluster.Version)}
	for _, a := range sc.Spec.Addons {
		inv.Addons = append(inv.Addons, plan.Addon{Name: a.Name, Version: a.Version, Pins: a.Versions})
	}
	for _, g := range sc.Spec.NodeGroups {
		inv.Groups = append(inv.Groups, plan.Group{Name: g.Name, Type: g.Type, Strategy: g.StrategyOf()})
	}
	return inv
}

func upgradeOrder(sc *scenario.Scenario) []string {
	if u := sc.Spec.Upgrade; u != nil {
		return u.Order
	}
	return nil
}

// scenarioAMIs identifies AMIs from the scenario's own and the catalog.
type scenarioAMIs struct{ sc *scenario.Scenario }

func (a scenarioAMIs) LookupAMI(id string) (catalog.AMI, bool) {
	for _, x := range a.sc.ExtraAMIs() {
		if x.ID == id {
			return x, true
		}
	}
	return catalog.LookupAMI(id)
}

// upgradeLog prints the executor's steps and timeline as timestamped
// lines, the way a CI log reads them, and shows them on the progress
// reporter: each step live, a node group's nodes at the hop's version.
type upgradeLog struct {
	out io.Writer
	rep *progress.Reporter
	// nodes, while a node-group step runs, counts its group's nodes at
	// the hop's version; stop ends it.
	nodes func(ctx context.Context, h plan.Hop, st plan.Step) (at, total int, err error)
	stop  context.CancelFunc
	done  chan struct{}
	// beat, while a step runs, records in the journal that this run is
	// alive (journal's Beat): a run killed in the step is counted to its
	// last beat when the step is resumed.
	beat      func(key string, at time.Time) error
	stopBeat  context.CancelFunc
	beatsDone chan struct{}
}

// heartbeatEvery is how often a running step's journal record says its
// run is alive: the most of a killed run's time a resumed step loses.
const heartbeatEvery = 30 * time.Second

func stamp() string { return time.Now().UTC().Format("15:04:05") }

func (p *upgradeLog) HopStarted(h plan.Hop) {
	termtext.Fprintf(p.out, "%s  hop %s → %s\n", stamp(), h.From, h.To)
}

func (p *upgradeLog) StepStarted(h plan.Hop, st plan.Step) {
	termtext.Fprintf(p.out, "%s  %-14s %s started\n", stamp(), st.Kind, executor.StepKey(h, st))
	p.rep.Start(executor.StepKey(h, st))
	if p.beat != nil {
		ctx, stop := context.WithCancel(context.Background())
		p.stopBeat, p.beatsDone = stop, make(chan struct{})
		go p.heartbeat(ctx, executor.StepKey(h, st))
	}
	if st.Kind == plan.NodeGroup && p.nodes != nil && p.rep != nil {
		ctx, stop := context.WithCancel(context.Background())
		p.stop, p.done = stop, make(chan struct{})
		go p.countNodes(ctx, h, st)
	}
}

// nodeCountEvery is how often a node group's nodes are counted while its
// step runs: a list of the nodes, as kubectl get nodes makes.
const nodeCountEvery = 10 * time.Second

func (p *upgradeLog) countNodes(ctx context.Context, h plan.Hop, st plan.Step) {
	defer close(p.done)
	tick := time.NewTicker(nodeCountEvery)
	defer tick.Stop()
	for {
		if at, total, err := p.nodes(ctx, h, st); err == nil {
			p.rep.Update(at, total, "nodes at "+h.To.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// heartbeat beats every heartbeatEvery until ctx ends. A beat that
// cannot be written is not a reason to stop the upgrade: the next one may
// be.
func (p *upgradeLog) heartbeat(ctx context.Context, key string) {
	defer close(p.beatsDone)
	tick := time.NewTicker(heartbeatEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			_ = p.beat(key, now)
		}
	}
}

func (p *upgradeLog) StepEnded(st plan.Step, err error) {
	if p.stop != nil {
		p.stop()
		<-p.done
		p.stop = nil
	}
	if p.stopBeat != nil {
		p.stopBeat()
		<-p.beatsDone
		p.stopBeat = nil
	}
	p.rep.End("", err)
	switch {
	case err == nil:
		termtext.Fprintf(p.out, "%s  %-14s %s done\n", stamp(), st.Kind, st.Name)
	case errors.Is(err, context.Canceled):
		termtext.Fprintf(p.out, "%s  %-14s %s stopped\n", stamp(), st.Kind, st.Name)
	default:
		termtext.Fprintf(p.out, "%s  %-14s %s paused: %v\n", stamp(), st.Kind, st.Name, err)
	}
}

func (p *upgradeLog) AddonVersion(name, version, note string) {}

func (p *upgradeLog) Event(eventType, reason, message string) {
	termtext.Fprintf(p.out, "%s  %-14s %s\n", stamp(), reason, message)
}

var _ executor.BlockObserver = (*upgradeLog)(nil)

// EvictionBlocked implements executor.BlockObserver: a pod whose eviction
// a PodDisruptionBudget refuses on a node Ladder drains is a line when the
// refusal starts and one when it ends.
func (p *upgradeLog) EvictionBlocked(b executor.BlockedEviction) {
	who := fmt.Sprintf("node/%s: pod %s", b.Node, b.Pod)
	pdb := ""
	if len(b.PDBs) > 0 {
		pdb = " by PodDisruptionBudget " + strings.Join(b.PDBs, ",")
	}
	switch {
	case b.Until.IsZero():
		p.Event("Warning", "EvictionBlocked", fmt.Sprintf("%s: eviction refused%s, retrying: %s", who, pdb, b.Message))
	case b.Outcome == executor.OutcomeFailed:
		p.Event("Warning", "EvictionFailed", fmt.Sprintf("%s: eviction refused%s: %s", who, pdb, b.Message))
	default:
		p.Event("Normal", "EvictionUnblocked", fmt.Sprintf("%s: %s after %s blocked", who, b.Outcome, b.Until.Sub(b.Since).Round(time.Second)))
	}
}

// reportingJournal shows on the progress line the AWS update or instance
// refresh a step waits on, as the journal records it.
type reportingJournal struct {
	executor.Journal
	rep *progress.Reporter
}

func (j reportingJournal) Put(key string, e executor.Entry) error {
	if err := j.Journal.Put(key, e); err != nil {
		return err
	}
	if e.State == executor.Called && e.ID != "" {
		j.rep.Update(0, 0, "waiting on "+e.ID)
	}
	return nil
}

func newUpgradeStatusCommand() *cobra.Command {
	var f upgradeFlags
	var output string
	var entries, compare bool
	var htmlFile string
	cmd := &cobra.Command{
		Use:   "status [--journal FILE] [--kubeconfig K] [--context C] [-o text|json] [--entries | --compare] [--report FILE.html]",
		Short: "Show where the upgrade stands: per hop and step, nodes replaced, what blocks it, time taken and left",
		Long: `Status reads the journal of "ladder upgrade" — the ConfigMap
kube-system/ladder-upgrade of the kubeconfig's cluster, or --journal FILE — and
shows, per hop, each step in the order the upgrade takes them: pending,
started, done or failed; for a node group, its nodes at the hop's version out
of its nodes when the step ended; for a step that paused on a drain, the pod,
its PodDisruptionBudget and the node (a pod on a node still to replace whose
PDB allows no disruption); how long each step took; and the time left as the
rehearsal of the cluster, made when the first run started, measured it.
A step under way names the AWS update or instance refresh it waits on.

--entries lists the journal's records themselves instead: every step and AWS
operation — started, calling, called (with the id a resumed run waits on),
done or failed (with why) — and when.

--compare sets a finished upgrade against the rehearsal it made when it
began: every step (done, and in the rehearsal), the nodes each group replaced,
the drains that stopped it (pod and PDB), the control plane's, add-ons' and
kubelets' versions at the end, and each step's time taken over its rehearsed
time. It ends "Agreed on ..." or lists each difference.

--report FILE.html also writes the journal as one HTML file that opens
offline: the steps over wall-clock time, the status table, the drains that
paused it, and the comparison with the rehearsal (docs/report-html.md).

Status changes nothing and takes no lock.`,
		Example: `  # Where the upgrade of the kubeconfig's cluster stands
  ladder upgrade status

  # From a local journal, as JSON
  ladder upgrade status --journal upgrade.json -o json

  # Did the upgrade do what its rehearsal said?
  ladder upgrade status --compare

  # The same for the change ticket: one HTML file with the steps drawn
  ladder upgrade status --report upgrade.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "json" {
				return fmt.Errorf("-o %q: use text or json", output)
			}
			if entries && compare {
				return fmt.Errorf("--entries and --compare: choose one")
			}
			if err := checkReportDir(htmlFile); err != nil {
				return err
			}
			var rec *journal.Record
			var where string
			var err error
			if f.journal != "" {
				where = f.journal
				rec, err = journal.ReadFile(f.journal)
			} else {
				kt, cerr := liveConfig(f.kubeconfig, f.kubeContext, f.requestTimeout, "read a journal file with --journal")
				if cerr != nil {
					return cerr
				}
				cs, cerr := kubernetes.NewForConfig(kt.cfg)
				if cerr != nil {
					return cerr
				}
				where = "configmap " + journal.Namespace + "/" + journal.Name
				rec, err = journal.ReadCluster(cmd.Context(), cs)
			}
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if htmlFile == "-" {
				// Standard output holds the page alone.
				out = cmd.ErrOrStderr()
			}
			if rec == nil {
				fmt.Fprintf(out, "No upgrade journal (%s): no ladder upgrade --approve has run here.\n", where)
				return nil
			}
			if htmlFile != "" {
				if err := writeUpgradeReport(htmlFile, cmd.OutOrStdout(), rec, where, time.Now()); err != nil {
					return err
				}
			}
			if entries {
				return writeText(out, func(w io.Writer) error { return rec.WriteText(w, where) })
			}
			if compare {
				c, err := rec.Compare()
				if err != nil {
					return fmt.Errorf("%s: %w", where, err)
				}
				if output == "json" {
					return c.WriteJSON(out)
				}
				return writeText(out, c.WriteText)
			}
			st := rec.Status(where, time.Now())
			if output == "json" {
				return st.WriteJSON(out)
			}
			return writeText(out, st.WriteText)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&output, "output", "o", "text", "output format: text or json")
	fl.BoolVar(&entries, "entries", false, "list the journal's records (every step and AWS operation, in the order written) instead")
	fl.StringVar(&htmlFile, "report", "", "also write the journal as a self-contained HTML file: steps over time, status, blocked drains, prediction vs reality")
	fl.BoolVar(&compare, "compare", false, "set the finished upgrade against its rehearsal: steps, nodes replaced, blocked drains, end state, time ratio")
	fl.StringVar(&f.journal, "journal", "", "the local journal file (default: the ConfigMap kube-system/ladder-upgrade)")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	fl.StringVar(&f.kubeContext, "context", "", "kubeconfig context (default: the current one)")
	addRequestTimeout(fl, &f.requestTimeout)
	return cmd
}

// liveTarget names a live EKS cluster: its kubeconfig and context, the
// EKS cluster and the AWS region, and the bound of each request to its
// API server.
type liveTarget struct {
	kubeconfig, kubeContext, cluster, region string
	requestTimeout                           time.Duration
}

// register registers the flags that set t.
func (t *liveTarget) register(f *pflag.FlagSet) {
	f.StringVar(&t.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	f.StringVar(&t.kubeContext, "context", "", "kubeconfig context (default: the current one)")
	f.StringVar(&t.cluster, "cluster", "", "EKS cluster name (default: from the kubeconfig context's cluster entry)")
	f.StringVar(&t.region, "region", "", "AWS region (default: the AWS SDK's: AWS_REGION or the profile's)")
	addRequestTimeout(f, &t.requestTimeout)
}

// addRequestTimeout registers kubectl's --request-timeout: the bound of
// each request to the API server (live.BoundRequests).
func addRequestTimeout(f *pflag.FlagSet, d *time.Duration) {
	*d = liveRequestTimeout
	f.Var((*requestTimeoutValue)(d), "request-timeout", "give up a request to the API server without an answer after this long (30s, 2m, or a bare number of seconds, as kubectl reads it; kubectl's own default is no limit); a read is made again, 3 times in all (0: wait for ever)")
}

// requestTimeoutValue parses --request-timeout as kubectl does
// (clientcmd.ParseTimeout: a duration, or a whole number of seconds), and
// refuses a negative duration, which ParseTimeout lets through.
type requestTimeoutValue time.Duration

func (v *requestTimeoutValue) Set(s string) error {
	d, err := clientcmd.ParseTimeout(s)
	if err != nil || d < 0 {
		return fmt.Errorf("give a duration such as 30s or 2m, or 0 to wait for ever")
	}
	*v = requestTimeoutValue(d)
	return nil
}

func (v *requestTimeoutValue) String() string { return time.Duration(*v).String() }
func (v *requestTimeoutValue) Type() string   { return "duration" }
