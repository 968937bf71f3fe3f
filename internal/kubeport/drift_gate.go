package kubeport

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// NodePoolReplaced holds when Karpenter has finished replacing a NodePool's
// drifted nodes (semantics.md §A.3): every NodeClaim initialized and none
// deleting, none Drifted, and every node of the NodePool running a kubelet
// of Minor.
type NodePoolReplaced struct {
	NodePool string
	Minor    kubeversion.Minor
}

func (g NodePoolReplaced) String() string {
	return fmt.Sprintf("NodePool %s replaced at %s", g.NodePool, g.Minor)
}

// Condition lists NodeClaims and the NodePool's nodes.
func (g NodePoolReplaced) Condition(p Port) Condition {
	return func(ctx context.Context) (bool, error) {
		claims, err := p.ListNodeClaims(ctx)
		if err != nil {
			return false, err
		}
		for i := range claims {
			c := &claims[i]
			if c.DeletionTimestamp != nil || !c.StatusConditions().IsTrue(karpv1.ConditionTypeInitialized) ||
				c.StatusConditions().IsTrue(karpv1.ConditionTypeDrifted) {
				return false, nil
			}
		}
		nodes, err := p.ListNodes(ctx)
		if err != nil {
			return false, err
		}
		return NodesAt(pointers(nodes), karpv1.NodePoolLabelKey, g.NodePool, g.Minor), nil
	}
}

// NodesAt reports whether every node labelled key=value runs a kubelet of
// minor.
func NodesAt(nodes []*corev1.Node, key, value string, minor kubeversion.Minor) bool {
	for _, n := range nodes {
		if n.Labels[key] != value {
			continue
		}
		if v, err := kubeversion.Parse(n.Status.NodeInfo.KubeletVersion); err != nil || v != minor {
			return false
		}
	}
	return true
}

// NodesAtMinor holds when every node labelled Label=Value runs a kubelet of
// Minor: a node group has caught up with a hop.
type NodesAtMinor struct {
	Label, Value string
	Minor        kubeversion.Minor
}

func (g NodesAtMinor) String() string {
	return fmt.Sprintf("nodes %s=%s at %s", g.Label, g.Value, g.Minor)
}

// Condition lists the nodes.
func (g NodesAtMinor) Condition(p Port) Condition {
	return func(ctx context.Context) (bool, error) {
		nodes, err := p.ListNodes(ctx)
		if err != nil {
			return false, err
		}
		return NodesAt(pointers(nodes), g.Label, g.Value, g.Minor), nil
	}
}

func pointers(nodes []corev1.Node) []*corev1.Node {
	out := make([]*corev1.Node, len(nodes))
	for i := range nodes {
		out[i] = &nodes[i]
	}
	return out
}
