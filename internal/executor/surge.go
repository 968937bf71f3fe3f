package executor

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// surgePoll is how often a self-managed group's surge and drain read the
// nodes, their pods and the PDBs: thousands of nodes and PDBs are too dear
// to read after every event of the twin (the 5,000-node mix's group of
// 750 took minutes so), and a client polling the API reads them no more
// often either.
const surgePoll = time.Second

// SurgeGroup is a self-managed node group's hop carried out by Ladder
// itself (--strategy ladder) instead of an instance refresh: the group's
// launch template gets the hop's AMI as with a refresh and the group is
// pointed at it ($Latest, UpdateAutoScalingGroup); then, round by round,
// Ladder raises the desired capacity by as many new instances as the old
// ones still need, within MaxSize (SetDesiredCapacity), waits for their
// nodes to be Ready, cordons the old nodes and drains as many of them as
// the new nodes replace, in waves as large as the PDBs allow
// (drainInWaves: semantics.md §D.1, §D.2), and terminates each drained
// instance with its capacity (TerminateInstanceInAutoScalingGroup,
// ShouldDecrementDesiredCapacity) — the group ends at its first desired
// capacity, every node new. Every round is read from the group itself, so
// a run started again surges no more than the old nodes need; the journal
// holds each drained node and each termination, never made twice. An
// instance refresh drains nothing itself and leaves PDBs to the Node
// Termination Handler, a node at a time per set (semantics.md §C).
func (e *Executor) SurgeGroup(ctx context.Context, group string, to kubeversion.Minor) error {
	desiredText, _, err := e.once("UpdateAutoScalingGroup", func(token *string) (string, error) {
		g, lt, err := e.hopLaunchTemplate(ctx, group, to, token)
		if err != nil {
			return "", err
		}
		if lt != nil {
			if _, err := e.Ports.AutoScaling.UpdateAutoScalingGroup(ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String(group), LaunchTemplate: lt}); err != nil {
				return "", fmt.Errorf("node group %s: %v", group, apiError(err))
			}
		}
		// The journal keeps the group's capacity before the surge: what
		// it returns to.
		return strconv.Itoa(int(aws.ToInt32(g.DesiredCapacity))), nil
	})
	if err != nil {
		return err
	}
	desired, err := strconv.Atoi(desiredText)
	if err != nil {
		return fmt.Errorf("node group %s: journal: the group's capacity %q: %v", group, desiredText, err)
	}
	what := "node group " + group
	for {
		g, old, err := e.oldInstances(ctx, group, to)
		if err != nil {
			return err
		}
		if len(old) == 0 {
			break
		}
		target := min(int(aws.ToInt32(g.MaxSize)), len(old)+desired)
		if cur := int(aws.ToInt32(g.DesiredCapacity)); target > cur {
			e.Observer.Event("Normal", "Surge", fmt.Sprintf("%s: desired capacity %d → %d for %d old nodes", what, cur, target, len(old)))
			if _, err := e.Ports.AutoScaling.SetDesiredCapacity(ctx, &autoscaling.SetDesiredCapacityInput{AutoScalingGroupName: aws.String(group), DesiredCapacity: aws.Int32(int32(target))}); err != nil {
				return fmt.Errorf("node group %s: %v", group, apiError(err))
			}
		}
		// Wait for the new nodes the capacity asks for: target minus the
		// old instances still in it.
		var ready int
		want := max(target, int(aws.ToInt32(g.DesiredCapacity))) - len(old)
		if err := e.WaitFor(ctx, kubeport.Polled{Every: surgePoll, Ticks: true, Gate: kubeport.Until{What: fmt.Sprintf("%s: %d new nodes Ready", what, want), Holds: func(ctx context.Context) (bool, error) {
			ready, err = e.readyAtMinor(ctx, group, to)
			return ready >= want, err
		}}}); err != nil {
			return err
		}
		// Each new node beyond the group's first capacity takes an old
		// one's place.
		n := min(len(old), ready+len(old)-desired)
		if n <= 0 {
			return fmt.Errorf("node group %s: max size %d leaves no room for a new instance beside %d; raise it (aws autoscaling update-auto-scaling-group --max-size) or use --strategy instance-refresh", group, aws.ToInt32(g.MaxSize), len(old))
		}
		var nodes []string
		for _, in := range old {
			nodes = append(nodes, in.node)
		}
		for _, node := range nodes {
			if err := e.Ports.Kube.Cordon(ctx, node); err != nil {
				return fmt.Errorf("cordon node/%s: %w", node, err)
			}
		}
		if err := e.drainInWaves(ctx, what, nodes[:n], surgePoll); err != nil {
			return err
		}
		for _, in := range old[:n] {
			if _, _, err := e.once("TerminateInstanceInAutoScalingGroup/"+in.id, func(*string) (string, error) {
				if _, err := e.Ports.AutoScaling.TerminateInstanceInAutoScalingGroup(ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{
					InstanceId: aws.String(in.id), ShouldDecrementDesiredCapacity: aws.Bool(true)}); err != nil {
					return "", fmt.Errorf("node group %s: node/%s: %v", group, in.node, apiError(err))
				}
				return in.node, nil
			}); err != nil {
				return err
			}
		}
	}
	return e.WaitFor(ctx, kubeport.NodesAtMinor{Label: selfManagedLabel, Value: group, Minor: to})
}

