package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ladder-eks/ladder/internal/inventory"
	"github.com/ladder-eks/ladder/internal/scenario"
)

func newInventoryCommand() *cobra.Command {
	var kubeconfig, kubeContext, cluster, scenarioName, output string
	var requestTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "inventory [--kubeconfig K] [--context C] [--cluster NAME] [--scenario NAME|FILE] [-o text|json]",
		Short: "List the cluster's node groups by type and what each carries",
		Long: `Inventory lists every node group of a cluster — EKS managed (on the AMI EKS
picks, or on its own launch template: managed-custom-ami), self-managed,
Karpenter NodePool, Fargate profile — with its node count, zones, instance and
capacity types, kubelet and kube-proxy versions, AMI, and the workloads its
pods belong to: what to know before an upgrade, in one command.

Groups are recognised by the labels real nodes carry:
  eks.amazonaws.com/compute-type=fargate     Fargate (eks.amazonaws.com/fargate-profile)
  karpenter.sh/nodepool                      Karpenter
  eks.amazonaws.com/nodegroup                managed; with eks.amazonaws.com/sourceLaunchTemplateId
                                             managed-custom-ami (the cluster cannot tell an AMI
                                             pinned in the template from one EKS picks)
  alpha.eksctl.io/nodegroup-name             self-managed (eksctl)
  none of these                              self-managed, "(no group label)"
The kube-proxy version is the image tag of the kube-proxy pod on each node,
else the node's status.nodeInfo.kubeProxyVersion.

The cluster is the current context of the kubeconfig (--kubeconfig, else
$KUBECONFIG, else ~/.kube/config), or --context. With --cluster, or with
AWS_ENDPOINT_URL_EKS set (a lab's: eval "$(ladder lab env)"), the header also
gives the control plane's version as EKS's DescribeCluster reports it. With
--scenario the
inventory is of a scenario's starting cluster as Ladder's twin builds it —
the cluster "ladder lab up --scenario" materializes.

The user needs list on nodes, pods and replicasets (jobs when a Job owns a
pod), and optionally on Karpenter's nodeclaims (for Karpenter nodes' AMIs).`,
		Example: `  # The cluster of the current context
  ladder inventory

  # Another context, as JSON (schema: docs/inventory.md)
  ladder inventory --context prod -o json | jq '.groups[] | {name, type, kubeletVersions}'

  # The workshop's starting cluster, without a cluster
  ladder inventory --scenario workshop`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "json" {
				return fmt.Errorf("-o %q: use text or json", output)
			}
			if scenarioName != "" && (kubeconfig != "" || kubeContext != "" || cluster != "") {
				return fmt.Errorf("--scenario inventories a scenario, --kubeconfig/--context/--cluster a cluster: give one or the other")
			}
			var inv *inventory.Inventory
			var err error
			if scenarioName != "" {
				inv, err = scenarioInventory(scenarioName)
			} else {
				inv, err = clusterInventory(cmd.Context(), kubeconfig, kubeContext, cluster, requestTimeout)
			}
			if err != nil {
				return err
			}
			if output == "json" {
				return inv.WriteJSON(cmd.OutOrStdout())
			}
			return writeText(cmd.OutOrStdout(), inv.WriteText)
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	cmd.Flags().StringVar(&kubeContext, "context", "", "kubeconfig context to use (default: the current context)")
	cmd.Flags().StringVar(&cluster, "cluster", "", clusterFlagHelp)
	addRequestTimeout(cmd.Flags(), &requestTimeout)
	cmd.Flags().StringVar(&scenarioName, "scenario", "", "inventory a built-in scenario or scenario file instead of a cluster")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

func scenarioInventory(name string) (*inventory.Inventory, error) {
	sc, err := scenario.Resolve(name)
	if err != nil {
		return nil, err
	}
	return inventory.FromScenario(sc)
}

func clusterInventory(ctx context.Context, kubeconfig, kubeContext, clusterFlag string, requestTimeout time.Duration) (*inventory.Inventory, error) {
	kt, err := liveConfig(kubeconfig, kubeContext, requestTimeout, "inventory a scenario with --scenario")
	if err != nil {
		return nil, err
	}
	cfg, name := kt.cfg, kt.context
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig context %q: %v", name, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig context %q: %v", name, err)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	src := inventory.Source{Kind: "cluster", Name: name, Server: cfg.Host}
	if askEKS(clusterFlag) {
		cp, err := describeEKSCluster(ctx, clusterFlag, kt.entry)
		if err != nil {
			return nil, err
		}
		src.Cluster, src.ControlPlane, src.ControlPlaneSource = cp.Name, cp.Version.String(), "EKS DescribeCluster"
	}
	return inventory.FromCluster(ctx, cs, dyn, src)
}

func kubeconfigPaths(rules *clientcmd.ClientConfigLoadingRules) string {
	if rules.ExplicitPath != "" {
		return rules.ExplicitPath
	}
	if paths := rules.GetLoadingPrecedence(); len(paths) > 0 {
		return strings.Join(paths, ", ")
	}
	return "~/.kube/config"
}

func contextNames[V any](m map[string]V) string {
	if len(m) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}
