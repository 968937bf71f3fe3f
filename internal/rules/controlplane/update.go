// Package controlplane holds the rules UpdateClusterVersion applies before
// it accepts an update, as pure functions of the cluster's version, the
// target and the data plane's versions (semantics.md §E "EKS control-plane
// version update", §D.4). The control-plane twin, `ladder check` and the
// executor ask the same functions.
package controlplane

import (
	"fmt"
	"maps"
	"slices"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// Precondition says which node versions an update requires (semantics.md §E
// "Node precondition", §D.4).
type Precondition int

const (
	// Strict is the API reference's rule — every managed node group at the
	// control plane's minor — plus the skew policy for every kubelet against
	// the new version.
	Strict Precondition = iota
	// Relaxed is the user guide's allowance: node groups may trail, as long
	// as every kubelet stays within the skew policy of the new version
	// ("If the kubelet on your managed and Fargate nodes is on Kubernetes
	// version 1.25 or newer, you can update your cluster up to three versions
	// ahead without updating the kubelet version").
	Relaxed
)

// DataPlane is what the precondition reads of the cluster's nodes: the
// managed node groups' versions (DescribeNodegroup's version) by group
// name, and every node's kubelet version (status.nodeInfo.kubeletVersion)
// by node name. Either may be nil.
type DataPlane struct {
	NodeGroups map[string]kubeversion.Minor
	Kubelets   map[string]string
}

// CheckVersionStep refuses the targets EKS refuses whatever the nodes run:
// the current version, a downgrade ("Once you upgrade a cluster, you can't
// downgrade") and more than one minor ahead ("you can update only one minor
// version at a time"), semantics.md §E.
func CheckVersionStep(current, target kubeversion.Minor) error {
	switch d := target.Sub(current); {
	case d == 0:
		return fmt.Errorf("InvalidParameterException: the cluster is already at Kubernetes %s", target)
	case d < 0:
		return fmt.Errorf("InvalidParameterException: unsupported Kubernetes minor version update from %s to %s: Amazon EKS clusters cannot be downgraded", current, target)
	case d > 1:
		return fmt.Errorf("InvalidParameterException: unsupported Kubernetes minor version update from %s to %s: Amazon EKS updates one minor version at a time (update to %s first)", current, target, current.Next())
	}
	return nil
}

// CheckPrecondition reports the first node group or node that keeps a
// control plane at current from going to target, in name order, with what
// to do about it. Strict requires every managed node group at current (the
// API reference's rule, §E); both modes require every kubelet within the
// skew policy of target: at most three minors behind, two for kubelets
// older than 1.25 (§D.4).
func CheckPrecondition(current, target kubeversion.Minor, nodes DataPlane, pre Precondition) error {
	if pre == Strict {
		for _, name := range slices.Sorted(maps.Keys(nodes.NodeGroups)) {
			if v := nodes.NodeGroups[name]; v != current {
				return fmt.Errorf("InvalidRequestException: node group %s is at Kubernetes %s; all managed node groups must be at the cluster's version %s before it can be updated (update the node group first, or relax the precondition as the EKS user guide allows for kubelets within the skew policy)", name, v, current)
			}
		}
	}
	for _, node := range slices.Sorted(maps.Keys(nodes.Kubelets)) {
		v, err := kubeversion.Parse(nodes.Kubelets[node])
		if err != nil {
			return fmt.Errorf("node %s reports kubelet %q: %v", node, nodes.Kubelets[node], err)
		}
		if !kubeversion.KubeletSkewOK(target, v) {
			skew := kubeversion.MaxKubeletSkew(v)
			return fmt.Errorf("node %s runs kubelet %s, more than %d minor versions behind Kubernetes %s (version skew policy): upgrade its node group to %s or later first",
				node, nodes.Kubelets[node], skew, target, kubeversion.Minor{Major: target.Major, Minor: target.Minor - skew})
		}
	}
	return nil
}