// groupInstance is an instance of a self-managed group and its node.
type groupInstance struct{ id, node string }

// oldInstances reads the group and lists, in node name order, its
// instances that stay (not terminating) whose nodes run a kubelet below
// the hop's minor. An instance is its node's by the node's provider id
// (aws:///ZONE/INSTANCE-ID), as the cloud provider names it.
func (e *Executor) oldInstances(ctx context.Context, group string, to kubeversion.Minor) (*asgtypes.AutoScalingGroup, []groupInstance, error) {
	out, err := e.Ports.AutoScaling.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{group}})
	if err != nil {
		return nil, nil, fmt.Errorf("node group %s: %v", group, apiError(err))
	}
	if len(out.AutoScalingGroups) == 0 {
		return nil, nil, fmt.Errorf("node group %s: no Auto Scaling group of that name", group)
	}
	g := &out.AutoScalingGroups[0]
	staying := map[string]bool{}
	for _, in := range g.Instances {
		switch in.LifecycleState {
		case asgtypes.LifecycleStatePending, asgtypes.LifecycleStateInService:
			staying[aws.ToString(in.InstanceId)] = true
		}
	}
	nodes, err := e.groupNodes(ctx, group)
	if err != nil {
		return nil, nil, err
	}
	var old []groupInstance
	for _, n := range nodes {
		id := n.Spec.ProviderID[strings.LastIndex(n.Spec.ProviderID, "/")+1:]
		if staying[id] && belowMinor(n, to) {
			old = append(old, groupInstance{id: id, node: n.Name})
		}
	}
	slices.SortFunc(old, func(a, b groupInstance) int { return strings.Compare(a.node, b.node) })
	return g, old, nil
}

// readyAtMinor counts the group's nodes at the hop's minor that are Ready
// and schedulable.
func (e *Executor) readyAtMinor(ctx context.Context, group string, to kubeversion.Minor) (int, error) {
	nodes, err := e.groupNodes(ctx, group)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, node := range nodes {
		if !belowMinor(node, to) && !node.Spec.Unschedulable && nodeReady(node) {
			n++
		}
	}
	return n, nil
}

func (e *Executor) groupNodes(ctx context.Context, group string) ([]corev1.Node, error) {
	nodes, err := e.Ports.Kube.ListNodes(ctx)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(nodes, func(n corev1.Node) bool { return n.Labels[selfManagedLabel] != group }), nil
}

// belowMinor reports whether the node's kubelet is older than the minor.
func belowMinor(n corev1.Node, to kubeversion.Minor) bool {
	v, err := kubeversion.Parse(n.Status.NodeInfo.KubeletVersion)
	return err == nil && v.Less(to)
}

func nodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
