// Package report holds the rehearsal report — the JSON schema documented in
// docs/rehearsal-report.md — and its kubectl-like text rendering.
package report

import (
	"encoding/json"
	"io"
)

// Status values.
const (
	Succeeded = "succeeded" // every action ran and the cluster settled
	Failed    = "failed"    // an action was refused (e.g. an n+2 control-plane update)
	Stuck     = "stuck"     // the virtual-time limit was reached before the cluster settled
	// Violated: every action ran and the cluster settled, but a pod was
	// taken down while a PodDisruptionBudget selecting it allowed no
	// disruption (Violations says which), or a rollout held a budget below
	// its floor (RolloutsBelowFloor). For a phase: the step succeeded that
	// way.
	Violated = "violated"
)

// Group types.
const (
	GroupManaged     = "managed"
	GroupSelfManaged = "self-managed"
	GroupKarpenter   = "karpenter"
	GroupFargate     = "fargate"
)

// Report is the outcome of one rehearsal.
type Report struct {
	Scenario         string       `json:"scenario"`
	Seed             uint64       `json:"seed"`
	Status           string       `json:"status"`
	Start            string       `json:"start"`
	MakespanSeconds  float64      `json:"makespanSeconds"`
	TimeLimitSeconds float64      `json:"timeLimitSeconds"`
	ControlPlane     ControlPlane `json:"controlPlane"`
	Nodes            []Node       `json:"nodes"`
	Workloads        []Workload   `json:"workloads"`
	Groups           []Group      `json:"groups"`
	Blocked          []Blocked    `json:"blocked"`
	// Violations are the pods taken down while a PodDisruptionBudget
	// selecting them allowed no disruption, in the order it happened;
	// absent when there were none.
	Violations []Violation `json:"violations,omitempty"`
	// PDBs are the PodDisruptionBudgets over the run, their status as the
	// disruption controller computed it, change by change, and every pod
	// taken below their floor; absent when the cluster has none.
	PDBs []PDB `json:"pdbs,omitempty"`
	// RolloutsBelowFloor are the spans in which a workload's own controller
	// (a rollout, a scale-down) held a PodDisruptionBudget below its floor:
	// PDBs do not guard rollouts. Absent when there were none.
	RolloutsBelowFloor []RolloutBelowFloor `json:"rolloutsBelowFloor,omitempty"`
	// Hops, Phases, Addons and Probe describe a playbook upgrade (spec.upgrade
	// or an upgrade action); empty when the scenario ran only a script.
	Hops   []Hop   `json:"hops"`
	Phases []Phase `json:"phases"`
	Addons []Addon `json:"addons"`
	Probe  *Probe  `json:"probe"`
	// Stuck says, when status is stuck, what did not finish and why.
	Stuck []string `json:"stuck,omitempty"`
	// Failure says, when status is failed, which action was refused and why.
	Failure string `json:"failure,omitempty"`
	// Notes are things the reader must know to trust the numbers (forced
	// PDB violations, ignored manifest kinds).
	Notes  []string `json:"notes,omitempty"`
	Events []Event  `json:"events"`
}

// ControlPlane is the EKS control plane at the end.
type ControlPlane struct {
	Version string `json:"version"`
	// From is the version at the start.
	From string `json:"from"`
	// Endpoint and OIDCIssuer are the cluster's; an update keeps both.
	Endpoint   string `json:"endpoint"`
	OIDCIssuer string `json:"oidcIssuer"`
}

// Hop is one minor version of a playbook upgrade.
type Hop struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Phase is one step of a playbook upgrade.
type Phase struct {
	// Hop indexes hops[].
	Hop int `json:"hop"`
	// Kind is pre-checks, control-plane, addon or node-group.
	Kind string `json:"kind"`
	// Name is the add-on or node group.
	Name     string  `json:"name,omitempty"`
	Strategy string  `json:"strategy,omitempty"`
	From     string  `json:"from,omitempty"`
	To       string  `json:"to,omitempty"`
	Start    float64 `json:"startSeconds"`
	End      float64 `json:"endSeconds"`
	// Status is succeeded, violated, failed or stuck.
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
	// ProbeFailedSeconds are the probe's failed seconds during the phase.
	ProbeFailedSeconds float64 `json:"probeFailedSeconds"`
	// PDBViolations are the violations[] that happened during the phase.
	PDBViolations int `json:"pdbViolations,omitempty"`
}

