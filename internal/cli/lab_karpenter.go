package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awscreds "github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/spf13/cobra"

	"github.com/ladder-eks/ladder/internal/awsserve/twinserve"
	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/lab"
	"github.com/ladder-eks/ladder/internal/labkarpenter"
)

func newLabKarpenterCommand() *cobra.Command {
	var cfg labkarpenter.Config
	var version, zones, labDir string
	cmd := &cobra.Command{
		Use:   "karpenter",
		Short: "Run Karpenter's own controllers against a lab cluster, with Ladder's EC2 cloud provider, until interrupted",
		Long: `Runs Karpenter's operator (sigs.k8s.io/karpenter, the version the twin models)
in this process with its core controllers — provisioning, disruption, NodeClaim
lifecycle, drift, termination — against the cluster of --kubeconfig, leader
election off. Ladder plays EC2 and the AWS provider's EC2NodeClass controller:
a NodeClaim launches a KWOK node of an instance type from the embedded catalog
on the image its EC2NodeClass resolves to (id, name or alias, an alias at
--cluster-version), and a node whose image its EC2NodeClass no longer selects
has drifted (AMIDrift), so patching amiSelectorTerms makes Karpenter replace
the nodes under the NodePool's budgets.

With --lab-dir D (what "ladder lab up --scenario" runs, as a lab component),
the kubeconfig, region and control-plane version come from the lab in D: the
version is the lab's EKS cluster's (DescribeCluster on the lab's endpoint, read
again at every EC2NodeClass refresh), so an UpdateClusterVersion moves an
@latest alias to the next minor's AMI and Karpenter drifts the nodes.

Karpenter's metrics and health ports listen on 127.0.0.1 only; free ports are
picked unless --metrics-port and --health-port are given.`,
		Example: `  ladder lab up --scenario karpenter-drift
  ladder lab karpenter --kubeconfig ~/.cache/ladder/lab/kubeconfig --cluster-version 1.31`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if labDir != "" {
				if err := fromLab(&cfg, labDir); err != nil {
					return err
				}
			}
			if cfg.Kubeconfig == "" {
				return fmt.Errorf("--kubeconfig or --lab-dir: name the cluster Karpenter acts on")
			}
			if version != "" {
				minor, ok := catalog.NormalizeMinor(version)
				if !ok {
					return fmt.Errorf("--cluster-version %q: give a Kubernetes minor such as 1.31", version)
				}
				cfg.Version = func(context.Context) (string, error) { return minor, nil }
			}
			for _, z := range strings.Split(zones, ",") {
				if z = strings.TrimSpace(z); z != "" {
					cfg.Zones = append(cfg.Zones, z)
				}
			}
			cfg.Seed = uint64(time.Now().UnixNano())
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			return labkarpenter.Run(ctx, cfg)
		},
	}
	cmd.Flags().StringVar(&cfg.Kubeconfig, "kubeconfig", "", "the lab's kubeconfig (required)")
	cmd.Flags().StringVar(&version, "cluster-version", "", "the control plane's Kubernetes minor that EC2NodeClass aliases resolve against (default: the API server's)")
	cmd.Flags().StringVar(&cfg.Region, "region", "us-west-2", "the cluster's region")
	cmd.Flags().StringVar(&zones, "zones", "us-west-2a,us-west-2b,us-west-2c", "the cluster's zones, comma-separated")
	cmd.Flags().IntVar(&cfg.MetricsPort, "metrics-port", 0, "Karpenter's metrics port (0: a free one)")
	cmd.Flags().IntVar(&cfg.HealthPort, "health-port", 0, "Karpenter's health probe port (0: a free one)")
	cmd.Flags().StringVar(&cfg.LogLevel, "log-level", "info", "Karpenter's log level: debug, info or error")
	cmd.Flags().StringVar(&labDir, "lab-dir", "", "the lab to act on: its kubeconfig, region and the EKS endpoint's cluster version")
	return cmd
}

// fromLab configures Karpenter for the lab in dir: its kubeconfig and
// region, and the control plane's version from its EKS endpoint.
func fromLab(cfg *labkarpenter.Config, dir string) error {
	st, err := lab.ReadState(dir)
	if err != nil {
		return err
	}
	if st.AWS == nil {
		return fmt.Errorf("the lab in %s serves no AWS endpoints: start it with ladder lab up --scenario", dir)
	}
	cfg.Kubeconfig, cfg.Region = st.Kubeconfig, st.AWS.Region
	api := eks.NewFromConfig(aws.Config{Region: st.AWS.Region,
		Credentials: awscreds.NewStaticCredentialsProvider(twinserve.AccessKeyID, twinserve.SecretAccessKey, "")},
		func(o *eks.Options) { o.BaseEndpoint = aws.String(st.AWS.Endpoint) })
	cluster := st.AWS.Cluster
	cfg.Version = func(ctx context.Context) (string, error) {
		out, err := api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: &cluster})
		if err != nil {
			return "", fmt.Errorf("eks DescribeCluster %s on the lab: %w", cluster, err)
		}
		return aws.ToString(out.Cluster.Version), nil
	}
	return nil
}
