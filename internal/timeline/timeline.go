// Package timeline is what a rehearsal did over time, as the HTML report
// (internal/htmlreport) draws it: each node's life (launched, Ready,
// cordoned, draining, gone) with its kubelet version, each node group's
// nodes by version and state, each workload's Ready replicas against its
// desired count and its PodDisruptionBudget floor, each PodDisruptionBudget's
// healthy pods against its floor with every pod taken below it, each
// Karpenter NodePool's disrupting nodes against its budget, and each blocked
// drain from its start to its end. The JSON is documented in
// docs/report-html.md.
//
// A Builder takes the samples a recorder sees while the rehearsal runs, and
// the PodDisruptionBudgets' histories the report carries, and bounds what it
// keeps: a large run keeps its nodes per group (counts, not lives), the
// workloads and budgets that suffered most, and at most MaxPoints points a
// series (and a budget's every crossing of its floor and every drop below
// it), so the report stays small for 5,000 nodes.
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
	// thinned (Thin), but for a PDB's points that must stay (ThinKeep).
	MaxPoints = 600
	// MaxPDBs is the most PodDisruptionBudgets a Timeline plots; a run with
	// more keeps those that failed safe, went below their floor or lost
	// pods below it first (SelectPDBs). MaxDrops is the most drops of one
	// budget it marks; the report's pdbs[] has every one.
	MaxPDBs  = 40
	MaxDrops = 50
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
	// PDBs are the PodDisruptionBudgets plotted, in the order of the
	// report's pdbs[]; PDBsOmitted counts those left out (MaxPDBs).
	PDBs        []PDB `json:"pdbs"`
	PDBsOmitted int   `json:"pdbsOmitted"`
	// Availability counts, over every workload (plotted or not), how many
	// had no Ready pod and how many fewer than desired, and over every
	// PodDisruptionBudget how many had fewer healthy pods than their floor.
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
	// PDBs names the PodDisruptionBudgets selecting its pods. Floor is the
	// status.desiredHealthy of those among them that select only this
	// workload's pods and whose status the disruption controller computes
	// (the highest of several), at each sample, as the report's pdbs[]
	// series has it; -1 before such a budget existed; absent when there is
	// none. SharedPDBs are the others: a budget spanning several
	// workloads has one floor for all their pods together, and one whose
	// controller fails safe allows no disruption at all, so neither is this
	// workload's floor (their charts are in PDBs).
	Floor      []int    `json:"floor,omitempty"`
	PDBs       []string `json:"pdbs,omitempty"`
	SharedPDBs []string `json:"sharedPdbs,omitempty"`
}

// PDB is a PodDisruptionBudget over the rehearsal, from the report's
// pdbs[]: its status as the disruption controller computed it, a step
// function (the values at T[i] hold until T[i+1]), and the pods taken
// below its floor.
type PDB struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Workloads are the controllers of the pods it selected, Kind/name.
	Workloads []string `json:"workloads"`
	// SyncError is set when the controller could not compute the budget
	// and failed safe, allowing no disruption.
	SyncError string `json:"syncError,omitempty"`
	// Healthy is status.currentHealthy, Desired status.desiredHealthy (its
	// floor), Allowed status.disruptionsAllowed.
	T       []float64 `json:"t"`
	Healthy []int     `json:"healthy"`
	Desired []int     `json:"desired"`
	Allowed []int     `json:"allowed"`
	// Drops are the first MaxDrops healthy pods taken down while it
	// allowed no disruption; DropsOmitted counts the others.
	Drops        []Drop `json:"drops,omitempty"`
	DropsOmitted int    `json:"dropsOmitted,omitempty"`
}

// Drop is a healthy pod taken below a PDB's floor (the report's
// pdbs[].drops[]).
type Drop struct {
	T        float64 `json:"t"`
	Pod      string  `json:"pod"`
	Node     string  `json:"node,omitempty"`
	Workload string  `json:"workload,omitempty"`
	// Cause is deleted, node-removed, rollout, scale-down or unready; By
	// says who.
	Cause string `json:"cause"`
	By    string `json:"by"`
	// Step is the playbook step it happened in (hop, kind and name, e.g.
	// "1.31 node-group blue-mng"); absent outside one.
	Step string `json:"step,omitempty"`
}

// Below reports whether the budget had fewer healthy pods than its floor
// from T[i] on.
func (p *PDB) Below(i int) bool { return p.Healthy[i] < p.Desired[i] }

// Lost is how many pods went below the floor between samples i−1 and i
// (docs/rehearsal-report.md, pdbs[].series): the drops at T[i].
func (p *PDB) Lost(i int) int {
	if i == 0 {
		return 0
	}
	return max(0, (p.Healthy[i-1]-p.Healthy[i])-max(0, p.Allowed[i-1]))
}

// Availability is how many workloads and budgets were short at each
// instant.
type Availability struct {
	T []float64 `json:"t"`
	// Zero counts workloads with no Ready pod while they wanted some.
	Zero []int `json:"zero"`
	// BelowFloor counts PodDisruptionBudgets with fewer healthy pods than
	// their floor (status.currentHealthy < desiredHealthy); BelowDesired
	// workloads with fewer Ready pods than desired.
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
