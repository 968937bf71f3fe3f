// Package labkarpenter is the lab's Karpenter cloud provider: Karpenter's
// own controllers (sigs.k8s.io/karpenter) run against the lab's API server,
// and this provider plays EC2 for them. An "instance" is a KWOK Node: Create
// launches one for a NodeClaim, on an instance type and offering of the
// embedded catalog and the image its EC2NodeClass resolves to; Delete
// removes it. The EC2NodeClass (karpenter.k8s.aws/v1) status is Ladder's
// too (NodeClassController), resolved with the twin's AMI rule, so that
// patching amiSelectorTerms — or a new control-plane version under an
// @latest alias — makes Karpenter's disruption controller drift the nodes
// (aws-apis.md §6.6, semantics.md §A.3).
package labkarpenter

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	awsapis "github.com/aws/karpenter-provider-aws/pkg/apis"
	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	"github.com/awslabs/operatorpkg/status"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/disruption"
	"github.com/ladder-eks/ladder/internal/materialize"
	"github.com/ladder-eks/ladder/internal/rules/nodeclass"
	"github.com/ladder-eks/ladder/internal/twin/ec2"
	"github.com/ladder-eks/ladder/internal/twin/karpenter"
)

// providerIDPrefix is an EC2 instance's providerID, aws:///<zone>/<id>: the
// lab's instances carry the same as the twin's and materialized nodes.
const providerIDPrefix = "aws:///"

// containerRuntime is what an EKS-optimized AMI's kubelet reports.
const containerRuntime = "containerd://1.7.27"

// CloudProvider implements Karpenter's cloudprovider.CloudProvider over KWOK
// Nodes. The Node is the instance: its labels, providerID, capacity and
// the image-id annotation are what Get and List read back.
type CloudProvider struct {
	kube          client.Client
	region        string
	instanceTypes []*cloudprovider.InstanceType

	mu    sync.Mutex
	cloud *ec2.Cloud // instance ids, private IPs and hostnames per zone
}

var _ cloudprovider.CloudProvider = (*CloudProvider)(nil)

// New returns a provider launching into the region's zones. seed seeds the
// instance ids and addresses.
func New(kube client.Client, region string, zones []string, seed uint64) *CloudProvider {
	return &CloudProvider{
		kube:          kube,
		region:        region,
		instanceTypes: InstanceTypes(region, zones),
		cloud:         ec2.New(region, zones, rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))),
	}
}

// Create launches the NodeClaim's instance, as the AWS provider's Create
// does (aws-apis.md §6.1, §6.6): the EC2NodeClass must be Ready at its
// generation; the cheapest available offering among the NodeClaim's
// instance types that an image of status.amis boots wins; the Node
// registers with karpenter.sh/unregistered:NoExecute, which Karpenter's
// registration controller lifts.
func (c *CloudProvider) Create(ctx context.Context, nodeClaim *karpv1.NodeClaim) (*karpv1.NodeClaim, error) {
	nc, err := c.nodeClass(ctx, nodeClaim)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, cloudprovider.NewInsufficientCapacityError(fmt.Errorf("resolving EC2NodeClass: %w", err))
		}
		return nil, fmt.Errorf("resolving EC2NodeClass: %w", err)
	}
	switch ready := nc.StatusConditions().Get(status.ConditionReady); {
	case ready.IsFalse():
		return nil, cloudprovider.NewNodeClassNotReadyError(errors.New(ready.Message))
	case ready.IsUnknown():
		return nil, cloudprovider.NewCreateError(fmt.Errorf("EC2NodeClass %s readiness is unknown", nc.Name), "NodeClassReadinessUnknown", "EC2NodeClass readiness is unknown")
	case ready.ObservedGeneration != nc.Generation:
		return nil, cloudprovider.NewNodeClassNotReadyError(fmt.Errorf("EC2NodeClass %s status is stale (generation %d observed at %d)", nc.Name, nc.Generation, ready.ObservedGeneration))
	}
	it, o, imageID, ok := c.cheapest(nodeClaim, nc)
	if !ok {
		return nil, cloudprovider.NewInsufficientCapacityError(fmt.Errorf("no available offering of the NodeClaim's instance types is booted by an AMI of EC2NodeClass %s", nc.Name))
	}
	ami, ok := catalog.LookupAMI(imageID)
	if !ok {
		return nil, cloudprovider.NewCreateError(fmt.Errorf("AMI %s is not in the catalog", imageID), "AMINotFound", "the AMI is not in the catalog")
	}
	zone := o.Requirements.Get(corev1.LabelTopologyZone).Any()
	var node *corev1.Node
	// A hostname can be taken by a node the provider did not launch (a
	// materialized one): draw another address.
	for range 8 {
		c.mu.Lock()
		inst, err := c.cloud.Launch(zone)
		c.mu.Unlock()
		if err != nil {
			return nil, cloudprovider.NewInsufficientCapacityError(err)
		}
		node = c.newNode(nodeClaim, nc, it, o, ami, inst)
		err = c.kube.Create(ctx, node)
		if err == nil {
			break
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating node %s: %w", node.Name, err)
		}
		node = nil
	}
	if node == nil {
		return nil, fmt.Errorf("no free hostname in zone %s", zone)
	}
	out := toNodeClaim(node)
	// Create stamps the class's hash on the NodeClaim, for NodeClassDrift.
	out.Annotations = map[string]string{}
	for _, k := range []string{awsv1.AnnotationEC2NodeClassHash, awsv1.AnnotationEC2NodeClassHashVersion} {
		if v, ok := nc.Annotations[k]; ok {
			out.Annotations[k] = v
		}
	}
	return out, nil
}

