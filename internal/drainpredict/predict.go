// Package drainpredict predicts what draining each node of a cluster does
// (ladder check's drain-blocked and drain-timeout-risk): each node of the
// starting cluster is drained on its own, in a fresh twin, the way kubectl
// drain --ignore-daemonsets --delete-emptydir-data --force does it
// (semantics.md §D.3: the Eviction API, a 429 retried every 5 s), and the
// pods that held the drain up, and those whose replacements fit nowhere,
// are recorded. Scenario predicts a scenario's drains in the twin
// internal/twinbuild builds; Live a running cluster's, in a twin loaded
// with what its API server lists.
package drainpredict

import (
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/drain"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// ProbeLimit bounds a predicted drain of a node that is not in a
// managed node group: Karpenter and a self-managed group's drain wait for
// as long as a PodDisruptionBudget refuses, so a drain still blocked after
// an hour is reported as one that never finishes.
const ProbeLimit = time.Hour

// drainProbeSettle is how long the probe keeps the twin running after a
// drain ends, for the evicted pods' replacements to be scheduled — time
// enough for Karpenter to launch a node for them.
const drainProbeSettle = 10 * time.Minute

// Prediction is what draining one node of the starting cluster does.
type Prediction struct {
	Node string
	// Group is the node's group in the scenario; Type as report.Group*
	// spells it (managed, self-managed, karpenter).
	Group twinbuild.GroupRef
	Zone  string
	// Limit is how long the drain may take: EKS's 15 minutes for a managed
	// node group (semantics.md §B, PodEvictionFailure), ProbeLimit
	// for the others.
	Limit time.Duration
	// Finished reports whether every pod left the node within Limit;
	// Duration is how long the drain took (Limit when it did not finish).
	Finished bool
	Duration time.Duration
	// Error is kubectl's error when the drain failed: a pod the filters
	// refuse, an eviction answered with an error other than 429 (two PDBs),
	// or the time limit.
	Error string
	// Evicted counts the pods the drain evicted (DaemonSet pods stay).
	Evicted int
	// Blocks are the pods whose eviction was refused, in pod order.
	Blocks []Block
	// Pending are the pods that fit no node once the drain is over, in pod
	// order.
	Pending []PendingPod
}

// Block is a pod whose eviction a PodDisruptionBudget (or an
// error) held up.
type Block struct {
	// Pod is namespace/name; Workload owns it (zero for a bare pod).
	Pod      string
	Workload scenario.WorkloadRef
	// PDB lists the budgets selecting the pod, namespace/name, comma-separated.
	PDB string
	// For is how long evictions were refused: until the pod was evicted,
	// or until the drain's limit.
	For time.Duration
	// Outcome is evicted, deleted, blocked (still refused at the limit) or
	// failed (an error other than 429).
	Outcome string
	// Message is the Eviction API's answer.
	Message string
}

// PendingPod is a pod left Pending by the drain.
type PendingPod struct {
	Pod      string
	Workload scenario.WorkloadRef
	// Reason is the scheduler's ("0/11 nodes are available: ...").
	Reason string
	// VolumeZones are the zones its volumes bind it to.
	VolumeZones []string
}

// Scenario drains EC2 nodes of a validated scenario's starting cluster
// (Fargate nodes are pods, restarted rather than drained) — every node of a
// group of up to PerGroup, else the PerGroup most telling — each in a
// fresh twin, in node-name order, and reports what each drain does. It is
// deterministic: the same scenario gives the same predictions.
func Scenario(sc *scenario.Scenario) ([]Prediction, error) {
	base, err := twinbuild.Build(sc, twinbuild.Options{})
	if err != nil {
		return nil, err
	}
	byGroup := map[string][]string{}
	for _, n := range base.Kube.Nodes() {
		if group, typ := base.NodeGroup(n); typ != report.GroupFargate {
			byGroup[group] = append(byGroup[group], n.Name)
		}
	}
	var nodes []string
	for _, names := range byGroup {
		if len(names) > PerGroup {
			names = mostTelling(base.Kube, names)[:PerGroup]
		}
		nodes = append(nodes, names...)
	}
	sort.Strings(nodes)
	out := make([]Prediction, 0, len(nodes))
	for i, node := range nodes {
		tw := base
		if i > 0 {
			// A fresh twin: the previous drain changed the cluster. The
			// same scenario and seed build the same starting cluster.
			if tw, err = twinbuild.Build(sc, twinbuild.Options{}); err != nil {
				return nil, err
			}
		}
		name, typ := tw.NodeGroup(tw.Kube.Node(node))
		out = append(out, predictNodeDrain(tw.Engine, tw.Kube, node, twinbuild.GroupRef{Name: name, Type: typ}))
	}
	return out, nil
}

// drainLimit is how long a drain of a node of a group of type typ may
// take: EKS's 15 minutes for a managed node group (with or without a
// custom AMI), ProbeLimit for the others.
func drainLimit(typ string) time.Duration {
	if typ == report.GroupManaged || typ == groupManagedCustomAMI {
		return nodegroup.UpgradeDrainLimit
	}
	return ProbeLimit
}

// groupManagedCustomAMI is internal/inventory's type of a managed node
// group whose launch template names an AMI (a live cluster's groups are
// typed by the inventory).
const groupManagedCustomAMI = "managed-custom-ami"

// predictNodeDrain drains one node of a twin k, running on eng, whose
// starting state is in place: kubectl drain --ignore-daemonsets
// --delete-emptydir-data --force within the group's limit, then
// drainProbeSettle for the replacements to be scheduled. Both the
// scenario's prediction and the live cluster's (live.go) use it.
func predictNodeDrain(eng *sim.Engine, k *kube.Cluster, node string, group twinbuild.GroupRef) Prediction {
	n := k.Node(node)
	p := Prediction{Node: node, Group: group, Zone: n.Labels[corev1.LabelTopologyZone], Limit: drainLimit(group.Type)}
	pendingBefore := map[string]bool{}
	for _, pod := range k.PendingPods() {
		pendingBefore[pod.Namespace+"/"+pod.Name] = true
	}
	start := eng.Now()
	finished := false
	var result error
	opts := kube.DrainOptions{Options: drain.Options{Force: true, IgnoreAllDaemonSets: true, DeleteEmptyDirData: true}, Timeout: p.Limit}
	evictable := 0
	for _, pod := range k.PodsOnNode(node) {
		if kind, _ := k.PodOwner(pod.Namespace, pod.Name); kind != "DaemonSet" && pod.DeletionTimestamp == nil {
			evictable++
		}
	}
	if err := k.Drain(node, opts, func(err error) { finished, result = true, err }); err != nil {
		p.Error = err.Error()
		return p
	}
	eng.Run(start.Add(p.Limit+time.Minute), func() bool { return finished })
	p.Duration = eng.Now().Sub(start)
	p.Finished = finished && result == nil
	if result != nil {
		p.Error = result.Error()
	}
	if !finished {
		p.Error = "the drain did not end within " + p.Limit.String()
	}
	if !p.Finished {
		p.Duration = p.Limit
	}
	p.Evicted = evictable
	for _, b := range k.DrainBlocks() {
		if b.Node != node {
			continue
		}
		until := b.Until
		if until.IsZero() {
			until = eng.Now()
		}
		pb := Block{Pod: b.Pod, PDB: b.PDB, For: until.Sub(b.Since), Outcome: b.Outcome, Message: b.Message}
		if b.Outcome == "blocked" || b.Outcome == "failed" {
			p.Evicted--
		}
		if ns, pod, ok := strings.Cut(b.Pod, "/"); ok {
			if kind, owner := k.PodOwner(ns, pod); kind != "" {
				pb.Workload = scenario.WorkloadRef{Kind: kind, Namespace: ns, Name: owner}
			}
		}
		p.Blocks = append(p.Blocks, pb)
	}
	if p.Evicted < 0 {
		p.Evicted = 0
	}
	// Give the replacements time to be scheduled, Karpenter time to launch
	// a node for them; what is still Pending then fits nowhere.
	eng.Run(eng.Now().Add(drainProbeSettle), func() bool { return len(k.PendingPods()) == 0 })
	for _, pod := range k.PendingPods() {
		pk := pod.Namespace + "/" + pod.Name
		if pendingBefore[pk] {
			continue
		}
		pp := PendingPod{Pod: pk, Reason: k.Unschedulable(pod.Namespace, pod.Name), VolumeZones: k.VolumeZones(pod)}
		if kind, owner := k.PodOwner(pod.Namespace, pod.Name); kind != "" {
			pp.Workload = scenario.WorkloadRef{Kind: kind, Namespace: pod.Namespace, Name: owner}
		}
		p.Pending = append(p.Pending, pp)
	}
	sort.Slice(p.Blocks, func(i, j int) bool { return p.Blocks[i].Pod < p.Blocks[j].Pod })
	sort.Slice(p.Pending, func(i, j int) bool { return p.Pending[i].Pod < p.Pending[j].Pod })
	return p
}
