package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ladder-eks/ladder/internal/awsserve"
	"github.com/ladder-eks/ladder/internal/awsserve/labserve"
	"github.com/ladder-eks/ladder/internal/awsserve/twinserve"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/lab"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// awsBackend is what `ladder lab aws-serve` serves: a scenario's AWS
// endpoints on a listener until the context ends, after printing their
// exports.
type awsBackend interface {
	Serve(ctx context.Context, ln net.Listener, out io.Writer) error
}

// newAWSBackend chooses aws-serve's backend: the scenario's twins
// (twinserve), on their own or — with labDir, as `ladder lab up` starts
// it — for the lab in labDir, whose cluster the endpoints will act on.
// With a lab, the twin's EKS services act on the lab's API server
// (labserve): they adopt the nodes `lab up` materializes once they exist.
//
// policy, if not nil, is the IAM policy every request is evaluated
// against (awsserve.Policy).
func newAWSBackend(sc *scenario.Scenario, labDir string, timeScale float64, policy *awsserve.Policy) (awsBackend, error) {
	if labDir == "" {
		tw, err := twinserve.New(sc, timeScale)
		if err != nil {
			return nil, err
		}
		if policy != nil {
			tw.SetPolicy(policy)
		}
		return tw, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(labDir, "kubeconfig"))
	if err != nil {
		return nil, fmt.Errorf("--lab-dir %s: reading the lab kubeconfig: %w", labDir, err)
	}
	return labserve.New(sc, cfg, timeScale, labserve.Options{Log: os.Stderr, Policy: policy,
		UpgradeControlPlane: func(ctx context.Context, version string) error { return swapControlPlane(ctx, labDir, version) }})
}

// swapControlPlane is what the lab's EKS does behind a completed
// UpdateClusterVersion when it can: the lab's own control plane moves to
// the next minor's binaries (lab.UpgradeControlPlane) if it runs the
// minor below version — a scenario whose version has lab binaries. For
// the others (the workshop's 1.30 on a 1.37 lab) the EKS endpoint carries
// the version alone.
func swapControlPlane(ctx context.Context, labDir, version string) error {
	st, err := lab.GetStatus(labDir)
	if err != nil {
		return err
	}
	running, err := kubeversion.Parse(st.Lab.Kubernetes)
	if err != nil {
		return err
	}
	to, err := kubeversion.Parse(version)
	if err != nil {
		return err
	}
	if running.Next() != to {
		return nil
	}
	return lab.UpgradeControlPlane(ctx, labDir, to.String(), os.Stderr)
}

// maxTimeScale bounds --time-scale: a day of the twin's time per
// wall-clock second, far past any update's useful speed.
const maxTimeScale = 86400

// checkTimeScale refuses a --time-scale that is not a number above 0 and
// at most maxTimeScale (NaN and the infinities included).
func checkTimeScale(v float64) error {
	if math.IsNaN(v) || v <= 0 || v > maxTimeScale {
		return fmt.Errorf("--time-scale %v: give virtual seconds per wall-clock second, above 0 and at most %d (default %d)", v, maxTimeScale, twinserve.DefaultTimeScale)
	}
	return nil
}

// checkServeAddr refuses an --addr that is not HOST:PORT, and one that is
// not a loopback address unless allowRemote: the endpoints accept the
// lab's printed dummy credentials and act on the twin and the lab.
func checkServeAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %v (give HOST:PORT, e.g. 127.0.0.1:4566; port 0 picks a free one)", addr, err)
	}
	if allowRemote {
		return nil
	}
	switch ip := net.ParseIP(strings.Trim(host, "[]")); {
	case host == "":
		return fmt.Errorf("--addr %q listens on every interface, and the endpoints accept the lab's public dummy credentials: give a loopback address (127.0.0.1:PORT), or pass --allow-remote to serve them beyond this machine", addr)
	case host == "localhost":
	case ip == nil:
		return fmt.Errorf("--addr %q: give an IP address (127.0.0.1:PORT), not a host name, or pass --allow-remote", addr)
	case !ip.IsLoopback():
		return fmt.Errorf("--addr %q is not a loopback address, and the endpoints accept the lab's public dummy credentials: use 127.0.0.1:PORT, or pass --allow-remote to serve them on %s", addr, host)
	}
	return nil
}

func newLabAWSServeCommand() *cobra.Command {
	var scenarioName, addr, labDir, policyFile string
	var timeScale float64
	var allowRemote bool
	cmd := &cobra.Command{
		Use:   "aws-serve",
		Short: "Serve a scenario's twins behind AWS endpoints (EKS, Auto Scaling, EC2, SSM) until interrupted",
		Long: `Builds the scenario's cluster in the twin and answers EKS (restJson1), Auto
Scaling (awsQuery), EC2 (ec2Query) and SSM (awsJson1_1) requests for it on ADDR,
signed with SigV4 for the printed dummy credentials, as AWS answers them
(Auto Scaling only when the scenario has self-managed groups). The twin runs
--time-scale times faster than the wall clock, so an update started with the AWS
CLI or an SDK progresses while the client polls it. Prints the exports that
point the AWS CLI, boto3 and aws-sdk-go-v2 at it; paste them into another shell.
With --iam-policy the endpoints evaluate that policy's actions (Allow, Deny,
wildcards; not resources or conditions) and refuse the others with each
service's own AccessDenied error: how to try a least-privilege role.
Add-on updates complete at once here.

The endpoints listen on a loopback address only: their credentials are
printed and public, and they change the twin (and the lab's cluster) for
whoever reaches them; --allow-remote serves them elsewhere. Request bodies
over 1 MiB are refused, and a request's signature is checked before its
body is read. More in docs/lab.md.`,
		Example: `  ladder lab aws-serve --scenario workshop
  ladder lab aws-serve --scenario workshop --addr 127.0.0.1:4566 --time-scale 600`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The flags first: a bad one fails before a twin is built.
			if err := checkTimeScale(timeScale); err != nil {
				return err
			}
			if err := checkServeAddr(addr, allowRemote); err != nil {
				return err
			}
			sc, err := scenario.Resolve(scenarioName)
			if err != nil {
				return err
			}
			if _, err := sc.Validate(); err != nil {
				return err
			}
			var policy *awsserve.Policy
			if policyFile != "" {
				data, err := os.ReadFile(policyFile)
				if err != nil {
					return fmt.Errorf("--iam-policy: %w", err)
				}
				if policy, err = awsserve.ParsePolicy(data); err != nil {
					return fmt.Errorf("--iam-policy %s: %w", policyFile, err)
				}
			}
			backend, err := newAWSBackend(sc, labDir, timeScale, policy)
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("--addr %s: %w", addr, err)
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			return backend.Serve(ctx, ln, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&scenarioName, "scenario", "", "a built-in scenario or a scenario file (default: the default scenario)")
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "the address to listen on; port 0 picks a free one")
	cmd.Flags().Float64Var(&timeScale, "time-scale", twinserve.DefaultTimeScale, "virtual seconds of the twin per wall-clock second")
	cmd.Flags().StringVar(&labDir, "lab-dir", "", "the lab whose endpoints these are (set by `ladder lab up --scenario`)")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow an --addr that is not a loopback address")
	cmd.Flags().StringVar(&policyFile, "iam-policy", "", "an IAM policy document (JSON): refuse every action it does not allow, as AWS refuses a role without the permission (e.g. deploy/ladder-capture-iam-policy.json)")
	return cmd
}
