// Package eks is the twin of the EKS control plane: its version and the
// UpdateClusterVersion rules (semantics.md §E).
package eks

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/sim"
)

// DefaultUpdateDuration is how long a control-plane version update takes in
// the twin. AWS says only "several minutes" (semantics.md §E).
const DefaultUpdateDuration = 10 * time.Minute

// Precondition says which node versions an update requires (semantics.md §E
// "Node precondition", §D.4).
type Precondition int

const (
	// Strict is the API reference's rule — every managed node group at the
	// control plane's minor — plus the skew policy for every kubelet against
	// the new version.
	Strict Precondition = iota
	// Relaxed is the user guide's allowance: node groups may trail, as long
	// as every kubelet stays within the skew policy of the new version
	// ("If the kubelet on your managed and Fargate nodes is on Kubernetes
	// version 1.25 or newer, you can update your cluster up to three versions
	// ahead without updating the kubelet version").
	Relaxed
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
	switch d := target.Sub(cp.version); {
	case d == 0:
		return fmt.Errorf("InvalidParameterException: the cluster is already at Kubernetes %s", target)
	case d < 0:
		return fmt.Errorf("InvalidParameterException: unsupported Kubernetes minor version update from %s to %s: Amazon EKS clusters cannot be downgraded", cp.version, target)
	case d > 1:
		return fmt.Errorf("InvalidParameterException: unsupported Kubernetes minor version update from %s to %s: Amazon EKS updates one minor version at a time (update to %s first)", cp.version, target, cp.version.Next())
	}
	if err := cp.CheckPrecondition(target); err != nil {
		return err
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

// CheckPrecondition reports the first node that keeps the control plane from
// going to target, in name order, with what to do about it.
func (cp *ControlPlane) CheckPrecondition(target kubeversion.Minor) error {
	if cp.Precondition == Strict && cp.NodeGroupVersions != nil {
		groups := cp.NodeGroupVersions()
		for _, name := range sortedKeys(groups) {
			if v := groups[name]; v != cp.version {
				return fmt.Errorf("InvalidRequestException: node group %s is at Kubernetes %s; all managed node groups must be at the cluster's version %s before it can be updated (update the node group first, or relax the precondition as the EKS user guide allows for kubelets within the skew policy)", name, v, cp.version)
			}
		}
	}
	if cp.Kubelets != nil {
		kubelets := cp.Kubelets()
		for _, node := range sortedKeys(kubelets) {
			v, err := kubeversion.Parse(kubelets[node])
			if err != nil {
				return fmt.Errorf("node %s reports kubelet %q: %v", node, kubelets[node], err)
			}
			if !kubeversion.KubeletSkewOK(target, v) {
				return fmt.Errorf("node %s runs kubelet %s, more than %d minor versions behind Kubernetes %s (version skew policy): upgrade its node group to %s or later first", node, kubelets[node], kubeversion.MaxKubeletSkew(v), target, kubeversion.Minor{Major: target.Major, Minor: target.Minor - kubeversion.MaxKubeletSkew(v)})
			}
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
