package executor

import (
	"context"
	"errors"
	"slices"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/eviction"
	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/plan"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// GroupNodes are the nodes of a node-group step's group: its managed node
// group (and a blue/green group's green one), its self-managed group, its
// Karpenter NodePool or its Fargate profile, by the labels each puts on
// its nodes.
func (e *Executor) GroupNodes(nodes []corev1.Node, st plan.Step) []*corev1.Node {
	g := e.Groups[st.Name]
	key, values := nodegroupLabel, []string{st.Name}
	switch st.Strategy {
	case scenario.BlueGreen:
		if g.Green != nil {
			values = append(values, g.Green.Name)
		}
	case scenario.InstanceRefresh, scenario.Ladder:
		key = selfManagedLabel
	case scenario.Drift:
		key, values = karpv1.NodePoolLabelKey, []string{g.NodePool}
	case scenario.Restart:
		key = fargateProfileLabel
	}
	var out []*corev1.Node
	for i := range nodes {
		if v, ok := nodes[i].Labels[key]; ok && slices.Contains(values, v) {
			out = append(out, &nodes[i])
		}
	}
	return out
}

// AtMinor counts the nodes that run a kubelet of minor.
func AtMinor(nodes []*corev1.Node, minor kubeversion.Minor) int {
	n := 0
	for _, node := range nodes {
		if atMinor(node, minor) {
			n++
		}
	}
	return n
}

func atMinor(n *corev1.Node, minor kubeversion.Minor) bool {
	v, err := kubeversion.Parse(n.Status.NodeInfo.KubeletVersion)
	return err == nil && v == minor
}

// groupProgress is a node-group step's group as its journal entry keeps
// it when the step ends: how many of its nodes run the hop's minor and,
// when the step failed, the pod on a node still to replace whose
// PodDisruptionBudget allows no disruption — the drain EKS or Karpenter
// waits on (semantics.md §B: a managed node group's update fails with
// PodEvictionFailure without naming the pod; the cluster does).
func (e *Executor) groupProgress(ctx context.Context, en *Entry, st plan.Step, to kubeversion.Minor, stepErr error) {
	k := e.Ports.Kube
	all, err := k.ListNodes(ctx)
	if err != nil {
		return // the entry is still worth recording without the counts
	}
	nodes := e.GroupNodes(all, st)
	en.Nodes, en.NodesAtVersion = len(nodes), AtMinor(nodes, to)
	present := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		present[n.Name] = true
	}
	before, _ := e.Journal.Get(e.stepKey + "/" + OutdatedOp)
	en.Replaced = 0
	for _, name := range before.Outdated {
		if !present[name] {
			en.Replaced++
		}
	}
	if stepErr == nil || en.Nodes == en.NodesAtVersion {
		return
	}
	// Ladder's own drain knows the pod and PDB it waited on.
	var blocked *DrainBlocked
	if errors.As(stepErr, &blocked) && len(blocked.PDBs) > 0 {
		en.BlockedPod, en.BlockedPDB, en.BlockedNode = blocked.Pod, blocked.PDBs[0], blocked.Node
		return
	}
	pdbs, err := k.ListPDBs(ctx, "")
	if err != nil {
		return
	}
	exhausted := make([]*policyv1.PodDisruptionBudget, 0, len(pdbs))
	for i := range pdbs {
		if pdbs[i].Status.DisruptionsAllowed == 0 {
			exhausted = append(exhausted, &pdbs[i])
		}
	}
	if len(exhausted) == 0 {
		return
	}
	for _, n := range nodes {
		if atMinor(n, to) {
			continue
		}
		pods, err := k.ListPods(ctx, kubeport.PodQuery{Node: n.Name})
		if err != nil {
			return
		}
		for i := range pods {
			if m := eviction.MatchingPDBs(&pods[i], exhausted); len(m) > 0 {
				en.BlockedPod = pods[i].Namespace + "/" + pods[i].Name
				en.BlockedPDB = m[0].Namespace + "/" + m[0].Name
				en.BlockedNode = n.Name
				return
			}
		}
	}
}

// OutdatedOp is the operation key, under a node-group step's, of the
// record of its group's outdated nodes.
const OutdatedOp = "outdated"

// recordOutdated records, for each node-group step of the hop, its
// group's nodes below the hop's minor, unless an earlier run recorded
// them: a resumed hop keeps its first run's list (the nodes replaced since
// still count as replaced by it). Nothing is recorded when the nodes
// cannot be listed; the steps are still worth carrying out.
func (e *Executor) recordOutdated(ctx context.Context, h plan.Hop) error {
	if e.Journal == nil {
		return nil
	}
	var all []corev1.Node
	for _, st := range h.Steps {
		key := StepKey(h, st) + "/" + OutdatedOp
		if _, ok := e.Journal.Get(key); st.Kind != plan.NodeGroup || ok || e.done(StepKey(h, st)) {
			continue
		}
		if all == nil {
			var err error
			if all, err = e.Ports.Kube.ListNodes(ctx); err != nil {
				return nil
			}
		}
		names := []string{}
		for _, n := range e.GroupNodes(all, st) {
			if !atMinor(n, h.To) {
				names = append(names, n.Name)
			}
		}
		slices.Sort(names)
		if err := e.record(key, Entry{State: Called, Outdated: names}); err != nil {
			return err
		}
	}
	return nil
}
