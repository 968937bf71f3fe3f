package karpenter

import (
	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/disruption"
)

// Drift reasons, in the order they are checked (semantics.md §A.3):
// static NodePool hash, requirements, then the AWS provider's NodeClass
// hash and AMI (disruption.DriftReason).
const (
	DriftNodePool     = disruption.NodePoolDrifted
	DriftRequirements = disruption.RequirementsDrifted
	DriftNodeClass    = disruption.NodeClassDrift
	DriftAMI          = disruption.AMIDrift
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
// NodePool and EC2NodeClass, or "": disruption.DriftReason over the
// NodeClaim as the API would show it — the hash annotations stamped when it
// was created and launched, its labels, status.imageID.
func (k *Karpenter) driftReason(c *NodeClaim) string {
	p, ok := k.pools[c.NodePool]
	if !ok {
		return ""
	}
	var nc *awsv1.EC2NodeClass
	if class, ok := k.classes[c.NodeClass]; ok {
		nc = class.obj
	}
	claim := karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: c.Name, Annotations: c.annotations, Labels: c.labels},
		Status:     karpv1.NodeClaimStatus{ImageID: c.AMI.ID},
	}
	return disruption.DriftReason(p.obj, nc, &claim, nil)
}
