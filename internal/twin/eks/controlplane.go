// Package eks is the twin of the EKS control plane: its version and the
// UpdateClusterVersion rules (semantics.md §E).
package eks

import (
	"fmt"
	"time"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/sim"
)

// DefaultUpdateDuration is how long a control-plane version update takes in
// the twin. AWS says only "several minutes" (semantics.md §E).
const DefaultUpdateDuration = 10 * time.Minute

// ControlPlane is the cluster's Kubernetes control plane.
type ControlPlane struct {
	eng      *sim.Engine
	version  kubeversion.Minor
	updating bool
	duration time.Duration
	// NodeGroupVersions returns managed node groups' versions, for the
	// precondition; nil means there are none.
	NodeGroupVersions func() map[string]kubeversion.Minor
}

// New returns a control plane at version.
func New(eng *sim.Engine, version kubeversion.Minor, updateDuration time.Duration) *ControlPlane {
	if updateDuration <= 0 {
		updateDuration = DefaultUpdateDuration
	}
	return &ControlPlane{eng: eng, version: version, duration: updateDuration}
}

// Version is the control plane's current minor.
func (cp *ControlPlane) Version() kubeversion.Minor { return cp.version }

// Updating reports whether an update is in progress (status UPDATING).
func (cp *ControlPlane) Updating() bool { return cp.updating }

// Update starts UpdateClusterVersion to target; done runs when the update
// completes. It refuses what EKS refuses: a version other than current+1
// ("you can update only one minor version at a time"), a downgrade, an update
// while one is in progress, and managed node groups not at the control
// plane's minor (API reference precondition).
func (cp *ControlPlane) Update(target kubeversion.Minor, done func()) error {
	if cp.updating {
		return fmt.Errorf("ResourceInUseException: an update is already in progress for this cluster")
	}
	switch d := target.Sub(cp.version); {
	case d == 0:
		return fmt.Errorf("InvalidParameterException: the cluster is already at Kubernetes %s", target)
	case d < 0:
		return fmt.Errorf("InvalidParameterException: unsupported Kubernetes minor version update from %s to %s: Amazon EKS clusters cannot be downgraded", cp.version, target)
	case d > 1:
		return fmt.Errorf("InvalidParameterException: unsupported Kubernetes minor version update from %s to %s: Amazon EKS updates one minor version at a time (update to %s first)", cp.version, target, cp.version.Next())
	}
	if cp.NodeGroupVersions != nil {
		for name, v := range cp.NodeGroupVersions() {
			if v != cp.version {
				return fmt.Errorf("InvalidRequestException: node group %s is at Kubernetes %s; all managed node groups must be at the cluster's version %s before it can be updated", name, v, cp.version)
			}
		}
	}
	cp.updating = true
	cp.eng.After(cp.duration, func() {
		cp.updating = false
		cp.version = target
		if done != nil {
			done()
		}
	})
	return nil
}
