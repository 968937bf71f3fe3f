package twinaws

import (
	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/twin/asg"
)

// New returns every AWS port over one cluster's twins: EKS as eks says,
// Auto Scaling and EC2's launch templates over groups (nil, for a cluster
// without self-managed groups, leaves both nil), and the AMI ports over the catalog and the
// scenario's extra AMIs, on the EKS engine's clock.
func New(eks EKSOptions, groups *asg.ASG, extraAMIs []catalog.AMI) awsport.Ports {
	amis := NewAMIs(eks.Engine.Now, extraAMIs...)
	p := awsport.Ports{EKS: NewEKS(eks), Images: amis, Parameters: amis}
	if groups != nil {
		as := NewAutoScaling(groups)
		p.AutoScaling, p.LaunchTemplates = as, as
	}
	return p
}
