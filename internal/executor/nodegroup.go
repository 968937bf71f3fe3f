package executor

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/plan"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// Group is what a node group's strategy needs beyond the plan's step (its
// name and strategy). The zero Group upgrades a managed group in place
// without force, a self-managed group with Auto Scaling's default refresh
// preferences and a Fargate profile by its rolling restart; blue/green
// needs Green, drift needs NodePool.
type Group struct {
	// Force is UpdateNodegroupVersion's force: an in-place update goes on
	// past pods a PodDisruptionBudget keeps from being evicted.
	Force bool
	// Green is a blue/green group's green node group.
	Green *Green
	// Refresh are an instance refresh's preferences (nil: Auto Scaling's
	// defaults).
	Refresh *asgtypes.RefreshPreferences
	// NodePool is a Karpenter group's NodePool; AMI how its drift picks
	// the hop's AMIs: "latest" (or "") the family's @latest alias, "id" the
	// id of the family's newest AMI for the hop's version.
	NodePool, AMI string
}

// NodeGroup carries out a node group's hop by its strategy, with the
// configuration Groups holds for it.
func (e *Executor) NodeGroup(ctx context.Context, st plan.Step, to kubeversion.Minor) error {
	g := e.Groups[st.Name]
	switch st.Strategy {
	case scenario.InPlace:
		return e.UpdateNodegroup(ctx, st.Name, g.Force, to)
	case scenario.BlueGreen:
		if g.Green == nil {
			return fmt.Errorf("node group %s: blue-green needs the green group's name", st.Name)
		}
		blue, green, err := e.blueAndGreen(ctx, st.Name, g.Green.Name)
		if err != nil {
			return err
		}
		// A resumed run takes the names from the journal: once blue is
		// deleted, EKS alone would make the names swap.
		if made, ok := e.journaled("CreateNodegroup"); ok {
			blue, green = st.Name, made
			if made == st.Name {
				blue = g.Green.Name
			}
		}
		gr := *g.Green
		gr.Name = green
		return e.UpgradeBlueGreen(ctx, BlueGreen{Group: st.Name, Blue: blue, Green: gr}, to)
	case scenario.InstanceRefresh:
		return e.RefreshGroup(ctx, st.Name, g.Refresh, to)
	case scenario.Ladder:
		return e.SurgeGroup(ctx, st.Name, to)
	case scenario.Drift:
		if g.NodePool == "" {
			return fmt.Errorf("node group %s: drift needs the group's NodePool", st.Name)
		}
		mode := g.AMI
		if mode == "" {
			mode = "latest"
		}
		return e.DriftNodePool(ctx, st.Name, g.NodePool, mode, to)
	case scenario.Restart:
		return e.RestartFargate(ctx, st.Name, to)
	}
	return fmt.Errorf("node group %s: no step carries out the %s strategy", st.Name, st.Strategy)
}

// blueAndGreen names a blue/green group's two node groups for a hop: the
// names swap on every hop (the green one of a hop is the blue one of the
// next), so blue is the group's own name while EKS has a node group of
// that name, and the green name's otherwise.
func (e *Executor) blueAndGreen(ctx context.Context, group, green string) (string, string, error) {
	_, err := e.Ports.EKS.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String(e.Cluster), NodegroupName: aws.String(group)})
	var nf *ekstypes.ResourceNotFoundException
	switch {
	case err == nil:
		return group, green, nil
	case errors.As(err, &nf):
		return green, group, nil
	}
	return "", "", cliError("DescribeNodegroup", err)
}
