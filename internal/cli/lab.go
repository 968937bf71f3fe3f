package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ladder-eks/ladder/internal/awsserve/twinserve"
	"github.com/ladder-eks/ladder/internal/lab"
	"github.com/ladder-eks/ladder/internal/materialize"
	"github.com/ladder-eks/ladder/internal/scenario"
)

func newLabCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Run a real Kubernetes control plane (etcd, apiserver, controllers, scheduler, KWOK nodes) on this machine",
		Long: `A lab is a real Kubernetes control plane on 127.0.0.1: etcd, kube-apiserver,
kube-controller-manager and kube-scheduler of a Kubernetes release, built from
their Go modules, plus KWOK playing the kubelet of fake nodes (nodes annotated
kwok.x-k8s.io/node=fake become Ready and their pods Running; no container runs).
Authentication is by token, authorization is RBAC, and every port is a free
loopback port. The processes outlive the ladder command; "ladder lab down"
stops them.

The first "up" (or "build") compiles the binaries into the user cache: about
15 minutes and 3 GB of memory on 2 cores, 400 MB on disk; later starts take
about 5 seconds. Needs the go command (Go 1.26+) and the Go module proxy.`,
		Example: `  ladder lab up                          # Kubernetes 1.37 in ~/.cache/ladder/lab/default
  export KUBECONFIG=~/.cache/ladder/lab/default/kubeconfig; kubectl get nodes
  ladder lab up --scenario workshop      # and materialize a scenario's nodes and workloads, and serve its AWS endpoints
  eval "$(ladder lab env)"               # point the AWS CLI, SDKs, kubectl and ladder at them
  ladder lab status
  ladder lab down`,
	}
	cmd.AddCommand(newLabBuildCommand(), newLabUpCommand(), newLabStatusCommand(), newLabDownCommand(), newLabEnvCommand(), newLabAWSServeCommand(), newLabKarpenterCommand(), newLabUpgradeControlPlaneCommand())
	return cmd
}

// labDirHelp documents --dir once for every subcommand.
const labDirHelp = "the lab's directory: state (lab.json), kubeconfig, credentials, etcd data, logs (default: the user cache's ladder/lab/default)"

func newLabBuildCommand() *cobra.Command {
	var version, cacheDir string
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Build (or find in the cache) the lab's binaries, without starting anything",
		Long: `Builds etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok
for a Kubernetes release, each through a generated wrapper module, into the user
cache (ladder/lab/<versions>/bin). Binaries already there are kept. Useful in CI
before tests, or to pay the first build's 15 minutes ahead of time.`,
		Example: `  ladder lab build
  ladder lab build --kubernetes 1.36`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			release, err := lab.LookupRelease(version)
			if err != nil {
				return err
			}
			rep, err := progressOf(cmd)
			if err != nil {
				return err
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			out := rep.Writer(cmd.OutOrStdout())
			b, err := lab.Build(ctx, lab.BuildOptions{Release: release, CacheDir: cacheDir, Out: out, Progress: rep})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "lab binaries for Kubernetes %s (etcd %s, kwok %s): %s\n", release.Kubernetes, release.Etcd, release.Kwok, b.Dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&version, "kubernetes", lab.DefaultMinor, "the Kubernetes minor to build: "+labMinors())
	cmd.Flags().StringVar(&cacheDir, "cache-dir", "", "where builds go (default: the user cache's ladder/lab)")
	return cmd
}

