package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ladder-eks/ladder/internal/capture"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// captureTimeout bounds the whole capture: every list and Describe call.
const captureTimeout = 5 * time.Minute

func newCaptureCommand() *cobra.Command {
	var target liveTarget
	var to string
	cmd := &cobra.Command{
		Use:   "capture --to DIR [--kubeconfig K] [--context C] [--cluster NAME] [--region R]",
		Short: "Write a scenario of a live EKS cluster, to rehearse its upgrade",
		Long: `Capture reads a live EKS cluster and writes it as a scenario, so that
"ladder rehearse" rehearses the upgrade of your own cluster:

  DIR/scenario.yaml          the control plane (EKS DescribeCluster), its add-ons
                             (ListAddons, DescribeAddon), managed node groups
                             (DescribeNodegroup: scaling, instance and capacity types,
                             AMI type and release, launch template and its image,
                             labels, taints, update config), self-managed Auto Scaling
                             groups (DescribeAutoScalingGroups, DescribeLifecycleHooks),
                             Karpenter NodePools with the nodes their NodeClaims
                             launched, and Fargate profiles (DescribeFargateProfile)
  DIR/manifests/NS.yaml      per namespace: Deployments, StatefulSets, DaemonSets,
                             PodDisruptionBudgets, PersistentVolumeClaims, pods no
                             controller owns
  DIR/manifests/cluster.yaml Namespaces, StorageClasses, PriorityClasses,
                             PersistentVolumes (their zones), EC2NodeClasses, NodePools

Manifests are the objects as the API server stores them, without status,
managed fields, uid, resourceVersion, owner references and the annotations
controllers write. Secrets and ConfigMaps are never read. Each group's
upgrade strategy is its type's default (in-place, instance refresh, drift,
restart); edit a group's "upgrade:" block for blue/green, refresh preferences
or an AMI change.

The cluster is the kubeconfig's current context (--kubeconfig, else
$KUBECONFIG, else ~/.kube/config), or --context. The EKS cluster is --cluster,
else the name the context's cluster entry carries (aws eks update-kubeconfig
writes its ARN). AWS credentials and region come from the AWS SDK's default
chain (AWS_PROFILE, ~/.aws/config, SSO, instance and container roles;
AWS_ENDPOINT_URL_* for other endpoints, as "ladder lab env" prints); Ladder
never prints them. It needs eks:Describe*/List*, autoscaling:Describe*,
ec2:DescribeLaunchTemplateVersions and ec2:DescribeImages, and list on the
kinds above.

The written scenario is loaded and validated before capture ends: a
problem is reported with its file and field, and the files are kept.`,
		Example: `  # The current context's cluster, then its rehearsal to the next minor
  ladder capture --to ./prod
  ladder rehearse --scenario ./prod/scenario.yaml

  # Another context and an explicit cluster and region
  ladder capture --context prod --cluster prod-eks --region eu-west-1 --to ./prod`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to == "" {
				return fmt.Errorf("--to DIR is required: the directory to write scenario.yaml and manifests/ into")
			}
			// Before the cluster is read: a directory that cannot take
			// the capture should not cost one.
			if err := capture.Check(to); err != nil {
				return err
			}
			c, err := readLive(cmd.Context(), target)
			if err != nil {
				return err
			}
			if err := c.Write(to); err != nil {
				return err
			}
			return reportCapture(cmd, c, to)
		},
	}
	f := cmd.Flags()
	f.StringVar(&to, "to", "", "directory to write scenario.yaml and manifests/ into (created; must not hold a scenario.yaml)")
	target.register(f)
	return cmd
}

// readLive captures the EKS cluster of a kubeconfig context: cluster
// names it, else the context's cluster entry does.
func readLive(ctx context.Context, target liveTarget) (*capture.Capture, error) {
	ctx, cancel := context.WithTimeout(ctx, captureTimeout)
	defer cancel()
	lc, err := openLive(ctx, target)
	if err != nil {
		return nil, err
	}
	src := lc.aws
	src.Now = time.Now()
	return capture.Read(ctx, src)
}

// reportCapture prints what was written and checks it loads as a scenario.
func reportCapture(cmd *cobra.Command, c *capture.Capture, dir string) error {
	out := cmd.OutOrStdout()
	sc := c.Scenario
	cl := sc.Spec.Cluster
	byType := map[string]int{}
	nodes := 0
	for _, g := range sc.Spec.NodeGroups {
		byType[g.Type]++
		switch {
		case g.Managed != nil:
			nodes += g.Managed.Desired
		case g.SelfManaged != nil:
			nodes += g.SelfManaged.Desired
		case g.Karpenter != nil:
			nodes += len(g.Karpenter.Nodes)
		}
	}
	var groups []string
	for _, t := range []string{scenario.Managed, scenario.SelfManaged, scenario.Karpenter, scenario.Fargate} {
		if byType[t] > 0 {
			groups = append(groups, fmt.Sprintf("%d %s", byType[t], t))
		}
	}
	objects := 0
	var kinds []string
	for _, k := range c.Kinds() {
		objects += c.Counts[k]
		kinds = append(kinds, fmt.Sprintf("%s %d", k, c.Counts[k]))
	}
	path := filepath.Join(dir, capture.ScenarioFile)
	fmt.Fprintf(out, "Captured EKS cluster %s (%s, %s) into %s\n", cl.Name, cl.Version, cl.Region, path)
	fmt.Fprintf(out, "  node groups: %s (%d EC2 nodes)\n", strings.Join(groups, ", "), nodes)
	fmt.Fprintf(out, "  add-ons:     %d\n", len(sc.Spec.Addons))
	fmt.Fprintf(out, "  manifests:   %d files, %d objects (%s)\n", len(c.Files), objects, strings.Join(kinds, ", "))
	for _, n := range c.Notes {
		fmt.Fprintf(out, "  note: %s\n", n)
	}
	loaded, err := scenario.LoadFile(path)
	if err == nil {
		_, err = loaded.Validate()
	}
	if err != nil {
		return fmt.Errorf("the captured scenario does not validate (files kept in %s): %v", dir, err)
	}
	fmt.Fprintf(out, "Rehearse it: ladder rehearse --scenario %s\n", path)
	return nil
}
