package labkarpenter

import (
	"context"
	"fmt"
	"time"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ladder-eks/ladder/internal/disruption"
	"github.com/ladder-eks/ladder/internal/rules/nodeclass"
)

// amiRefresh is how often a class is resolved again: the AWS provider's
// AMI_REFRESH_INTERVAL default (aws-apis.md §6.5), so a new control-plane
// version under an @latest alias shows within a minute.
const amiRefresh = time.Minute

// VersionFunc is the control plane's Kubernetes minor ("1.31"), which an
// alias resolves against: the EKS endpoint's DescribeCluster, or the API
// server's discovery.
type VersionFunc func(ctx context.Context) (string, error)

// NodeClassController writes the EC2NodeClass status the AWS provider's
// nodeclass controllers would (aws-apis.md §6.5): status.amis from the
// twin's AMI rule (ResolveNodeClassAMIs) at the control plane's version,
// AMIsReady, placeholder subnets, security group and instance profile with
// their conditions True, and the class's hash annotations (§6.4) — so that
// the class is Ready at its generation, its NodePools provision, and a
// changed amiSelectorTerms is AMI drift.
type NodeClassController struct {
	kube    client.Client
	zones   []string
	version VersionFunc
	now     func() time.Time
}

// NewNodeClassController returns the controller for a cluster's zones.
func NewNodeClassController(kube client.Client, zones []string, version VersionFunc, now func() time.Time) *NodeClassController {
	return &NodeClassController{kube: kube, zones: zones, version: version, now: now}
}

// Register adds the controller to Karpenter's manager.
func (c *NodeClassController) Register(_ context.Context, m manager.Manager) error {
	return builder.ControllerManagedBy(m).
		Named("ladder.ec2nodeclass.status").
		For(&awsv1.EC2NodeClass{}).
		Complete(reconcile.AsReconciler(m.GetClient(), c))
}

// Reconcile resolves one class and writes its status.
func (c *NodeClassController) Reconcile(ctx context.Context, nc *awsv1.EC2NodeClass) (reconcile.Result, error) {
	if !nc.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	stored := nc.DeepCopy()
	disruption.StampNodeClassHash(nc)
	if !equality.Semantic.DeepEqual(stored.Annotations, nc.Annotations) {
		if err := c.kube.Patch(ctx, nc, client.MergeFrom(stored)); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		stored = nc.DeepCopy()
	}
	if err := c.resolve(ctx, nc); err != nil {
		return reconcile.Result{}, err
	}
	if !equality.Semantic.DeepEqual(stored.Status, nc.Status) {
		if err := c.kube.Status().Patch(ctx, nc, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
	}
	return reconcile.Result{RequeueAfter: amiRefresh}, nil
}

// resolve fills in the status of a class.
func (c *NodeClassController) resolve(ctx context.Context, nc *awsv1.EC2NodeClass) error {
	conds := nc.StatusConditions()
	version, err := c.version(ctx)
	if err != nil {
		return fmt.Errorf("discovering the Kubernetes version: %w", err)
	}
	amis, err := nodeclass.ResolveNodeClassAMIs(nc, version, nil, c.now())
	if err != nil {
		nc.Status.AMIs = nil
		conds.SetFalse(awsv1.ConditionTypeAMIsReady, "AMINotFound", err.Error())
	} else {
		nc.Status.AMIs = nodeclass.StatusAMIs(amis)
		conds.SetTrue(awsv1.ConditionTypeAMIsReady)
	}
	nc.Status.Subnets = nil
	for i, zone := range c.zones {
		nc.Status.Subnets = append(nc.Status.Subnets, awsv1.Subnet{ID: fmt.Sprintf("subnet-%017x", i+1), Zone: zone})
	}
	nc.Status.SecurityGroups = []awsv1.SecurityGroup{{ID: "sg-00000000000000001", Name: "eks-cluster-sg"}}
	if nc.Spec.InstanceProfile != nil {
		nc.Status.InstanceProfile = *nc.Spec.InstanceProfile
	} else {
		nc.Status.InstanceProfile = nc.Spec.Role
	}
	for _, t := range []string{awsv1.ConditionTypeSubnetsReady, awsv1.ConditionTypeSecurityGroupsReady, awsv1.ConditionTypeInstanceProfileReady,
		awsv1.ConditionTypeValidationSucceeded, awsv1.ConditionTypePlacementGroupReady} {
		conds.SetTrue(t)
	}
	if awsv1.CapacityReservationsEnabled {
		conds.SetTrue(awsv1.ConditionTypeCapacityReservationsReady)
	}
	return nil
}
