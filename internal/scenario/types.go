// Package scenario reads, validates and generates scenario files: a cluster
// (control plane, zones, node groups of every kind EKS has, an instance-type
// catalog) with its workloads given as real Kubernetes and Karpenter
// manifests, and a script of actions at virtual times.
package scenario

import (
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/manifest"
)

// APIVersion and Kind identify a scenario document.
const (
	APIVersion = "ladder.dev/v1alpha1"
	Kind       = "Scenario"
)

// Scenario is one scenario file.
type Scenario struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       Spec     `json:"spec"`

	// Path is where the scenario was read from ("builtin:karpenter-drift" for
	// built-in ones); manifest file paths are relative to its directory.
	Path string `json:"-"`
	// Objects are the decoded manifests, in file order.
	Objects []manifest.Object `json:"-"`
	// ActionObjects are the decoded manifests of apply actions, by action index.
	ActionObjects map[int][]manifest.Object `json:"-"`
	// Ignored counts manifests of kinds the twin does not model, by kind.
	Ignored map[string]int `json:"-"`
	raw     []byte
}

// Metadata names a scenario.
type Metadata struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Spec is the cluster and the script.
type Spec struct {
	// Start is the virtual time the rehearsal begins (RFC 3339, UTC); budget
	// schedules and AMI release dates are evaluated against it.
	Start metav1.Time `json:"start"`
	// Seed is the default random seed; --seed overrides it.
	Seed *uint64 `json:"seed,omitempty"`
	// TimeLimit bounds the rehearsal in virtual time (default 6h).
	TimeLimit *Duration `json:"timeLimit,omitempty"`
	Cluster   Cluster   `json:"cluster"`
	Timings   *Timings  `json:"timings,omitempty"`
	// InstanceTypes adds to or overrides the embedded EC2 catalog.
	InstanceTypes []InstanceType `json:"instanceTypes,omitempty"`
	// AMIs declares images the embedded AMI catalog does not know.
	AMIs       []AMI       `json:"amis,omitempty"`
	NodeGroups []NodeGroup `json:"nodeGroups"`
	Manifests  []Source    `json:"manifests"`
	Actions    []Action    `json:"actions,omitempty"`
}

// Cluster is the EKS cluster.
type Cluster struct {
	Name string `json:"name"`
	// Version is the control plane's Kubernetes minor, e.g. "1.30".
	Version string   `json:"version"`
	Region  string   `json:"region"`
	Zones   []string `json:"zones"`
}

// Timings override the twin's latencies.
type Timings struct {
	PodStartup   *Duration `json:"podStartup,omitempty"`
	PodShutdown  *Duration `json:"podShutdown,omitempty"`
	VolumeAttach *Duration `json:"volumeAttach,omitempty"`
	VolumeDetach *Duration `json:"volumeDetach,omitempty"`
	// NodeLaunch, NodeRegister and NodeReady are EC2 CreateFleet, instance
	// boot to kubelet registration, and registration to Ready.
	NodeLaunch   *Duration `json:"nodeLaunch,omitempty"`
	NodeRegister *Duration `json:"nodeRegister,omitempty"`
	NodeReady    *Duration `json:"nodeReady,omitempty"`
	// InstanceTerminate is EC2 shutting-down to terminated.
	InstanceTerminate *Duration `json:"instanceTerminate,omitempty"`
	// ControlPlaneUpdate is how long an EKS version update takes.
	ControlPlaneUpdate *Duration `json:"controlPlaneUpdate,omitempty"`
}

// InstanceType is a catalog entry.
type InstanceType struct {
	Name          string  `json:"name"`
	Arch          string  `json:"arch,omitempty"`
	VCPU          int     `json:"vcpu"`
	MemoryMiB     int64   `json:"memoryMiB"`
	MaxPods       int     `json:"maxPods"`
	OnDemandPrice float64 `json:"onDemandPrice"`
	SpotPrice     float64 `json:"spotPrice,omitempty"`
}

