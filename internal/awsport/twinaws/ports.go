package twinaws

import (
	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/twin/asg"
)

// New returns every AWS port over one cluster's twins: EKS as eks says,
// Auto Scaling over groups (nil, for a cluster without self-managed
// groups, leaves it nil), EC2's launch templates behind both kinds of
// group as one store, and the AMI ports over the catalog and the
// scenario's extra AMIs, on the EKS engine's clock.
func New(eks EKSOptions, groups *asg.ASG, extraAMIs []catalog.AMI) awsport.Ports {
	amis := NewAMIs(eks.Engine.Now, extraAMIs...)
	e := NewEKS(eks)
	p := awsport.Ports{EKS: e, Images: amis, Parameters: amis}
	var as *AutoScaling
	if groups != nil {
		as = NewAutoScaling(groups)
		p.AutoScaling = as
	}
	p.LaunchTemplates = e.LaunchTemplates(as)
	return p
}