// Addon is an EKS add-on's version before and after.
type Addon struct {
	Name string `json:"name"`
	From string `json:"from"`
	To   string `json:"to"`
	Note string `json:"note,omitempty"`
}

// Probe is the availability probe's result.
type Probe struct {
	Name          string  `json:"name"`
	Seconds       float64 `json:"seconds"`
	FailedSeconds float64 `json:"failedSeconds"`
	// Outages are the runs of failed seconds.
	Outages []Outage `json:"outages"`
}

// Outage is a run of failed probe seconds and the workloads without a
// Ready pod when it began.
type Outage struct {
	Start   float64  `json:"startSeconds"`
	End     float64  `json:"endSeconds"`
	Missing []string `json:"missing"`
}

// Node is one node at the end, as kubectl get nodes shows it.
type Node struct {
	Name         string  `json:"name"`
	Group        string  `json:"group"`
	GroupType    string  `json:"groupType"`
	Version      string  `json:"version"`
	Ready        bool    `json:"ready"`
	InstanceType string  `json:"instanceType"`
	Zone         string  `json:"zone"`
	CapacityType string  `json:"capacityType,omitempty"`
	AMI          string  `json:"ami,omitempty"`
	AgeSeconds   float64 `json:"ageSeconds"`
	Schedulable  bool    `json:"schedulable"`
}

// Workload is one workload's availability over the rehearsal.
type Workload struct {
	Namespace        string  `json:"namespace"`
	Name             string  `json:"name"`
	Kind             string  `json:"kind"`
	Desired          int32   `json:"desired"`
	Ready            int     `json:"ready"`
	MinReady         int     `json:"minReady"`
	ZeroReadySeconds float64 `json:"zeroReadySeconds"`
	PDBViolations    int     `json:"pdbViolations"`
	// UnschedulableSeconds is the longest one of its pods stayed Pending
	// because no node fitted it.
	UnschedulableSeconds float64 `json:"unschedulableSeconds"`
}

// Group is one node group's upgrade.
type Group struct {
	Name                     string `json:"name"`
	Type                     string `json:"type"`
	Nodes                    int    `json:"nodes"`
	Replaced                 int    `json:"replaced"`
	Launched                 int    `json:"launched"`
	MaxConcurrentDisruptions int    `json:"maxConcurrentDisruptions"`
	// Strategy is how the playbook upgraded the group, if it did.
	Strategy string `json:"strategy,omitempty"`
	// SurgeNodes are nodes launched above the group's size during its update.
	SurgeNodes int `json:"surgeNodes"`
}

// Blocked is a pod that held up a node's drain or disruption: a managed
// node group's, Karpenter's, a drain action's or Ladder's own (blue/green's
// blue nodes, --strategy ladder).
type Blocked struct {
	Node    string  `json:"node"`
	Pod     string  `json:"pod"`
	PDB     string  `json:"pdb"`
	Seconds float64 `json:"seconds"`
	// Outcome: evicted (the PDB later allowed it), forced (deleted at the
	// terminationGracePeriod), blocked (still blocked at the end),
	// disruption-blocked (Karpenter would not start disrupting the node),
	// unblocked (it later would), node-removed, deleted (the pod went
	// without the Eviction API), failed (the drain stopped on it).
	Outcome string `json:"outcome"`
	Message string `json:"message"`
}

// Violation is a pod taken down without the Eviction API while a
// PodDisruptionBudget selecting it allowed no disruption
// (status.disruptionsAllowed 0): the eviction would have been refused.
type Violation struct {
	// T is when, in virtual seconds since the start.
	T float64 `json:"t"`
	// Pod is namespace/name; Node the node it ran on.
	Pod  string `json:"pod"`
	Node string `json:"node"`
	// PDB is namespace/name of the budget(s) that allowed no disruption,
	// comma-separated if several.
	PDB string `json:"pdb"`
	// Mechanism is deleted (DELETE without the Eviction API) or
	// node-removed (its node went away with the pod running); By says who,
	// e.g. DeleteNodegroup blue-mng.
	Mechanism string `json:"mechanism"`
	By        string `json:"by"`
	// Hop, Step and Name locate the playbook phase it happened in (the
	// hop's target minor, the phase's kind and name); empty outside one.
	Hop  string `json:"hop,omitempty"`
	Step string `json:"step,omitempty"`
	Name string `json:"name,omitempty"`
}

