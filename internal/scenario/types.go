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
	// Addons are the cluster's EKS add-ons and the versions they run now.
	Addons    []Addon  `json:"addons,omitempty"`
	Manifests []Source `json:"manifests"`
	// Probe is a health check run every virtual second, like the seed's
	// `while true; do curl -s $UI_WEB; sleep 1; done`.
	Probe *Probe `json:"probe,omitempty"`
	// Upgrade is the playbook `ladder rehearse` runs when the script has no
	// actions: pre-checks → control plane → add-ons → node groups.
	Upgrade *Upgrade `json:"upgrade,omitempty"`
	Actions []Action `json:"actions,omitempty"`
}

// Addon is an EKS add-on: vpc-cni, coredns, kube-proxy or aws-ebs-csi-driver.
// Its pods come from the scenario's manifests (the aws-node, kube-proxy and
// ebs-csi-node DaemonSets, the coredns and ebs-csi-controller Deployments in
// kube-system); updating it changes their images, which rolls them.
type Addon struct {
	Name string `json:"name"`
	// Version runs now, e.g. v1.30.14-eksbuild.28.
	Version string `json:"version"`
	// Versions pins what to update to, by Kubernetes minor ("1.31":
	// "v1.31.14-eksbuild.20"). Without a pin the embedded, dated table of
	// latest versions per minor decides.
	Versions map[string]string `json:"versions,omitempty"`
}

// Probe is a request path through the cluster: it succeeds in a given
// second when every workload it requires has a Ready pod.
type Probe struct {
	Name     string        `json:"name"`
	Requires []WorkloadRef `json:"requires"`
}

// WorkloadRef names a Deployment, StatefulSet or DaemonSet.
type WorkloadRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// Upgrade is the playbook.
type Upgrade struct {
	// To is the target minor (default: the control plane's next); each hop
	// is one minor, and every node catches up before the next hop.
	// `ladder rehearse --to` overrides it.
	To string `json:"to,omitempty"`
	// Order is the order node groups are upgraded in, after the control
	// plane and the add-ons; groups not listed follow in spec order.
	Order []string `json:"order,omitempty"`
	// Precondition is strict (default: managed node groups at the control
	// plane's minor, kubelets within the skew policy) or relaxed (only the
	// skew policy, as the EKS user guide allows).
	Precondition string `json:"precondition,omitempty"`
}

// Upgrade strategies, per node group type.
const (
	InPlace         = "in-place"         // managed (default): UpdateNodegroupVersion
	BlueGreen       = "blue-green"       // managed: a new group, drain and delete the old one
	Drift           = "drift"            // karpenter (default): the EC2NodeClass's AMI changes
	InstanceRefresh = "instance-refresh" // self-managed (default): new launch template, instance refresh
	Ladder          = "ladder"           // self-managed: new launch template, surge, Ladder drains in PDB-sized waves and terminates
	Restart         = "restart"          // fargate (default): rollout restart of the profile's workloads
	NoUpgrade       = "none"             // leave the group as it is
)

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
	// FargateProvision is a Fargate pod's creation to its node Ready and
	// the pod bound (default 45 s).
	FargateProvision *Duration `json:"fargateProvision,omitempty"`
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
	// Upgrade says how the playbook upgrades the group.
	Upgrade *GroupUpgrade `json:"upgrade,omitempty"`
}

// GroupUpgrade is a node group's upgrade strategy and its settings.
type GroupUpgrade struct {
	// Strategy defaults to the group type's usual one (see the constants).
	Strategy string `json:"strategy,omitempty"`
	// Force is UpdateNodegroupVersion's force flag (in-place): pods a PDB
	// holds are deleted after the 15-minute eviction timeout.
	Force bool `json:"force,omitempty"`
	// Green is the new group of a blue-green upgrade; unset fields copy the
	// blue group.
	Green *GreenGroup `json:"green,omitempty"`
	// Refresh are the instance refresh preferences.
	Refresh *RefreshPreferences `json:"refresh,omitempty"`
	// AMI is how a Karpenter EC2NodeClass follows the new version: "latest"
	// (default; amiSelectorTerms become FAMILY@latest, which resolves against
	// the control plane's version) or "id" (pinned to the new version's AMI id).
	AMI string `json:"ami,omitempty"`
}

// GreenGroup is the replacement managed node group of a blue-green upgrade.
type GreenGroup struct {
	Name          string            `json:"name"`
	Zones         []string          `json:"zones,omitempty"`
	InstanceTypes []string          `json:"instanceTypes,omitempty"`
	Desired       *int              `json:"desired,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	Taints        []corev1.Taint    `json:"taints,omitempty"`
}

// RefreshPreferences are StartInstanceRefresh's preferences.
type RefreshPreferences struct {
	MinHealthyPercentage  *int      `json:"minHealthyPercentage,omitempty"`
	MaxHealthyPercentage  *int      `json:"maxHealthyPercentage,omitempty"`
	InstanceWarmup        *Duration `json:"instanceWarmup,omitempty"`
	CheckpointPercentages []int     `json:"checkpointPercentages,omitempty"`
	CheckpointDelay       *Duration `json:"checkpointDelay,omitempty"`
	SkipMatching          bool      `json:"skipMatching,omitempty"`
}

// StrategyOf is the group's upgrade strategy, its type's default when unset.
func (g NodeGroup) StrategyOf() string {
	if g.Upgrade != nil && g.Upgrade.Strategy != "" {
		return g.Upgrade.Strategy
	}
	switch g.Type {
	case Managed:
		return InPlace
	case SelfManaged:
		return InstanceRefresh
	case Karpenter:
		return Drift
	case Fargate:
		return Restart
	}
	return ""
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
	// Upgrade runs the playbook (spec.upgrade) to a version, hop by hop.
	Upgrade *PlaybookAction `json:"upgrade,omitempty"`
	// RolloutRestart is kubectl rollout restart.
	RolloutRestart *WorkloadRef `json:"rolloutRestart,omitempty"`
}

// PlaybookAction upgrades the whole cluster to a version.
type PlaybookAction struct {
	// To is the target minor; default spec.upgrade.to, else the next minor.
	To string `json:"to,omitempty"`
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
	case a.Upgrade != nil:
		return "upgrade"
	case a.RolloutRestart != nil:
		return "rolloutRestart"
	}
	return ""
}