// cheapest is the offering a launch picks: among the NodeClaim's instance
// types (its node.kubernetes.io/instance-type requirement) that an image of
// status.amis boots (amifamily.MapToInstanceTypes), the available offering
// compatible with its requirements at the lowest price; ties go to the
// first in catalog, zone and spot-then-on-demand order, so a launch is
// reproducible.
func (c *CloudProvider) cheapest(nodeClaim *karpv1.NodeClaim, nc *awsv1.EC2NodeClass) (*cloudprovider.InstanceType, *cloudprovider.Offering, string, bool) {
	reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(nodeClaim.Spec.Requirements...)
	names := reqs.Get(corev1.LabelInstanceTypeStable)
	var (
		bestType  *cloudprovider.InstanceType
		bestOffer *cloudprovider.Offering
		bestImage string
	)
	for _, it := range c.instanceTypes {
		if !names.Has(it.Name) || it.Requirements.Intersects(reqs) != nil {
			continue
		}
		image := disruption.MappedAMI(nc.Status.AMIs, it.Requirements)
		if image == "" {
			continue
		}
		for _, o := range it.Offerings.Available().Compatible(reqs) {
			if bestOffer == nil || o.Price < bestOffer.Price {
				bestType, bestOffer, bestImage = it, o, image
			}
		}
	}
	return bestType, bestOffer, bestImage, bestOffer != nil
}

// newNode is the Node the instance's kubelet registers: the NodeClaim's
// labels and single-valued requirements, the instance type's and the
// offering's labels, the KWOK annotation that hands it to KWOK, the image
// id, the catalog's capacity and the AMI's kubelet version.
func (c *CloudProvider) newNode(nodeClaim *karpv1.NodeClaim, nc *awsv1.EC2NodeClass, it *cloudprovider.InstanceType, o *cloudprovider.Offering, ami catalog.AMI, inst ec2.Instance) *corev1.Node {
	labels := map[string]string{}
	for k, v := range nodeClaim.Labels {
		labels[k] = v
	}
	for _, r := range nodeClaim.Spec.Requirements {
		if r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 1 {
			labels[r.Key] = r.Values[0]
		}
	}
	cat, _ := catalog.LookupInstanceType(it.Name)
	for k, v := range nodeclass.InstanceLabels(cat) {
		labels[k] = v
	}
	for _, r := range o.Requirements {
		labels[r.Key] = r.Any()
	}
	labels[corev1.LabelTopologyRegion] = c.region
	labels[corev1.LabelHostname] = inst.Hostname
	labels[awsv1.LabelNodeClass] = nc.Name
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:   inst.Hostname,
			Labels: labels,
			Annotations: map[string]string{
				materialize.KwokAnnotation:  materialize.KwokValue,
				karpenter.ImageIDAnnotation: ami.ID,
			},
		},
		Spec: corev1.NodeSpec{
			ProviderID: inst.ProviderID,
			Taints:     []corev1.Taint{karpv1.UnregisteredNoExecuteTaint},
		},
		Status: corev1.NodeStatus{
			Capacity:    cat.Capacity(),
			Allocatable: cat.Allocatable(),
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion: ami.KubeletVersion,
				//lint:ignore SA1019 deprecated upstream, but EKS nodes still report it and kube-proxy skew checks read it
				KubeProxyVersion:        ami.KubeletVersion,
				OperatingSystem:         "linux",
				Architecture:            cat.Arch,
				ContainerRuntimeVersion: containerRuntime,
			},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: inst.PrivateIP},
				{Type: corev1.NodeInternalDNS, Address: inst.Hostname},
				{Type: corev1.NodeHostName, Address: inst.Hostname},
			},
		},
	}
}

