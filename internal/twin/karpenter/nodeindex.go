package karpenter

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// nodeIndex is what existingCapacity reads of every node on every
// simulation, kept by the twin itself: per node name, its NodeClaim
// (byNode), its fit row and whether it carries the disrupted taint. An
// entry is refreshed after the cluster reports a change to the node
// (OnNodeChange) or a NodeClaim is linked to it (linkNode). The entries are
// also kept in the cluster's node order (by name), so a pass over every
// node walks both side by side instead of looking each name up.
type nodeIndex struct {
	byName map[string]*nodeEntry
	// list follows kube's node order while ordered; a node joining or
	// leaving clears ordered, and the next walk rebuilds list in place.
	list    []*nodeEntry
	ordered bool
}

type nodeEntry struct {
	name      string
	node      *corev1.Node
	fresh     bool // claim, fit and disrupted hold
	claim     *NodeClaim
	fit       *fitRow
	disrupted bool
}

func newNodeIndex() nodeIndex { return nodeIndex{byName: map[string]*nodeEntry{}} }

// changed is what the twin observes: node was added, updated or removed
// (gone), or its NodeClaim link changed.
func (ix *nodeIndex) changed(node string, gone bool) {
	e := ix.byName[node]
	switch {
	case gone:
		if e != nil {
			delete(ix.byName, node)
			ix.ordered = false
		}
	case e == nil:
		ix.ordered = false // a node joined: the order moves
	default:
		e.fresh = false
	}
}

// entry returns node's entry, refreshed from what the twin knows now.
func (k *Karpenter) nodeEntry(node *corev1.Node) *nodeEntry {
	e := k.nodes.byName[node.Name]
	if e == nil {
		e = &nodeEntry{name: node.Name, node: node}
		k.nodes.byName[node.Name] = e
	}
	if !e.fresh {
		e.claim, e.fit, e.disrupted = k.byNode[node.Name], k.fitRowFor(node.Name), kube.HasTaint(node, DisruptedTaintKey)
		e.fresh = true
	}
	return e
}

// eachNode yields the entry of every node of the cluster in name order,
// with the node's free resources.
func (k *Karpenter) eachNode(yield func(*nodeEntry, kube.Resources) bool) {
	ix := &k.nodes
	if !ix.ordered {
		ix.list = ix.list[:0]
	}
	i := 0
	for node, free := range k.kube.NodesFree() {
		var e *nodeEntry
		if ix.ordered && i < len(ix.list) && ix.list[i].name == node.Name {
			if e = ix.list[i]; !e.fresh {
				e = k.nodeEntry(node)
			}
		} else {
			if ix.ordered { // out of step: rebuild from here
				ix.list, ix.ordered = ix.list[:i], false
			}
			e = k.nodeEntry(node)
			ix.list = append(ix.list, e)
		}
		i++
		if !yield(e, free) {
			return // an unfinished rebuild stays unordered
		}
	}
	ix.list, ix.ordered = ix.list[:i], true
}
