package executor

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// BlueGreen is a managed node group's blue/green hop: the group that runs
// its nodes now (Blue) and the new one (Green).
type BlueGreen struct {
	// Group is the node group of the plan; Blue and Green its node
	// groups in EKS, which swap on every hop.
	Group, Blue string
	Green       Green
}

// Green is the green node group of a blue/green hop: its name and what it
// changes of the blue group's configuration (nil or empty: blue's).
type Green struct {
	Name          string
	Subnets       []string
	InstanceTypes []string
	Desired       *int32
	Labels        map[string]string
	Taints        []ekstypes.Taint
}

// UpgradeBlueGreen creates the green group at the control plane's version
// with the blue one's subnets, labels, taints, scaling, update config and
// launch template — a custom-AMI group's template gets a new version with
// the hop's AMI — and bg's changes; waits until DescribeNodegroup says it
// is ACTIVE; cordons the blue nodes and drains them in waves as large as
// the PDBs allow (drainInWaves), the pods moving to green by their
// nodeSelector and tolerations (workshop §6.2); then deletes the blue
// group, whose nodes EKS finds empty (left to EKS, it drains them as it
// deletes them, PDBs respected for up to 5 minutes a node: aws-apis.md
// §2.8, DeleteNodegroup), and waits until it is gone. The step ends when every node of the green
// group runs the hop's kubelet.
func (e *Executor) UpgradeBlueGreen(ctx context.Context, bg BlueGreen, to kubeversion.Minor) error {
	if _, _, err := e.once("CreateNodegroup", func(token *string) (string, error) {
		blue, err := e.describeNodegroup(ctx, bg.Blue)
		if err != nil {
			return "", err
		}
		in := greenInput(e.Cluster, blue, bg.Green)
		lt, image, err := e.nodegroupImage(ctx, blue)
		if err != nil {
			return "", err
		}
		if image != "" {
			if in.LaunchTemplate, err = e.customAMIVersion(ctx, bg.Blue, lt, image, to, token); err != nil {
				return "", err
			}
		}
		in.ClientRequestToken = token
		e.Observer.Event("Normal", "BlueGreenStarted", fmt.Sprintf("node group %s: creating green group %s at %s", bg.Blue, bg.Green.Name, to))
		if _, err := e.Ports.EKS.CreateNodegroup(ctx, in); err != nil {
			return "", cliError("CreateNodegroup", err)
		}
		return bg.Green.Name, nil
	}); err != nil {
		return err
	}
	var green *ekstypes.Nodegroup
	var err error
	if err := e.WaitFor(ctx, kubeport.Until{What: "node group " + bg.Green.Name + " ACTIVE", Holds: func(ctx context.Context) (bool, error) {
		if green, err = e.describeNodegroup(ctx, bg.Green.Name); err != nil {
			return false, err
		}
		return green.Status != ekstypes.NodegroupStatusCreating, nil
	}}); err != nil {
		return err
	}
	if green.Status != ekstypes.NodegroupStatusActive {
		return fmt.Errorf("green node group %s: %s", bg.Green.Name, healthIssues(green))
	}
	// Ladder drains blue itself, as many nodes at once as the PDBs allow,
	// so that DeleteNodegroup finds them empty instead of draining them
	// one after the other with a 5-minute limit each.
	if _, deleting := e.journaled("DeleteNodegroup"); !deleting {
		nodes, err := e.Ports.Kube.ListNodes(ctx)
		if err != nil {
			return err
		}
		var blue []string
		for _, n := range nodes {
			if n.Labels[nodegroupLabel] == bg.Blue {
				blue = append(blue, n.Name)
			}
		}
		if err := e.drainInWaves(ctx, "node group "+bg.Blue, blue, 0); err != nil {
			return err
		}
	}
	if _, _, err := e.once("DeleteNodegroup", func(*string) (string, error) {
		e.Observer.Event("Normal", "BlueGreenDrain", fmt.Sprintf("node group %s: deleting blue group %s; its pods move to %s", bg.Group, bg.Blue, bg.Green.Name))
		if _, err := e.Ports.EKS.DeleteNodegroup(ctx, &eks.DeleteNodegroupInput{ClusterName: aws.String(e.Cluster), NodegroupName: aws.String(bg.Blue)}); err != nil {
			return "", cliError("DeleteNodegroup", err)
		}
		return bg.Blue, nil
	}); err != nil {
		return err
	}
	if err := e.WaitFor(ctx, kubeport.Until{What: "node group " + bg.Blue + " deleted", Holds: func(ctx context.Context) (bool, error) {
		_, err := e.Ports.EKS.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String(e.Cluster), NodegroupName: aws.String(bg.Blue)})
		var nf *ekstypes.ResourceNotFoundException
		if errors.As(err, &nf) {
			return true, nil
		}
		return false, cliError("DescribeNodegroup", err) // nil while blue is DELETING
	}}); err != nil {
		return err
	}
	return e.WaitFor(ctx, kubeport.NodesAtMinor{Label: nodegroupLabel, Value: bg.Green.Name, Minor: to})
}

// greenInput is CreateNodegroup for the green group: the blue one's
// configuration with green's changes, at the control plane's version (no
// version or release: "All node groups are created with the latest AMI
// release version", CreateNodegroup API reference).
func greenInput(cluster string, blue *ekstypes.Nodegroup, green Green) *eks.CreateNodegroupInput {
	in := &eks.CreateNodegroupInput{
		ClusterName: aws.String(cluster), NodegroupName: aws.String(green.Name),
		NodeRole: blue.NodeRole, Subnets: blue.Subnets, InstanceTypes: blue.InstanceTypes, CapacityType: blue.CapacityType, AmiType: blue.AmiType,
		Labels: blue.Labels, Taints: blue.Taints, UpdateConfig: blue.UpdateConfig, LaunchTemplate: blue.LaunchTemplate,
	}
	if sc := blue.ScalingConfig; sc != nil {
		c := *sc
		in.ScalingConfig = &c
	}
	if len(green.Subnets) > 0 {
		in.Subnets = green.Subnets
	}
	if len(green.InstanceTypes) > 0 {
		in.InstanceTypes = green.InstanceTypes
	}
	if green.Desired != nil {
		sc := in.ScalingConfig
		if sc == nil {
			sc = &ekstypes.NodegroupScalingConfig{}
			in.ScalingConfig = sc
		}
		sc.DesiredSize = green.Desired
		sc.MinSize = aws.Int32(min(aws.ToInt32(sc.MinSize), *green.Desired))
		sc.MaxSize = aws.Int32(max(aws.ToInt32(sc.MaxSize), *green.Desired))
	}
	if green.Labels != nil {
		in.Labels = green.Labels
	}
	if green.Taints != nil {
		in.Taints = green.Taints
	}
	return in
}

// healthIssues lists a node group's health issues as "Code: message; ...".
func healthIssues(ng *ekstypes.Nodegroup) string {
	if ng.Health == nil || len(ng.Health.Issues) == 0 {
		return string(ng.Status)
	}
	var out string
	for i, is := range ng.Health.Issues {
		if i > 0 {
			out += "; "
		}
		out += fmt.Sprintf("%s: %s", is.Code, aws.ToString(is.Message))
	}
	return out
}