// Delete terminates the NodeClaim's instance: its Node is deleted (at
// once, as KWOK's provider does; Karpenter's termination finalizer has
// drained it first), and NodeClaimNotFound says it is gone.
func (c *CloudProvider) Delete(ctx context.Context, nodeClaim *karpv1.NodeClaim) error {
	node, err := c.nodeByProviderID(ctx, nodeClaim.Status.ProviderID)
	if err != nil {
		return err
	}
	if node != nil && node.DeletionTimestamp.IsZero() {
		if err := c.kube.Delete(ctx, node); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("terminating instance %s: %w", nodeClaim.Status.ProviderID, err)
		}
	}
	return cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("instance %s terminated", nodeClaim.Status.ProviderID))
}

// Get is the instance behind a providerID; a Node being deleted is an
// instance shutting down, so not found.
func (c *CloudProvider) Get(ctx context.Context, providerID string) (*karpv1.NodeClaim, error) {
	node, err := c.nodeByProviderID(ctx, providerID)
	if err != nil {
		return nil, err
	}
	if node == nil || !node.DeletionTimestamp.IsZero() {
		return nil, cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("instance %s not found", providerID))
	}
	return toNodeClaim(node), nil
}

// List is every instance Karpenter launched: the EC2 Nodes labelled with a
// NodePool (the karpenter.sh/nodepool tag), not a node group's.
func (c *CloudProvider) List(ctx context.Context) ([]*karpv1.NodeClaim, error) {
	var nodes corev1.NodeList
	if err := c.kube.List(ctx, &nodes, client.HasLabels{karpv1.NodePoolLabelKey}); err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	var out []*karpv1.NodeClaim
	for i := range nodes.Items {
		if strings.HasPrefix(nodes.Items[i].Spec.ProviderID, providerIDPrefix) {
			out = append(out, toNodeClaim(&nodes.Items[i]))
		}
	}
	return out, nil
}

func (c *CloudProvider) nodeByProviderID(ctx context.Context, providerID string) (*corev1.Node, error) {
	if providerID == "" {
		return nil, nil
	}
	var nodes corev1.NodeList
	if err := c.kube.List(ctx, &nodes); err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	i := slices.IndexFunc(nodes.Items, func(n corev1.Node) bool { return n.Spec.ProviderID == providerID })
	if i < 0 {
		return nil, nil
	}
	return &nodes.Items[i], nil
}

// toNodeClaim is what DescribeInstances tells of an instance.
func toNodeClaim(node *corev1.Node) *karpv1.NodeClaim {
	return &karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:              node.Name,
			Labels:            node.Labels,
			DeletionTimestamp: node.DeletionTimestamp,
		},
		Status: karpv1.NodeClaimStatus{
			NodeName:    node.Name,
			ProviderID:  node.Spec.ProviderID,
			ImageID:     node.Annotations[karpenter.ImageIDAnnotation],
			Capacity:    node.Status.Capacity,
			Allocatable: node.Status.Allocatable,
		},
	}
}

// GetInstanceTypes is the catalog's instance types, for every NodePool.
func (c *CloudProvider) GetInstanceTypes(context.Context, *karpv1.NodePool) ([]*cloudprovider.InstanceType, error) {
	return c.instanceTypes, nil
}

// IsDrifted is the AWS provider's drift check after Karpenter's own
// (aws-apis.md §6.4): the EC2NodeClass hash, then the image the NodeClaim
// runs against the one status.amis maps its instance type to (AMIDrift).
func (c *CloudProvider) IsDrifted(ctx context.Context, nodeClaim *karpv1.NodeClaim) (cloudprovider.DriftReason, error) {
	if _, ok := nodeClaim.Labels[karpv1.NodePoolLabelKey]; !ok {
		return "", nil
	}
	nc, err := c.nodeClass(ctx, nodeClaim)
	if err != nil {
		return "", client.IgnoreNotFound(err)
	}
	return cloudprovider.DriftReason(disruption.NodeClassDriftReason(nc, nodeClaim, nil)), nil
}

func (c *CloudProvider) nodeClass(ctx context.Context, nodeClaim *karpv1.NodeClaim) (*awsv1.EC2NodeClass, error) {
	if nodeClaim.Spec.NodeClassRef == nil {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: awsapis.Group, Resource: "ec2nodeclasses"}, "")
	}
	nc := &awsv1.EC2NodeClass{}
	if err := c.kube.Get(ctx, types.NamespacedName{Name: nodeClaim.Spec.NodeClassRef.Name}, nc); err != nil {
		return nil, err
	}
	return nc, nil
}

// RepairPolicies is none: node repair stays off, as its feature gate is
// by default.
func (c *CloudProvider) RepairPolicies() []cloudprovider.RepairPolicy { return nil }

// Name names the provider in Karpenter's metrics.
func (c *CloudProvider) Name() string { return "ladder" }

// GetSupportedNodeClasses is the EC2NodeClass: Karpenter manages only the
// NodePools that reference one.
func (c *CloudProvider) GetSupportedNodeClasses() []status.Object {
	return []status.Object{&awsv1.EC2NodeClass{}}
}
