// Package eks is the twin of the EKS control plane: its version and the
// UpdateClusterVersion rules (semantics.md §E).
package eks

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/controlplane"
	"github.com/ladder-eks/ladder/internal/sim"
)

// DefaultUpdateDuration is how long a control-plane version update takes in
// the twin. AWS says only "several minutes" (semantics.md §E).
const DefaultUpdateDuration = 10 * time.Minute

// Precondition says which node versions an update requires; the rule is
// internal/rules/controlplane's.
type Precondition = controlplane.Precondition

// The two preconditions (semantics.md §E "Node precondition", §D.4).
const (
	Strict  = controlplane.Strict
	Relaxed = controlplane.Relaxed
)

// ControlPlane is the cluster's Kubernetes control plane.
type ControlPlane struct {
	eng      *sim.Engine
	name     string
	region   string
	version  kubeversion.Minor
	updating bool
	duration time.Duration
	// Precondition is checked by Update; Strict unless the scenario relaxes it.
	Precondition Precondition
	// NodeGroupVersions returns managed node groups' versions, for the
	// precondition; nil means there are none.
	NodeGroupVersions func() map[string]kubeversion.Minor
	// Kubelets returns every node's kubelet version by node name; nil means
	// no nodes.
	Kubelets func() map[string]string
	// Upgrade, if set, is told the new minor when an update completes,
	// before the cluster reports it: a real control plane's binaries are
	// replaced then.
	Upgrade func(target kubeversion.Minor)
}

// New returns the control plane of cluster name in region, at version.
func New(eng *sim.Engine, name, region string, version kubeversion.Minor, updateDuration time.Duration) *ControlPlane {
	if updateDuration <= 0 {
		updateDuration = DefaultUpdateDuration
	}
	return &ControlPlane{eng: eng, name: name, region: region, version: version, duration: updateDuration}
}

// Version is the control plane's current minor.
func (cp *ControlPlane) Version() kubeversion.Minor { return cp.version }

// Updating reports whether an update is in progress (status UPDATING).
func (cp *ControlPlane) Updating() bool { return cp.updating }

// Endpoint is the API server URL. An update replaces the control plane's
// instances but keeps the cluster, so the endpoint never changes (workshop
// §4.3: "endpoint ... # 동일").
func (cp *ControlPlane) Endpoint() string {
	return fmt.Sprintf("https://%s.gr7.%s.eks.amazonaws.com", cp.clusterID(), cp.region)
}

// OIDCIssuer is the cluster's OIDC issuer URL, oidc.eks.REGION.amazonaws.com/id/ID:
// it is derived from the cluster's id, so an update keeps it and IRSA trust
// policies keep working.
func (cp *ControlPlane) OIDCIssuer() string {
	return fmt.Sprintf("https://oidc.eks.%s.amazonaws.com/id/%s", cp.region, strings.ToUpper(cp.clusterID()))
}

// clusterID is a stable 32-hex-digit id derived from the cluster's region
// and name, so that the twin's endpoint and issuer look real and never move.
func (cp *ControlPlane) clusterID() string {
	sum := sha256.Sum256([]byte(cp.region + "/" + cp.name))
	return hex.EncodeToString(sum[:16])
}

// Update starts UpdateClusterVersion to target; done runs when the update
// completes. It refuses what EKS refuses: a version other than current+1
// ("you can update only one minor version at a time"), a downgrade, an update
// while one is in progress, and nodes that do not meet the precondition. The
// update restarts no pod and keeps the endpoint and OIDC issuer.
func (cp *ControlPlane) Update(target kubeversion.Minor, done func()) error {
	if cp.updating {
		return fmt.Errorf("ResourceInUseException: an update is already in progress for this cluster")
	}
	if err := controlplane.CheckVersionStep(cp.version, target); err != nil {
		return err
	}
	if err := cp.CheckPrecondition(target); err != nil {
		return err
	}
	cp.updating = true
	cp.eng.After(cp.duration, func() {
		if cp.Upgrade != nil {
			cp.Upgrade(target)
		}
		cp.updating = false
		cp.version = target
		if done != nil {
			done()
		}
	})
	return nil
}

// CheckPrecondition reports the first node that keeps the control plane from
// going to target, in name order, with what to do about it
// (controlplane.CheckPrecondition over the twin's node groups and nodes).
func (cp *ControlPlane) CheckPrecondition(target kubeversion.Minor) error {
	var nodes controlplane.DataPlane
	if cp.NodeGroupVersions != nil {
		nodes.NodeGroups = cp.NodeGroupVersions()
	}
	if cp.Kubelets != nil {
		nodes.Kubelets = cp.Kubelets()
	}
	return controlplane.CheckPrecondition(cp.version, target, nodes, cp.Precondition)
}
