package cli

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/executor"
	"github.com/ladder-eks/ladder/internal/journal"
)

// recordOutcome reads the end state of a finished upgrade — the control
// plane's version (DescribeCluster), each add-on's (DescribeAddon), each
// node's kubelet and the kind of node group it belongs to — into the journal, for `ladder upgrade status --compare`.
func recordOutcome(ctx context.Context, lc *liveCluster, j executor.Journal) error {
	k, ok := j.(interface{ SetOutcome(journal.State) error })
	if !ok {
		return nil
	}
	st, err := observeState(ctx, lc)
	if err != nil {
		return fmt.Errorf("reading the end state: %w", err)
	}
	return k.SetOutcome(st)
}

func observeState(ctx context.Context, lc *liveCluster) (journal.State, error) {
	st := journal.State{Addons: map[string]string{}, Kubelets: map[string]int{}, Nodes: map[string]int{}}
	api := lc.aws.AWS.EKS
	c, err := api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: &lc.name})
	if err != nil {
		return st, fmt.Errorf("eks DescribeCluster: %w", err)
	}
	st.ControlPlane = aws.ToString(c.Cluster.Version)
	var token *string
	for {
		out, err := api.ListAddons(ctx, &eks.ListAddonsInput{ClusterName: &lc.name, NextToken: token})
		if err != nil {
			return st, fmt.Errorf("eks ListAddons: %w", err)
		}
		for _, name := range out.Addons {
			d, err := api.DescribeAddon(ctx, &eks.DescribeAddonInput{ClusterName: &lc.name, AddonName: aws.String(name)})
			if err != nil {
				return st, fmt.Errorf("eks DescribeAddon %s: %w", name, err)
			}
			st.Addons[name] = aws.ToString(d.Addon.AddonVersion)
		}
		if token = out.NextToken; token == nil {
			break
		}
	}
	nodes, err := lc.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return st, fmt.Errorf("listing nodes: %w", err)
	}
	for _, n := range nodes.Items {
		st.Kubelets[journal.KubeletMinor(n.Status.NodeInfo.KubeletVersion)]++
		st.Nodes[journal.NodeType(n.Labels)]++
	}
	return st, nil
}
