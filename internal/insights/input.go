package insights

import (
	"sync"
	"time"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// Input is everything the checks read: the objects the sources decoded,
// the documents that could not be read, the versions, and — from a live
// cluster or a scenario — facts about the cluster.
type Input struct {
	// Target is the Kubernetes minor the upgrade goes to.
	Target kubeversion.Minor
	// Current is the control plane's minor now; zero when only manifests
	// were given (then the report covers the single hop to Target).
	Current kubeversion.Minor
	// Now is the instant budgets and support windows are evaluated at.
	Now time.Time
	// Objects are the decoded objects, in source order.
	Objects []*Object
	// Problems are documents, or fields, that could not be read; the
	// invalid-manifest check reports them.
	Problems []Problem
	// Cluster holds facts only a live cluster or a scenario gives; nil
	// when the input is manifests only.
	Cluster *Cluster

	once      sync.Once
	byKind    map[string][]*Object
	workOnce  sync.Once
	workloads []*Workload
	pdbList   []*PDB
}

// Cluster is what Ladder knows about the cluster beyond its objects. The
// live and scenario sources fill it; checks that need it declare
// NeedsCluster.
type Cluster struct {
	// Name is the EKS cluster's name.
	Name string
	// Version is the control plane's minor (also Input.Current).
	Version kubeversion.Minor
	// Nodes are the cluster's nodes.
	Nodes []Node
}

// Node is one node as the cluster reports it.
type Node struct {
	Name           string
	KubeletVersion string // "v1.30.14-eks-f69f56f"
	// Group names the node's node group, NodePool or Fargate profile.
	Group  string
	Zone   string
	Labels map[string]string
}

// Add appends objects, e.g. from one more source.
func (in *Input) Add(objs []*Object, problems []Problem) {
	in.Objects = append(in.Objects, objs...)
	in.Problems = append(in.Problems, problems...)
}

// Hops are the minors the upgrade passes through, one per hop: Current+1 …
// Target, or just Target when Current is unknown.
func (in *Input) Hops() []kubeversion.Minor {
	if in.Current.IsZero() || !in.Current.Less(in.Target) {
		return []kubeversion.Minor{in.Target}
	}
	var hops []kubeversion.Minor
	for v := in.Current.Next(); !in.Target.Less(v); v = v.Next() {
		hops = append(hops, v)
	}
	return hops
}

// FirstHop is the first hop of the upgrade (Target when Current is unknown).
func (in *Input) FirstHop() kubeversion.Minor { return in.Hops()[0] }

// MultiHop reports whether the report covers more than one hop.
func (in *Input) MultiHop() bool { return len(in.Hops()) > 1 }

// has reports whether the input has everything a check needs.
func (in *Input) has(n Needs) bool {
	if n&NeedsCurrent != 0 && in.Current.IsZero() {
		return false
	}
	if n&NeedsCluster != 0 && in.Cluster == nil {
		return false
	}
	return true
}

// Kind returns the objects of a kind (any apiVersion), in source order.
func (in *Input) Kind(kind string) []*Object {
	in.once.Do(func() {
		in.byKind = map[string][]*Object{}
		for _, o := range in.Objects {
			in.byKind[o.Kind] = append(in.byKind[o.Kind], o)
		}
	})
	return in.byKind[kind]
}
