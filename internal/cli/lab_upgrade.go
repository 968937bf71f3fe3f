package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ladder-eks/ladder/internal/lab"
)

func newLabUpgradeControlPlaneCommand() *cobra.Command {
	var dir, to string
	cmd := &cobra.Command{
		Use:   "upgrade-control-plane --to MINOR",
		Short: "Move a running lab's control plane to the next Kubernetes minor, keeping its nodes, pods and data",
		Long: `Upgrades the control plane of the lab in DIR one minor, as EKS does: stops
kube-apiserver, kube-controller-manager and kube-scheduler and starts them again
on the next minor's binaries, on the same ports with the same PKI, tokens and
flags, against the same etcd and its data. etcd and kwok (and the AWS endpoints
of a lab started with --scenario) keep running, so KWOK nodes stay Ready, pods
stay Running with the same UIDs, and kubeconfigs keep working; clients see the
new server version. Waits until the new components are healthy, then records
the version in DIR/lab.json.

--to must be exactly one minor above the lab's version, and its binaries must
be built first: "ladder lab build --kubernetes MINOR" (the second minor builds
only the three control-plane binaries; etcd and kwok are shared).`,
		Example: `  ladder lab build --kubernetes 1.37
  ladder lab up --kubernetes 1.36 --scenario workshop
  ladder lab upgrade-control-plane --to 1.37
  kubectl version                        # Server Version: v1.37.2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to == "" {
				return fmt.Errorf("--to is required: the minor to upgrade to, one of %s", labMinors())
			}
			ctx, cancel := interruptible(cmd.Context())
			defer cancel()
			return lab.UpgradeControlPlane(ctx, dir, to, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the Kubernetes minor to upgrade to, the one after the lab's: "+labMinors())
	cmd.Flags().StringVar(&dir, "dir", "", labDirHelp)
	return cmd
}
