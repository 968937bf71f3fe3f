package executor

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/controlplane"
)

// PreCheckAPI is the part of the EKS API (awsport.EKS) the pre-checks call
// besides DescribeCluster: the managed node groups and their versions.
type PreCheckAPI interface {
	ListNodegroups(ctx context.Context, params *eks.ListNodegroupsInput, optFns ...func(*eks.Options)) (*eks.ListNodegroupsOutput, error)
	DescribeNodegroup(ctx context.Context, params *eks.DescribeNodegroupInput, optFns ...func(*eks.Options)) (*eks.DescribeNodegroupOutput, error)
}

// PreChecks asks, before a hop, what UpdateClusterVersion will ask
// (semantics.md §E "Node precondition", §D.4): every managed node group at
// the control plane's minor (unless the precondition is relaxed), every
// kubelet within the skew policy of the hop's version. It reads the cluster
// as a client does — DescribeCluster, ListNodegroups and DescribeNodegroup,
// the nodes' status.nodeInfo.kubeletVersion — and answers with the rule
// the control plane applies (controlplane.CheckPrecondition), so a hop
// that EKS would refuse stops here, before anything has changed.
func (e *Executor) PreChecks(ctx context.Context, to kubeversion.Minor) error {
	cluster, err := e.describeCluster(ctx)
	if err != nil {
		return err
	}
	current, err := kubeversion.Parse(aws.ToString(cluster.Version))
	if err != nil {
		return fmt.Errorf("cluster %s reports version %q: %v", e.Cluster, aws.ToString(cluster.Version), err)
	}
	var data controlplane.DataPlane
	if data.NodeGroups, err = e.nodegroupVersions(ctx); err != nil {
		return err
	}
	nodes, err := e.Ports.Kube.ListNodes(ctx)
	if err != nil {
		return err
	}
	data.Kubelets = make(map[string]string, len(nodes))
	for i := range nodes {
		data.Kubelets[nodes[i].Name] = nodes[i].Status.NodeInfo.KubeletVersion
	}
	if err := controlplane.CheckPrecondition(current, to, data, e.Precondition); err != nil {
		return fmt.Errorf("pre-check for %s: %v", to, err)
	}
	e.Observer.Event("Normal", "PreChecksPassed", fmt.Sprintf("pre-checks for %s passed: managed node groups at %s, every kubelet within the skew policy of %s", to, current, to))
	return nil
}

// nodegroupVersions is every managed node group's Kubernetes version, page
// by page of ListNodegroups.
func (e *Executor) nodegroupVersions(ctx context.Context) (map[string]kubeversion.Minor, error) {
	out := map[string]kubeversion.Minor{}
	in := &eks.ListNodegroupsInput{ClusterName: aws.String(e.Cluster)}
	for {
		page, err := e.Ports.EKS.ListNodegroups(ctx, in)
		if err != nil {
			return nil, apiError(err)
		}
		for _, name := range page.Nodegroups {
			ng, err := e.Ports.EKS.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String(e.Cluster), NodegroupName: aws.String(name)})
			if err != nil {
				return nil, apiError(err)
			}
			v, err := kubeversion.Parse(aws.ToString(ng.Nodegroup.Version))
			if err != nil {
				return nil, fmt.Errorf("node group %s reports version %q: %v", name, aws.ToString(ng.Nodegroup.Version), err)
			}
			out[name] = v
		}
		if page.NextToken == nil {
			return out, nil
		}
		in.NextToken = page.NextToken
	}
}