func newLabUpCommand() *cobra.Command {
	var version, dir, scenarioName, cacheDir string
	var port int
	var timeout time.Duration
	var timeScale float64
	var withKarpenter bool
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a lab (building its binaries first if needed) and print how to use it",
		Long: `Starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok on
127.0.0.1, each in a session of its own with its log in DIR/logs, waits until
each is healthy and the controllers act, then writes DIR/kubeconfig (an admin in
system:masters) and DIR/lab.json (pids, binaries, ports). Every "up" starts an
empty cluster with new credentials.

With --scenario, the scenario's nodes become KWOK nodes and its manifests are
applied (see "ladder scenario list"), and the scenario's AWS endpoints (EKS,
Auto Scaling, EC2 and SSM on one more loopback port) run as one more component,
"ladder lab aws-serve", logging to DIR/logs/aws-serve.log; "ladder lab env"
prints the exports that point the AWS CLI, the SDKs and ladder at them. A
scenario with Karpenter NodePools gets the real Karpenter too, once it is
materialized: "ladder lab karpenter", logging to DIR/logs/karpenter.log, its
control-plane version read from the lab's EKS endpoint (--karpenter=false
leaves the Karpenter nodes as materialized).

A lab already running in DIR is an error; one whose processes are gone is
cleaned up and replaced. If a component fails to start, the others are
stopped and the error names it with its log's end.`,
		Example: `  ladder lab up
  ladder lab up --kubernetes 1.36 --dir ./lab --port 6443
  ladder lab up --scenario workshop
  eval "$(ladder lab env)"; aws eks describe-cluster --name eksworkshop-eksctl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			release, err := lab.LookupRelease(version)
			if err != nil {
				return err
			}
			var sc *scenario.Scenario
			var aws *lab.AWSOptions
			if scenarioName != "" {
				// Before anything starts: a typo should not cost a lab start.
				if sc, err = scenario.Resolve(scenarioName); err != nil {
					return err
				}
				if _, err := sc.Validate(); err != nil {
					return err
				}
				if aws, err = labAWSOptions(scenarioName, sc, timeScale); err != nil {
					return err
				}
			}
			rep, err := progressOf(cmd)
			if err != nil {
				return err
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			out := rep.Writer(cmd.OutOrStdout())
			lb, err := lab.Up(ctx, lab.Options{
				Dir: dir, Release: release, CacheDir: cacheDir, APIServerPort: port, Out: out, Progress: rep, ReadyTimeout: timeout, AWS: aws,
			})
			if err != nil {
				return err
			}
			if sc != nil {
				cfg, err := lb.RESTConfig()
				if err == nil {
					fmt.Fprintf(out, "ladder lab: materializing scenario %s\n", sc.Metadata.Name)
					err = materialize.Apply(ctx, cfg, sc, out)
				}
				if err != nil {
					return fmt.Errorf("the lab is up, but materializing scenario %s failed: %w (the lab keeps running: `ladder lab down --dir %s` stops it)", sc.Metadata.Name, err, lb.Dir())
				}
			}
			if sc != nil && withKarpenter && hasKarpenter(sc) {
				fmt.Fprintf(out, "ladder lab: starting Karpenter (its own controllers; Ladder plays EC2)\n")
				if err := lb.StartKarpenter(ctx, lab.KarpenterOptions{Zones: sc.Spec.Cluster.Zones, Out: out, ReadyTimeout: timeout}); err != nil {
					return fmt.Errorf("the lab is up and scenario %s materialized, but Karpenter did not start: %w (the lab keeps running: `ladder lab down --dir %s` stops it)", sc.Metadata.Name, err, lb.Dir())
				}
			}
			printLabUsage(out, lb)
			if sc != nil {
				fmt.Fprintf(out, "Scenario %s's node groups and what they carry:\n  ladder inventory --kubeconfig %s\n", sc.Metadata.Name, lb.Kubeconfig)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&version, "kubernetes", lab.DefaultMinor, "the Kubernetes minor to run: "+labMinors())
	cmd.Flags().StringVar(&dir, "dir", "", labDirHelp)
	cmd.Flags().StringVar(&scenarioName, "scenario", "", "a built-in scenario or a scenario file to materialize once the lab is up")
	cmd.Flags().IntVar(&port, "port", 0, "the kube-apiserver port on 127.0.0.1 (default: a free port)")
	cmd.Flags().StringVar(&cacheDir, "cache-dir", "", "where builds go (default: the user cache's ladder/lab)")
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "how long each start step may take before the lab is stopped and the component named")
	cmd.Flags().Float64Var(&timeScale, "time-scale", twinserve.DefaultTimeScale, "with --scenario: how many times faster than the wall clock the AWS endpoints' updates run")
	cmd.Flags().BoolVar(&withKarpenter, "karpenter", true, "with a scenario that has Karpenter NodePools: run Karpenter's own controllers once it is materialized (--karpenter=false: its nodes stay as materialized)")
	return cmd
}

// hasKarpenter reports whether a scenario has Karpenter node groups.
func hasKarpenter(sc *scenario.Scenario) bool {
	for _, g := range sc.Spec.NodeGroups {
		if g.Type == scenario.Karpenter {
			return true
		}
	}
	return false
}

// labAWSOptions are the AWS endpoints of a lab started with scenario arg:
// the scenario as the child ladder, running in the lab's directory, finds
// it again — a built-in's name, or the file's absolute path.
func labAWSOptions(arg string, sc *scenario.Scenario, timeScale float64) (*lab.AWSOptions, error) {
	if err := checkTimeScale(timeScale); err != nil {
		return nil, err
	}
	if _, err := scenario.BuiltinSource(arg); err != nil {
		if arg, err = filepath.Abs(arg); err != nil {
			return nil, fmt.Errorf("--scenario %s: %w", arg, err)
		}
	}
	return &lab.AWSOptions{Scenario: arg, Region: sc.Spec.Cluster.Region, Cluster: sc.Spec.Cluster.Name, TimeScale: timeScale}, nil
}

func printLabUsage(out io.Writer, lb *lab.Lab) {
	fmt.Fprintf(out, `
Kubernetes %s is running at %s (logs: %s/logs).
  export KUBECONFIG=%s
  kubectl get nodes
Nodes annotated %s=fake are played by KWOK.
`, lb.Kubernetes, lb.Server, lb.Dir(), lb.Kubeconfig, lab.KwokNodeAnnotation)
	if lb.AWS != nil {
		fmt.Fprintf(out, `EKS, Auto Scaling, EC2 and SSM for cluster %s (%s) are served at %s; point the AWS CLI, SDKs and ladder at them (and kubectl at the lab) with:
  eval "$(ladder lab env --dir %s)"
  aws eks describe-cluster --name %s
`, lb.AWS.Cluster, lb.AWS.Region, lb.AWS.Endpoint, lb.Dir(), lb.AWS.Cluster)
	}
	fmt.Fprintf(out, "Stop the lab with:\n  ladder lab down --dir %s\n", lb.Dir())
}

func newLabStatusCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show each lab process: pid, ports, healthy or not; exit 1 unless all are healthy",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := lab.GetStatus(dir)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			lb := st.Lab
			fmt.Fprintf(out, "lab %s: Kubernetes %s at %s, started %s\n", lb.Dir(), lb.Kubernetes, lb.Server, lb.Started.Local().Format(time.DateTime))
			fmt.Fprintf(out, "kubeconfig: %s\n", lb.Kubeconfig)
			if lb.AWS != nil {
				fmt.Fprintf(out, "AWS endpoints: %s (scenario %s, cluster %s in %s; `ladder lab env` prints the exports)\n", lb.AWS.Endpoint, lb.AWS.Scenario, lb.AWS.Cluster, lb.AWS.Region)
			}
			fmt.Fprintln(out)
			tw := tabwriter.NewWriter(out, 0, 4, 3, ' ', 0)
			fmt.Fprintln(tw, "COMPONENT\tPID\tPORTS\tSTATUS")
			for _, c := range st.Components {
				status := "healthy"
				if !c.Healthy {
					status = "unhealthy: " + c.Problem
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", c.Name, c.PID, portList(c.Ports), status)
			}
			tw.Flush()
			switch {
			case st.Stale():
				return fmt.Errorf("the lab in %s is stale: none of its processes runs; `ladder lab down --dir %s` cleans it, `ladder lab up --dir %s` replaces it", lb.Dir(), lb.Dir(), lb.Dir())
			case !st.Healthy():
				return fmt.Errorf("the lab in %s is not healthy: see its logs in %s/logs; `ladder lab down --dir %s` stops it", lb.Dir(), lb.Dir(), lb.Dir())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", labDirHelp)
	return cmd
}

func newLabDownCommand() *cobra.Command {
	var dir string
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop the lab's processes (SIGTERM, then SIGKILL) and remove its state; keeps the logs",
		Long: `Stops each process recorded in DIR/lab.json, newest first, but only while it is
still the process "up" started (same binary and start time: a pid the system
gave to another program since is never signalled): SIGTERM, then SIGKILL after
--grace. Then removes the state file, kubeconfig, credentials and etcd data;
the logs stay in DIR/logs. Without a lab in DIR it does nothing and succeeds.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return lab.Down(cmd.Context(), lab.DownOptions{Dir: dir, Out: cmd.OutOrStdout(), StopTimeout: grace})
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", labDirHelp)
	cmd.Flags().DurationVar(&grace, "grace", 15*time.Second, "how long each process has after SIGTERM before SIGKILL")
	return cmd
}

// interruptible cancels ctx on Ctrl-C or SIGTERM, so that a build or a
// start in progress stops what it started instead of leaving it behind.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

func labMinors() string {
	var out []string
	for _, r := range lab.Releases {
		out = append(out, r.Minor+" ("+r.Kubernetes+")")
	}
	return strings.Join(out, ", ")
}

func portList(ports map[string]int) string {
	var out []string
	for _, name := range []string{"https", "http", "client", "peer", "metrics"} {
		if p, ok := ports[name]; ok {
			out = append(out, fmt.Sprintf("%s %d", name, p))
		}
	}
	return strings.Join(out, ", ")
}
