package eviction

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ScaleError is the disruption controller's error for a pod whose
// controller has no scale, or nil when it has one. The controller needs a
// scale for maxUnavailable and a percentage minAvailable
// (getExpectedScale, semantics.md §D.2): it finds ReplicationControllers,
// Deployments (through their ReplicaSets), ReplicaSets and StatefulSets
// itself, and asks any other kind's scale subresource (getScaleController,
// k8s.io/kubernetes pkg/controller/disruption/disruption.go). A DaemonSet
// has none, so the sync fails with "daemonsets.apps does not implement the
// scale subresource" and the controller fails safe: disruptionsAllowed 0,
// every eviction of the PDB's pods refused. Kinds Ladder does not know
// (custom resources with a scale subresource) are taken to have one.
func ScaleError(apiVersion, kind string) error {
	if gv, err := schema.ParseGroupVersion(apiVersion); err == nil && gv.Group == "apps" && kind == "DaemonSet" {
		return fmt.Errorf("%s does not implement the scale subresource", schema.GroupResource{Group: "apps", Resource: "daemonsets"})
	}
	return nil
}
