package eviction

import (
	"fmt"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// NeedsScale reports whether the disruption controller reads the scale of
// the selected pods' controllers to compute a PodDisruptionBudget's
// desiredHealthy: for maxUnavailable (an integer or a percentage) and for a
// percentage minAvailable, whose expectedCount is the sum of those scales;
// not for an integer minAvailable, whose expectedCount is the number of
// selected pods (semantics.md §D.2; upstream
// pkg/controller/disruption/disruption.go getExpectedPodCount).
func NeedsScale(spec *policyv1.PodDisruptionBudgetSpec) bool {
	switch {
	case spec.MaxUnavailable != nil:
		return true
	case spec.MinAvailable != nil:
		return spec.MinAvailable.Type == intstr.String
	}
	return false
}

// noScale names, by group and kind, the controllers of pods that have no
// scale subresource, with the resource the controller's REST mapping gives
// them.
var noScale = map[schema.GroupKind]string{
	{Group: "apps", Kind: "DaemonSet"}: "daemonsets",
	{Group: "batch", Kind: "Job"}:      "jobs",
	// A mirror (static) pod's controllerRef is its Node (v1 Node,
	// controller: true: pkg/kubelet/pod/mirror_client.go), which has no
	// scale either.
	{Group: "", Kind: "Node"}: "nodes",
}

// ScaleError is the error the disruption controller's sync of a
// PodDisruptionBudget that needs a scale (NeedsScale) meets when a selected
// pod's controller is of this apiVersion and kind and has no scale
// subresource, as upstream words it: "daemonsets.apps does not implement
// the scale subresource" for a DaemonSet, "jobs.batch …" for a Job,
// "nodes …" for a mirror pod's Node. The sync then fails and failSafe
// leaves disruptionsAllowed 0 with DisruptionAllowed=False reason
// SyncFailed, so every eviction of the budget's pods is refused with 429,
// for as long as such a pod exists (semantics.md §D.2).
//
// Upstream (pkg/controller/disruption/disruption.go, getExpectedScale):
// each pod's controllerRef goes through the finders in turn —
// getPodReplicationController, getPodDeployment, getPodReplicaSet,
// getPodStatefulSet, which read spec.replicas of those four kinds, then
// getScaleController, which asks the scale subresource; for a resource
// without one that answer is NotFound, implementsScale finds no
// "<resource>/scale" in discovery and the finder returns
// fmt.Errorf("%s does not implement the scale subresource", gr.String()).
//
// It is nil for ReplicationController, ReplicaSet, Deployment and
// StatefulSet, whose scale the controller reads, and for kinds it does not
// know (a custom resource may implement the scale subresource).
func ScaleError(apiVersion, kind string) error {
	switch kind {
	case "ReplicationController", "ReplicaSet", "StatefulSet", "Deployment":
		// The first four finders match the controllerRef's kind alone.
		return nil
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return err // upstream getScaleController fails the same way
	}
	resource, ok := noScale[schema.GroupKind{Group: gv.Group, Kind: kind}]
	if !ok {
		return nil
	}
	gr := schema.GroupResource{Group: gv.Group, Resource: resource}
	return fmt.Errorf("%s does not implement the scale subresource", gr.String())
}
