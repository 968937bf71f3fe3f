// Package timeline is what a rehearsal did over time, as the HTML report
// (internal/htmlreport) draws it: each node's life (launched, Ready,
// cordoned, draining, gone) with its kubelet version, each node group's
// nodes by version and state, each workload's Ready replicas against its
// desired count and its PodDisruptionBudget floor, each Karpenter NodePool's
// disrupting nodes against its budget, and each blocked drain from its start
// to its end. The JSON is documented in docs/report-html.md.
//
// A Builder takes the samples a recorder sees while the rehearsal runs and
// bounds what it keeps: a large run keeps its nodes per group (counts, not
// lives), the workloads that suffered most, and at most MaxPoints points a
// series, so the report stays small for 5,000 nodes.
package timeline

// Limits of what a Timeline keeps.
const (
	// MaxNodeLives is the most nodes whose lives a Timeline lists one by
	// one; a run with more keeps only its groups' counts.
	MaxNodeLives = 500
	// MaxWorkloads is the most workloads whose Ready replicas a Timeline
	// plots; a run with more keeps those that suffered most (Select).
	MaxWorkloads = 60
	// MaxPoints is the most points of one series; a longer one is
	// thinned (Thin).
	MaxPoints = 600
)

// Node states, in the order a node goes through them.
const (
	Launching = "launching" // registered, never Ready yet
	Ready     = "ready"     // Ready and schedulable
	NotReady  = "not-ready" // was Ready, is not
	Cordoned  = "cordoned"  // unschedulable (cordoned or tainted for disruption), not draining yet
	Draining  = "draining"  // its pods are being evicted; ends when the node is gone
)

// States are the node states in lifecycle order.
var States = []string{Launching, Ready, NotReady, Cordoned, Draining}

// Timeline is a rehearsal over time. Times are virtual seconds since the
// scenario's start, as everywhere in the rehearsal report.
type Timeline struct {
	// End is the makespan: where whatever is still open ends.
	End float64 `json:"endSeconds"`
	// Versions are the kubelet versions of every node seen, sorted.
	Versions []string `json:"versions"`
	// Groups are the node groups, by name, with their nodes counted by
	// version and state over time.
	Groups []Group `json:"groups"`
	// Nodes are every node's life, ordered by group, then launch, then
	// name; empty when more than MaxNodeLives nodes were seen
	// (NodesSeen says how many).
	Nodes     []NodeLife `json:"nodes"`
	NodesSeen int        `json:"nodesSeen"`
	// Workloads are the workloads plotted, sorted by namespace, name and
	// kind; WorkloadsOmitted counts those left out (MaxWorkloads).
	Workloads        []Workload `json:"workloads"`
	WorkloadsOmitted int        `json:"workloadsOmitted"`
	// Availability counts, over every workload (plotted or not), how many
	// had no Ready pod, fewer than their PDB floor, fewer than desired.
	Availability Availability `json:"availability"`
	// NodePools are the Karpenter NodePools, by name.
	NodePools []NodePool `json:"nodePools"`
	// Blocked are the pods that held up a drain or a disruption, in the
	// order of the report's blocked[].
	Blocked []Blocked `json:"blocked,omitempty"`
}

// NodeLife is one node from launch to gone. A time is absent when the node
// never got there.
type NodeLife struct {
	Name    string `json:"name"`
	Group   string `json:"group"`
	Version string `json:"version"`
	// Initial is true for a node of the starting cluster: Launched is 0.
	Initial  bool     `json:"initial,omitempty"`
	Launched float64  `json:"launched"`
	Ready    *float64 `json:"ready,omitempty"`
	Cordoned *float64 `json:"cordoned,omitempty"`
	Draining *float64 `json:"draining,omitempty"`
	Gone     *float64 `json:"gone,omitempty"`
}

// Group is a node group's nodes counted by kubelet version and state: at
// T[i], Series[j].Counts[i] nodes of Series[j].Version were in
// Series[j].State.
type Group struct {
	Name   string        `json:"name"`
	Type   string        `json:"type"`
	T      []float64     `json:"t"`
	Series []CountSeries `json:"series"`
}

// CountSeries is one version and state of a group, aligned with Group.T.
type CountSeries struct {
	Version string `json:"version"`
	State   string `json:"state"`
	Counts  []int  `json:"counts"`
}

// Workload is a workload's Ready replicas over time, a step function: the
// values at T[i] hold until T[i+1].
type Workload struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Kind      string    `json:"kind"`
	T         []float64 `json:"t"`
	Ready     []int     `json:"ready"`
	Desired   []int     `json:"desired"`
	// Floor is the PodDisruptionBudget's status.desiredHealthy at each
	// sample (the highest of several); absent when no PDB selects the
	// workload's pods. PDBs names them.
	Floor []int    `json:"floor,omitempty"`
	PDBs  []string `json:"pdbs,omitempty"`
}

// Availability is how many workloads were short at each instant.
type Availability struct {
	T []float64 `json:"t"`
	// Zero counts workloads with no Ready pod while they wanted some.
	Zero []int `json:"zero"`
	// BelowFloor counts workloads with fewer Ready pods than their PDB's
	// floor; BelowDesired those with fewer than desired.
	BelowFloor   []int `json:"belowFloor"`
	BelowDesired []int `json:"belowDesired"`
}

// NodePool is a Karpenter NodePool's nodes consuming its disruption budget
// against what the budget allows for drift, over time.
type NodePool struct {
	Name  string    `json:"name"`
	Group string    `json:"group"`
	T     []float64 `json:"t"`
	// Disrupting counts nodes marked for deletion or deleting until their
	// instance terminates (semantics.md §A.1b); Allowed is the budget for
	// Drifted over the pool's nodes then (GetAllowedDisruptionsByReason).
	Disrupting []int `json:"disrupting"`
	Allowed    []int `json:"allowed"`
}

// Blocked is a pod that held up a node's drain or disruption, from From
// to To (the end when it still did).
type Blocked struct {
	Node    string  `json:"node"`
	Pod     string  `json:"pod"`
	PDB     string  `json:"pdb"`
	From    float64 `json:"from"`
	To      float64 `json:"to"`
	Outcome string  `json:"outcome"`
	Message string  `json:"message"`
}
