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
}

// Group is one node group's upgrade.
type Group struct {
	Name                     string `json:"name"`
	Type                     string `json:"type"`
	Nodes                    int    `json:"nodes"`
	Replaced                 int    `json:"replaced"`
	Launched                 int    `json:"launched"`
	MaxConcurrentDisruptions int    `json:"maxConcurrentDisruptions"`
}

// Blocked is a pod that held up a node's drain or disruption.
type Blocked struct {
	Node    string  `json:"node"`
	Pod     string  `json:"pod"`
	PDB     string  `json:"pdb"`
	Seconds float64 `json:"seconds"`
	// Outcome: evicted (the PDB later allowed it), forced (deleted at the
	// terminationGracePeriod), blocked (still blocked at the end),
	// disruption-blocked (Karpenter would not start disrupting the node),
	// unblocked (it later would), node-removed.
	Outcome string `json:"outcome"`
	Message string `json:"message"`
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
