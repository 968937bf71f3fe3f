package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/ladder-eks/ladder/internal/liveview"
	"github.com/ladder-eks/ladder/internal/rehearse"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/termtext"
)

// DefaultViewAddr is where `ladder view` serves unless told otherwise.
const DefaultViewAddr = "127.0.0.1:8080"

type viewFlags struct {
	kubeconfig, kubeContext, journalFile string
	requestTimeout                       time.Duration
	scenario, to, strategy               string
	seed                                 uint64
	speed                                float64
	paused                               bool
	addr                                 string
	allowRemote                          bool
	allowHosts                           []string
	timeLimit                            time.Duration
}

func newViewCommand() *cobra.Command {
	var f viewFlags
	cmd := &cobra.Command{
		Use:   "view [--kubeconfig K] [--context C] | --scenario S [--to V] [--speed X]; [--addr 127.0.0.1:PORT]",
		Short: "Watch nodes, pods and the upgrade's steps live in the browser",
		Long: `View serves a live page of the cluster for an upgrade, in the spirit of
kube-ops-view: the nodes grouped by node group (EKS managed node group,
self-managed group, Karpenter NodePool, Fargate profile), each labelled and
coloured by kubelet version; cordoned nodes striped, draining nodes
cross-hatched, NotReady nodes with a dashed border, each also written on
the node; pods as small boxes (filled Ready, hollow not Ready, red-striped
terminating, round for a DaemonSet's); the PodDisruptionBudgets at their
floor; and the steps of a running "ladder upgrade", read from its journal
(the ConfigMap kube-system/ladder-upgrade, or --journal FILE).

Against a cluster (the kubeconfig's current context, or --context) the page
is fed by watches on nodes, pods and PodDisruptionBudgets, and changes
nothing: the rights it needs are list and watch on those, and get on the
journal's ConfigMap (deploy/ladder-view-rbac.yaml).

With --scenario it replays the scenario's rehearsal in virtual time instead
(no cluster needed): Play/Pause (Space), a speed, and a time slider to seek.

The page is served on a loopback address only, because it shows the
cluster's nodes and pods to whoever reaches it; --allow-remote serves it
elsewhere. It answers only requests addressed to localhost, a loopback or
the bound address, or a name given with --allow-host (a page of another
site cannot reach it by rebinding its name to 127.0.0.1), and takes replay
commands from its own page only. Keyboard: Tab reaches the controls and node cards, arrow keys
move between nodes, and the focused node's details show on the right.
Ctrl-C stops the server. More in docs/view.md.`,
		Example: `  # The cluster of the current context, while "ladder upgrade" runs elsewhere
  ladder view
  # then open http://127.0.0.1:8080/

  # The workshop's rehearsal, replayed at 600 virtual seconds a second
  ladder view --scenario workshop --speed 600

  # A lab, and the journal of an upgrade run with --journal
  eval "$(ladder lab env --dir /tmp/lab)"; ladder view --journal upgrade.journal --addr 127.0.0.1:0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runView(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	fl.StringVar(&f.kubeContext, "context", "", "the kubeconfig context (default: its current one)")
	addRequestTimeout(fl, &f.requestTimeout)
	fl.StringVar(&f.journalFile, "journal", "", "read the steps of an upgrade run with --journal FILE (default: the journal ConfigMap in the cluster)")
	fl.StringVar(&f.scenario, "scenario", "", "replay this scenario's rehearsal (built-in name or file) instead of watching a cluster")
	fl.StringVar(&f.to, "to", "", "with --scenario: rehearse up to this minor (default: the scenario's)")
	fl.Uint64Var(&f.seed, "seed", 0, "with --scenario: random seed (default: the scenario's)")
	addStrategyFlag(fl, &f.strategy)
	fl.DurationVar(&f.timeLimit, "time-limit", 0, "with --scenario: virtual-time limit of the rehearsal (default: the scenario's, else 6h)")
	fl.Float64Var(&f.speed, "speed", liveview.DefaultSpeed, "with --scenario: virtual seconds played per second (the page can change it)")
	fl.BoolVar(&f.paused, "paused", false, "with --scenario: start paused at the beginning")
	fl.StringVar(&f.addr, "addr", DefaultViewAddr, "where to serve the page, HOST:PORT (port 0 picks a free one)")
	fl.BoolVar(&f.allowRemote, "allow-remote", false, "allow an --addr that is not a loopback address")
	fl.StringSliceVar(&f.allowHosts, "allow-host", nil, "also answer requests for this host name (the name in the browser's address bar, e.g. a bastion's); repeatable; * answers any, and lets a DNS-rebinding page in")
	return cmd
}

func runView(cmd *cobra.Command, f viewFlags) error {
	fl := cmd.Flags()
	if f.scenario != "" {
		for _, name := range []string{"kubeconfig", "context", "journal"} {
			if fl.Changed(name) {
				return fmt.Errorf("--scenario replays a rehearsal and --%s watches a cluster: give one of them", name)
			}
		}
	} else {
		for _, name := range []string{"to", "seed", "strategy", "time-limit", "speed", "paused"} {
			if fl.Changed(name) {
				return fmt.Errorf("--%s applies to a replay: add --scenario S, or leave it out to watch the cluster", name)
			}
		}
	}
	if f.speed <= 0 || f.speed > 1e6 {
		return fmt.Errorf("--speed %v: give virtual seconds per second, above 0 and at most 1000000", f.speed)
	}
	if fl.Changed("time-limit") && (f.timeLimit <= 0 || f.timeLimit > scenario.MaxTimeLimit) {
		return fmt.Errorf("--time-limit %s: use a positive virtual duration of at most %s", f.timeLimit, scenario.MaxTimeLimit)
	}
	for i, h := range f.allowHosts {
		if h == "*" {
			continue
		}
		if ip, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
			f.allowHosts[i] = ip.String()
			continue
		}
		h = strings.ToLower(h)
		if errs := validation.IsDNS1123Subdomain(h); len(errs) > 0 {
			return fmt.Errorf("--allow-host %q: %s (give the host name without scheme or port, e.g. bastion.example.com, an IP address, or * for any)", f.allowHosts[i], strings.Join(errs, "; "))
		}
		f.allowHosts[i] = h
	}
	// Listen first: a taken port or a remote address fails before a
	// rehearsal or a cluster's lists are paid for.
	l, err := liveview.Listen(f.addr, f.allowRemote)
	if err != nil {
		return err
	}
	defer l.Close()
	ctx, stop := interruptible(cmd.Context())
	defer stop()

	var (
		hub    *liveview.Hub
		player *liveview.Player
		what   string
	)
	if f.scenario != "" {
		sc, err := resolveScenario(cmd, f.scenario, f.strategy)
		if err != nil {
			return err
		}
		opts := rehearse.Options{TimeLimit: f.timeLimit, To: f.to}
		if fl.Changed("seed") {
			opts.Seed = &f.seed
		}
		termtext.Fprintf(cmd.ErrOrStderr(), "rehearsing %s for the replay…\n", sc.Metadata.Name)
		replay, rep, err := liveview.Record(sc, opts)
		if err != nil {
			return err
		}
		hub = liveview.NewHub(sc.Path)
		player = liveview.NewPlayer(replay, hub, f.speed, f.paused)
		go player.Run(ctx, liveview.FlushEvery)
		what = fmt.Sprintf("the rehearsal of %s (%s, %s virtual, %d changes)", sc.Metadata.Name, rep.Status,
			time.Duration(replay.End()*float64(time.Second)).Round(time.Second), replay.Changes())
	} else {
		kt, err := liveConfig(f.kubeconfig, f.kubeContext, f.requestTimeout, "replay a rehearsal with --scenario")
		if err != nil {
			return err
		}
		cfg := kt.cfg
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		j := liveview.ClusterJournal(cs)
		if f.journalFile != "" {
			j = liveview.FileJournal(f.journalFile)
		}
		hub = liveview.NewHub(cfg.Host)
		if err := liveview.Watch(ctx, cs, hub, j); err != nil {
			return fmt.Errorf("watching the cluster at %s: %v", cfg.Host, err)
		}
		what = "the cluster at " + cfg.Host
	}
	hub.Flush()
	go hub.Run(ctx, liveview.FlushEvery)

	srv := liveview.Server(liveview.Handler(hub, player, liveview.Access{Addr: l.Addr(), Hosts: f.allowHosts}))
	// The event streams end with the command.
	srv.BaseContext = func(_ net.Listener) context.Context { return ctx }
	termtext.Fprintf(cmd.OutOrStdout(), "Serving %s on http://%s/ — Ctrl-C stops.\n", what, l.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