// AMI is an image the scenario declares.
type AMI struct {
	ID                string `json:"id"`
	Name              string `json:"name"`
	Family            string `json:"family,omitempty"`
	Arch              string `json:"arch,omitempty"`
	KubernetesVersion string `json:"kubernetesVersion"`
	KubeletVersion    string `json:"kubeletVersion,omitempty"`
}

// Node group types.
const (
	Managed     = "managed"
	SelfManaged = "self-managed"
	Karpenter   = "karpenter"
	Fargate     = "fargate"
)

// NodeGroup is one source of nodes; exactly the block matching Type is set.
type NodeGroup struct {
	Name        string            `json:"name"`
	Type        string            `json:"type"`
	Karpenter   *KarpenterGroup   `json:"karpenter,omitempty"`
	Managed     *ManagedGroup     `json:"managed,omitempty"`
	SelfManaged *SelfManagedGroup `json:"selfManaged,omitempty"`
	Fargate     *FargateProfile   `json:"fargate,omitempty"`
}

// KarpenterGroup is a NodePool (given as a manifest) and the nodes it
// already has when the rehearsal starts.
type KarpenterGroup struct {
	NodePool string         `json:"nodePool"`
	Nodes    []ExistingNode `json:"nodes,omitempty"`
}

// ExistingNode describes nodes running at the start.
type ExistingNode struct {
	InstanceType string `json:"instanceType"`
	Zone         string `json:"zone"`
	CapacityType string `json:"capacityType,omitempty"`
	// AMI is the image id the node runs; default: what its group uses now.
	AMI string `json:"ami,omitempty"`
	// Age is how long before the start the node was created.
	Age   *Duration `json:"age,omitempty"`
	Count int       `json:"count,omitempty"`
}

// ManagedGroup is an EKS managed node group.
type ManagedGroup struct {
	InstanceTypes []string `json:"instanceTypes"`
	CapacityType  string   `json:"capacityType,omitempty"` // ON_DEMAND or SPOT
	Desired       int      `json:"desired"`
	Min           int      `json:"min,omitempty"`
	Max           int      `json:"max,omitempty"`
	// Zones defaults to the cluster's zones.
	Zones []string `json:"zones,omitempty"`
	// AMIType is e.g. AL2023_x86_64_STANDARD; Version the group's minor
	// (default: the control plane's).
	AMIType        string `json:"amiType,omitempty"`
	Version        string `json:"version,omitempty"`
	ReleaseVersion string `json:"releaseVersion,omitempty"`
	// LaunchTemplate with an image id makes this a custom-AMI group.
	LaunchTemplate *LaunchTemplate   `json:"launchTemplate,omitempty"`
	Labels         map[string]string `json:"labels,omitempty"`
	Taints         []corev1.Taint    `json:"taints,omitempty"`
	UpdateConfig   *UpdateConfig     `json:"updateConfig,omitempty"`
	UpdateStrategy string            `json:"updateStrategy,omitempty"` // DEFAULT or MINIMAL
	Age            *Duration         `json:"age,omitempty"`
}

// LaunchTemplate is a managed or self-managed group's launch template.
type LaunchTemplate struct {
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
	ImageID string `json:"imageId,omitempty"`
}

// UpdateConfig is NodegroupUpdateConfig: one of the two is set.
type UpdateConfig struct {
	MaxUnavailable           *int `json:"maxUnavailable,omitempty"`
	MaxUnavailablePercentage *int `json:"maxUnavailablePercentage,omitempty"`
}