// Event is one timeline line.
type Event struct {
	T       float64  `json:"t"` // seconds since the start
	Type    string   `json:"type"`
	Message string   `json:"message"`
	Node    string   `json:"node"`
	Group   string   `json:"group"`
	Reason  string   `json:"reason"`
	Source  string   `json:"source"` // scenario, karpenter, kubernetes
	Code    string   `json:"code"`
	Fields  []string `json:"fields,omitempty"`
}

// WriteJSON writes the report as indented JSON with a trailing newline.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// PDB is one PodDisruptionBudget over the rehearsal.
type PDB struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// MinAvailable or MaxUnavailable, as written.
	MinAvailable   string `json:"minAvailable,omitempty"`
	MaxUnavailable string `json:"maxUnavailable,omitempty"`
	// Workloads are the controllers of the pods it selected, Kind/name.
	Workloads []string `json:"workloads"`
	// SyncError is the disruption controller's error when it could not
	// compute the budget and failed safe, allowing no disruption (a
	// DaemonSet's pods under maxUnavailable or a percentage).
	SyncError string `json:"syncError,omitempty"`
	// MinHealthy is the fewest healthy pods it had; BelowFloorSeconds how
	// long it had fewer than desiredHealthy.
	MinHealthy        int32   `json:"minHealthy"`
	BelowFloorSeconds float64 `json:"belowFloorSeconds"`
	// Series is its status at the start and after every change.
	Series PDBSeries `json:"series"`
	// Drops are the healthy pods taken down while it allowed no
	// disruption, in order.
	Drops []Drop `json:"drops,omitempty"`
}

// PDBSeries is a PDB's status over time, one entry per change, in
// parallel arrays: t (seconds since the start), status.currentHealthy,
// desiredHealthy, expectedPods and disruptionsAllowed. Between entries i−1
// and i the pods taken below the floor number
// max(0, (healthy[i−1] − healthy[i]) − max(0, allowed[i−1])): drops[] lists
// each, at t[i].
type PDBSeries struct {
	T        []float64 `json:"t"`
	Healthy  []int32   `json:"healthy"`
	Desired  []int32   `json:"desired"`
	Expected []int32   `json:"expected"`
	Allowed  []int32   `json:"allowed"`
}

// Drop causes.
const (
	CauseDeleted     = "deleted"      // DELETE without the Eviction API
	CauseNodeRemoved = "node-removed" // its node went away with it
	CauseRollout     = "rollout"      // its controller replaced it with a newer revision
	CauseScaleDown   = "scale-down"   // its controller removed it to run fewer
	CauseUnready     = "unready"      // it turned unready while running
)

// Drop is a healthy pod a PDB selected taken down while the PDB allowed
// no disruption.
type Drop struct {
	T        float64 `json:"t"`
	Pod      string  `json:"pod"`
	Node     string  `json:"node,omitempty"`
	Workload string  `json:"workload,omitempty"`
	// Cause is deleted, node-removed (both also in violations[]),
	// rollout, scale-down (in rolloutsBelowFloor[]) or unready; By says who.
	Cause string `json:"cause"`
	By    string `json:"by"`
	// Hop, Step and Name locate the playbook phase it happened in.
	Hop  string `json:"hop,omitempty"`
	Step string `json:"step,omitempty"`
	Name string `json:"name,omitempty"`
}

// RolloutBelowFloor is a span in which a workload's own controller held a
// PDB below its floor: from the first pod it took below the floor until
// the budget had its desiredHealthy again (or the end of the run).
type RolloutBelowFloor struct {
	PDB      string `json:"pdb"`
	Workload string `json:"workload"` // Kind/namespace/name
	// Cause is rollout or scale-down.
	Cause   string  `json:"cause"`
	Start   float64 `json:"startSeconds"`
	End     float64 `json:"endSeconds"`
	Seconds float64 `json:"seconds"`
	// Pods is how many pods it took below the floor; MinHealthy the fewest
	// healthy pods in the span, Desired the floor.
	Pods       int   `json:"pods"`
	MinHealthy int32 `json:"minHealthy"`
	Desired    int32 `json:"desired"`
	// Ongoing: still below the floor when the run ended.
	Ongoing bool   `json:"ongoing,omitempty"`
	Hop     string `json:"hop,omitempty"`
	Step    string `json:"step,omitempty"`
	Name    string `json:"name,omitempty"`
}
