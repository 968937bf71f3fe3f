package karpenter

import (
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

// Drift reasons, in the order they are checked (semantics.md §A.3):
// static NodePool hash, requirements, then the AWS provider's NodeClass
// hash and AMI.
const (
	DriftNodePool     = "NodePoolDrifted"
	DriftRequirements = "RequirementsDrifted"
	DriftNodeClass    = "NodeClassDrift"
	DriftAMI          = "AMIDrift"
)

// evaluateDrift is the nodeclaim disruption controller's drift reconciler,
// run for every NodeClaim when a NodePool, an EC2NodeClass or its resolved
// AMIs change (it watches all three).
func (k *Karpenter) evaluateDrift() {
	for _, c := range k.NodeClaims() {
		k.evaluateDriftOf(c)
	}
}

func (k *Karpenter) evaluateDriftOf(c *NodeClaim) {
	if c.deleting || c.Launched.IsZero() {
		return
	}
	reason := k.driftReason(c)
	switch {
	case reason != "" && c.Drifted == "":
		c.Drifted, c.DriftedSince = reason, k.eng.Now()
		k.drifted++
		k.log(Event{Code: "NodeClaimDrifted", Message: "nodeclaim drifted", Reason: "drifted", NodePool: c.NodePool, NodeClaim: c.Name, Node: c.Node, Fields: []string{"drift=" + reason}})
	case reason == "" && c.Drifted != "":
		c.Drifted, c.DriftedSince = "", k.eng.Now()
		k.drifted--
	case reason != "" && reason != c.Drifted:
		c.Drifted = reason // the condition's reason changes; its transition time does not
	}
}

// driftReason returns why a launched NodeClaim no longer matches its
// NodePool and EC2NodeClass, or "".
func (k *Karpenter) driftReason(c *NodeClaim) string {
	p, ok := k.pools[c.NodePool]
	if !ok {
		return ""
	}
	// Static drift: the NodePool template hash (spec.template minus
	// requirements) differs from the one stamped at launch.
	if c.poolHash != "" && c.poolHash != p.hash {
		return DriftNodePool
	}
	// Requirements drift: the node's labels no longer satisfy the
	// NodePool's requirements.
	if len(c.labels) > 0 {
		reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(p.obj.Spec.Template.Spec.Requirements...)
		if scheduling.NewLabelRequirements(c.labels).Compatible(reqs) != nil {
			return DriftRequirements
		}
	}
	class, ok := k.classes[c.NodeClass]
	if !ok {
		return ""
	}
	if c.classHash != "" && c.classHash != class.hash {
		return DriftNodeClass
	}
	// AMI drift: the image the instance runs is not the one the
	// EC2NodeClass now maps this instance type to.
	if want, ok := class.amiFor(c.InstanceType.Arch); !ok || want.ID != c.AMI.ID {
		return DriftAMI
	}
	return ""
}