// SelfManagedGroup is an EC2 Auto Scaling group of nodes.
type SelfManagedGroup struct {
	InstanceType   string            `json:"instanceType"`
	Desired        int               `json:"desired"`
	Min            int               `json:"min,omitempty"`
	Max            int               `json:"max,omitempty"`
	Zones          []string          `json:"zones,omitempty"`
	LaunchTemplate LaunchTemplate    `json:"launchTemplate"`
	Labels         map[string]string `json:"labels,omitempty"`
	Taints         []corev1.Taint    `json:"taints,omitempty"`
	// TerminationHook is true when a termination lifecycle hook drains nodes
	// (Node Termination Handler style) before the ASG terminates them.
	TerminationHook bool      `json:"terminationHook,omitempty"`
	Age             *Duration `json:"age,omitempty"`
}

// FargateProfile selects pods that run on Fargate.
type FargateProfile struct {
	Selectors []FargateSelector `json:"selectors"`
}

// FargateSelector matches a namespace and, optionally, labels.
type FargateSelector struct {
	Namespace string            `json:"namespace"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// Source is a manifest file (relative to the scenario) or inline YAML.
type Source struct {
	File   string `json:"file,omitempty"`
	Inline string `json:"inline,omitempty"`
}

// Action is one step of the script; exactly one of the verbs is set.
type Action struct {
	// At is the earliest virtual time, from the start, the action runs;
	// actions run in order, each after the previous one.
	At   *Duration `json:"at,omitempty"`
	Name string    `json:"name,omitempty"`

	Scale               *ScaleAction   `json:"scale,omitempty"`
	Apply               *Source        `json:"apply,omitempty"`
	Patch               *PatchAction   `json:"patch,omitempty"`
	UpgradeControlPlane *UpgradeAction `json:"upgradeControlPlane,omitempty"`
	Drain               *DrainAction   `json:"drain,omitempty"`
	Wait                *WaitAction    `json:"wait,omitempty"`
}

// DrainAction is kubectl drain: NODE by name, or every node matching a
// label selector, one after the other.
type DrainAction struct {
	Node               string    `json:"node,omitempty"`
	Selector           string    `json:"selector,omitempty"`
	IgnoreDaemonSets   bool      `json:"ignoreDaemonSets,omitempty"`
	DeleteEmptyDirData bool      `json:"deleteEmptyDirData,omitempty"`
	Force              bool      `json:"force,omitempty"`
	Timeout            *Duration `json:"timeout,omitempty"`
}

// ScaleAction sets a Deployment's or StatefulSet's replicas.
type ScaleAction struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Replicas  int32  `json:"replicas"`
}

// PatchAction patches a manifest the scenario applied, as kubectl patch does.
type PatchAction struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Type is merge (RFC 7386, default), strategic (built-in kinds) or json (RFC 6902).
	Type  string          `json:"type,omitempty"`
	Patch json.RawMessage `json:"patch"`
}

// UpgradeAction updates the control plane to a version (n+1 only).
type UpgradeAction struct {
	Version string `json:"version"`
}

// WaitAction waits until the cluster settles, or for a duration.
type WaitAction struct {
	Settled bool      `json:"settled,omitempty"`
	For     *Duration `json:"for,omitempty"`
}

// Duration is a Go duration in YAML ("90s", "3h57m").
type Duration struct{ time.Duration }

// UnmarshalJSON reads "90s"-style strings.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"90s\" or \"3h57m\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration such as \"90s\" or \"3h57m\"", s)
	}
	if v < 0 {
		return fmt.Errorf("%q: a duration cannot be negative", s)
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// Get returns the duration or def when unset.
func (d *Duration) Get(def time.Duration) time.Duration {
	if d == nil {
		return def
	}
	return d.Duration
}

// Verb names the action's verb.
func (a Action) Verb() string {
	switch {
	case a.Scale != nil:
		return "scale"
	case a.Apply != nil:
		return "apply"
	case a.Patch != nil:
		return "patch"
	case a.UpgradeControlPlane != nil:
		return "upgradeControlPlane"
	case a.Drain != nil:
		return "drain"
	case a.Wait != nil:
		return "wait"
	}
	return ""
}
