package capture

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/smithy-go"
	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// Labels EKS, Karpenter and Fargate put on the nodes they launch: how a
// node's group is found.
const (
	labelNodegroup      = "eks.amazonaws.com/nodegroup"
	labelNodegroupImage = "eks.amazonaws.com/nodegroup-image"
	labelComputeType    = "eks.amazonaws.com/compute-type"
	// tagNodegroup is on the Auto Scaling group behind a managed node group.
	tagNodegroup = "eks:nodegroup-name"
)

// groups reads the node groups of every kind.
type groups struct {
	src     Source
	kube    *kubeState
	capture *Capture
	// images are the AMIs in use, by id: the kubelet version a node
	// running it reports and its architecture.
	images map[string]imageUse
}

type imageUse struct{ kubelet, arch, node string }

func (g *groups) read(ctx context.Context) ([]scenario.NodeGroup, error) {
	g.images = map[string]imageUse{}
	var out []scenario.NodeGroup
	for _, step := range []func(context.Context) ([]scenario.NodeGroup, error){g.managed, g.selfManaged, g.karpenter, g.fargate} {
		gs, err := step(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, gs...)
	}
	return out, nil
}

// nodesWhere lists the nodes a predicate picks, by name.
func (g *groups) nodesWhere(pick func(*corev1.Node) bool) []*corev1.Node {
	var out []*corev1.Node
	for i := range g.kube.nodes {
		if pick(&g.kube.nodes[i]) {
			out = append(out, &g.kube.nodes[i])
		}
	}
	return out
}

// nodeZones are the zones of nodes, sorted.
func nodeZones(nodes []*corev1.Node) []string {
	set := map[string]bool{}
	for _, n := range nodes {
		if z := n.Labels[corev1.LabelTopologyZone]; z != "" {
			set[z] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// age is how long ago the oldest of nodes was created; nil without nodes.
func (g *groups) age(nodes []*corev1.Node) *scenario.Duration {
	var oldest time.Time
	for _, n := range nodes {
		if c := n.CreationTimestamp.Time; oldest.IsZero() || c.Before(oldest) {
			oldest = c
		}
	}
	return g.since(oldest)
}

func (g *groups) since(t time.Time) *scenario.Duration {
	if t.IsZero() || !t.Before(g.src.Now) {
		return nil
	}
	return &scenario.Duration{Duration: g.src.Now.Sub(t).Truncate(time.Minute)}
}

// useImage records that node runs image.
func (g *groups) useImage(image string, n *corev1.Node) {
	if image == "" || n == nil {
		return
	}
	if _, seen := g.images[image]; !seen {
		g.images[image] = imageUse{kubelet: n.Status.NodeInfo.KubeletVersion, arch: n.Labels[corev1.LabelArchStable], node: "node " + n.Name}
	}
}

// managed reads the managed node groups from EKS.
func (g *groups) managed(ctx context.Context) ([]scenario.NodeGroup, error) {
	names, err := allNames("eks ListNodegroups", func(token *string) ([]string, *string, error) {
		out, err := g.src.AWS.EKS.ListNodegroups(ctx, &eks.ListNodegroupsInput{ClusterName: &g.src.Cluster, NextToken: token})
		if err != nil {
			return nil, nil, err
		}
		return out.Nodegroups, out.NextToken, nil
	})
	if err != nil {
		return nil, err
	}
	var out []scenario.NodeGroup
	for _, name := range names {
		d, err := g.src.AWS.EKS.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: &g.src.Cluster, NodegroupName: aws.String(name)})
		if err != nil {
			return nil, fmt.Errorf("eks DescribeNodegroup %s: %w", name, err)
		}
		ng, err := g.managedGroup(ctx, d.Nodegroup)
		if err != nil {
			return nil, err
		}
		out = append(out, ng)
	}
	return out, nil
}

func (g *groups) managedGroup(ctx context.Context, d *ekstypes.Nodegroup) (scenario.NodeGroup, error) {
	name := aws.ToString(d.NodegroupName)
	nodes := g.nodesWhere(func(n *corev1.Node) bool { return n.Labels[labelNodegroup] == name })
	m := &scenario.ManagedGroup{
		InstanceTypes:  d.InstanceTypes,
		CapacityType:   string(d.CapacityType),
		AMIType:        string(d.AmiType),
		ReleaseVersion: aws.ToString(d.ReleaseVersion),
		Labels:         d.Labels,
		Zones:          nodeZones(nodes),
		UpdateStrategy: "",
		Age:            g.age(nodes),
	}
	if s := d.ScalingConfig; s != nil {
		m.Desired, m.Min, m.Max = int(aws.ToInt32(s.DesiredSize)), int(aws.ToInt32(s.MinSize)), int(aws.ToInt32(s.MaxSize))
	}
	if d.AmiType != ekstypes.AMITypesCustom {
		m.Version = aws.ToString(d.Version)
	}
	for _, t := range d.Taints {
		m.Taints = append(m.Taints, corev1.Taint{Key: aws.ToString(t.Key), Value: aws.ToString(t.Value), Effect: awsport.KubeTaintEffect(t.Effect)})
	}
	if u := d.UpdateConfig; u != nil {
		if u.MaxUnavailable != nil || u.MaxUnavailablePercentage != nil {
			m.UpdateConfig = &scenario.UpdateConfig{MaxUnavailable: intPtr(u.MaxUnavailable), MaxUnavailablePercentage: intPtr(u.MaxUnavailablePercentage)}
		}
		if u.UpdateStrategy != "" && u.UpdateStrategy != ekstypes.NodegroupUpdateStrategiesDefault {
			m.UpdateStrategy = string(u.UpdateStrategy)
		}
	}
	if lt := d.LaunchTemplate; lt != nil {
		m.LaunchTemplate = &scenario.LaunchTemplate{Name: aws.ToString(lt.Name), Version: aws.ToString(lt.Version)}
		image, err := g.templateImage(ctx, lt.Id, lt.Name, aws.ToString(lt.Version))
		if err != nil {
			return scenario.NodeGroup{}, fmt.Errorf("node group %s: %w", name, err)
		}
		m.LaunchTemplate.ImageID = image
		if m.LaunchTemplate.Name == "" {
			m.LaunchTemplate.Name = aws.ToString(lt.Id)
		}
	}
	for _, n := range nodes {
		g.useImage(n.Labels[labelNodegroupImage], n)
	}
	return scenario.NodeGroup{Name: name, Type: scenario.Managed, Managed: m}, nil
}

// templateImage is the image a launch template version launches, or ""
// when it names none (EKS picks the AMI) or EC2 is not read.
func (g *groups) templateImage(ctx context.Context, id, name *string, version string) (string, error) {
	if g.src.AWS.LaunchTemplates == nil {
		return "", nil
	}
	in := &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateId: id, Versions: []string{version}}
	if id == nil {
		in.LaunchTemplateName = name
	}
	out, err := g.src.AWS.LaunchTemplates.DescribeLaunchTemplateVersions(ctx, in)
	if err != nil {
		return "", fmt.Errorf("ec2 DescribeLaunchTemplateVersions %s version %s: %w", aws.ToString(name)+aws.ToString(id), version, err)
	}
	for _, v := range out.LaunchTemplateVersions {
		if v.LaunchTemplateData != nil && v.LaunchTemplateData.ImageId != nil {
			return *v.LaunchTemplateData.ImageId, nil
		}
	}
	return "", nil
}

func intPtr(v *int32) *int {
	if v == nil {
		return nil
	}
	i := int(*v)
	return &i
}

// instanceNodes maps EC2 instance ids to nodes, from their providerIDs
// (aws:///ZONE/INSTANCE).
func (g *groups) instanceNodes() map[string]*corev1.Node {
	out := map[string]*corev1.Node{}
	for i := range g.kube.nodes {
		n := &g.kube.nodes[i]
		if id := n.Spec.ProviderID[strings.LastIndex(n.Spec.ProviderID, "/")+1:]; strings.HasPrefix(id, "i-") {
			out[id] = n
		}
	}
	return out
}

// selfManaged reads the Auto Scaling groups whose instances are this
// cluster's nodes and that no managed node group owns.
func (g *groups) selfManaged(ctx context.Context) ([]scenario.NodeGroup, error) {
	if g.src.AWS.AutoScaling == nil {
		if len(g.nodesWhere(g.unowned)) > 0 {
			g.capture.Notes = append(g.capture.Notes, "nodes outside managed node groups, Karpenter and Fargate were found, but Auto Scaling was not read: their self-managed groups are not captured")
		}
		return nil, nil
	}
	byInstance := g.instanceNodes()
	var out []scenario.NodeGroup
	var token *string
	var all []asgtypes.AutoScalingGroup
	for {
		page, err := g.src.AWS.AutoScaling.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{NextToken: token})
		if err != nil {
			return nil, fmt.Errorf("autoscaling DescribeAutoScalingGroups: %w", err)
		}
		all = append(all, page.AutoScalingGroups...)
		if token = page.NextToken; token == nil {
			break
		}
	}
	slices.SortFunc(all, func(a, b asgtypes.AutoScalingGroup) int {
		return strings.Compare(aws.ToString(a.AutoScalingGroupName), aws.ToString(b.AutoScalingGroupName))
	})
	for _, a := range all {
		if hasTag(a.Tags, tagNodegroup) {
			continue
		}
		var nodes []*corev1.Node
		for _, in := range a.Instances {
			if n := byInstance[aws.ToString(in.InstanceId)]; n != nil {
				nodes = append(nodes, n)
				g.useImage(aws.ToString(in.ImageId), n)
			}
		}
		if len(nodes) == 0 && !hasTag(a.Tags, "kubernetes.io/cluster/"+g.src.Cluster) {
			continue // another cluster's, or no cluster's
		}
		ng, err := g.selfManagedGroup(ctx, a, nodes)
		if err != nil {
			return nil, err
		}
		out = append(out, ng)
	}
	return out, nil
}

func hasTag(tags []asgtypes.TagDescription, key string) bool {
	for _, t := range tags {
		if aws.ToString(t.Key) == key {
			return true
		}
	}
	return false
}

func (g *groups) selfManagedGroup(ctx context.Context, a asgtypes.AutoScalingGroup, nodes []*corev1.Node) (scenario.NodeGroup, error) {
	name := aws.ToString(a.AutoScalingGroupName)
	s := &scenario.SelfManagedGroup{
		Desired: int(aws.ToInt32(a.DesiredCapacity)),
		Min:     int(aws.ToInt32(a.MinSize)),
		Max:     int(aws.ToInt32(a.MaxSize)),
		Zones:   slices.Sorted(slices.Values(a.AvailabilityZones)),
		Labels:  commonLabels(nodes),
		Taints:  commonTaints(nodes),
		Age:     g.age(nodes),
	}
	for _, in := range a.Instances {
		if s.InstanceType = aws.ToString(in.InstanceType); s.InstanceType != "" {
			break
		}
	}
	if lt := a.LaunchTemplate; lt != nil {
		s.LaunchTemplate = scenario.LaunchTemplate{Name: aws.ToString(lt.LaunchTemplateName), Version: aws.ToString(lt.Version)}
		image, err := g.templateImage(ctx, lt.LaunchTemplateId, lt.LaunchTemplateName, aws.ToString(lt.Version))
		if err != nil {
			return scenario.NodeGroup{}, fmt.Errorf("auto scaling group %s: %w", name, err)
		}
		s.LaunchTemplate.ImageID = image
	}
	if s.LaunchTemplate.ImageID == "" {
		for _, in := range a.Instances {
			if s.LaunchTemplate.ImageID = aws.ToString(in.ImageId); s.LaunchTemplate.ImageID != "" {
				break
			}
		}
	}
	hooks, err := g.src.AWS.AutoScaling.DescribeLifecycleHooks(ctx, &autoscaling.DescribeLifecycleHooksInput{AutoScalingGroupName: &name})
	if err != nil {
		return scenario.NodeGroup{}, fmt.Errorf("autoscaling DescribeLifecycleHooks %s: %w", name, err)
	}
	for _, h := range hooks.LifecycleHooks {
		if aws.ToString(h.LifecycleTransition) == "autoscaling:EC2_INSTANCE_TERMINATING" {
			s.TerminationHook = true
		}
	}
	return scenario.NodeGroup{Name: name, Type: scenario.SelfManaged, SelfManaged: s}, nil
}

// wellKnownLabel reports whether the kubelet, the cloud provider or a
// CSI driver sets the label on every node — not the group's own.
func wellKnownLabel(k string) bool {
	switch k {
	case corev1.LabelHostname, corev1.LabelArchStable, corev1.LabelOSStable, corev1.LabelInstanceTypeStable,
		corev1.LabelInstanceType, "beta.kubernetes.io/arch", "beta.kubernetes.io/os":
		return true
	}
	for _, p := range []string{"topology.kubernetes.io/", "failure-domain.beta.kubernetes.io/", "topology.ebs.csi.aws.com/", "topology.k8s.aws/", "k8s.io/cloud-provider-aws"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// commonLabels are the labels every node carries with one value, less the
// well-known ones: the group's --node-labels.
func commonLabels(nodes []*corev1.Node) map[string]string {
	if len(nodes) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, v := range nodes[0].Labels {
		if !wellKnownLabel(k) {
			out[k] = v
		}
	}
	for _, n := range nodes[1:] {
		for k, v := range out {
			if n.Labels[k] != v {
				delete(out, k)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// commonTaints are the taints every node carries, less those controllers
// add for a while (node conditions, cordons, autoscalers, termination
// handlers, Karpenter).
func commonTaints(nodes []*corev1.Node) []corev1.Taint {
	if len(nodes) == 0 {
		return nil
	}
	var out []corev1.Taint
	for _, t := range nodes[0].Spec.Taints {
		if strings.HasPrefix(t.Key, "node.kubernetes.io/") || strings.HasPrefix(t.Key, "karpenter.sh/") ||
			strings.HasPrefix(t.Key, "aws-node-termination-handler/") || t.Key == "ToBeDeletedByClusterAutoscaler" {
			continue
		}
		all := true
		for _, n := range nodes[1:] {
			if !slices.ContainsFunc(n.Spec.Taints, func(o corev1.Taint) bool { return o.MatchTaint(&t) && o.Value == t.Value }) {
				all = false
			}
		}
		if all {
			t.TimeAdded = nil
			out = append(out, t)
		}
	}
	return out
}

// unowned reports whether a node belongs to no managed group, NodePool or
// Fargate profile: a self-managed node.
func (g *groups) unowned(n *corev1.Node) bool {
	return n.Labels[labelNodegroup] == "" && n.Labels[karpv1.NodePoolLabelKey] == "" && n.Labels[labelComputeType] != "fargate"
}

// karpenter reads one group per NodePool with the nodes its NodeClaims
// launched.
func (g *groups) karpenter(context.Context) ([]scenario.NodeGroup, error) {
	nodeByName := map[string]*corev1.Node{}
	for i := range g.kube.nodes {
		nodeByName[g.kube.nodes[i].Name] = &g.kube.nodes[i]
	}
	pools := slices.Sorted(slices.Values(g.kube.nodePools))
	var out []scenario.NodeGroup
	for _, pool := range pools {
		k := &scenario.KarpenterGroup{NodePool: pool}
		claims := slices.Clone(g.kube.nodeClaims)
		slices.SortFunc(claims, func(a, b karpv1.NodeClaim) int { return strings.Compare(a.Status.NodeName, b.Status.NodeName) })
		for _, nc := range claims {
			n := nodeByName[nc.Status.NodeName]
			if nc.Labels[karpv1.NodePoolLabelKey] != pool || n == nil {
				continue
			}
			g.useImage(nc.Status.ImageID, n)
			k.Nodes = append(k.Nodes, scenario.ExistingNode{
				InstanceType: n.Labels[corev1.LabelInstanceTypeStable],
				Zone:         n.Labels[corev1.LabelTopologyZone],
				CapacityType: n.Labels[karpv1.CapacityTypeLabelKey],
				AMI:          nc.Status.ImageID,
				Age:          g.since(nc.CreationTimestamp.Time),
			})
		}
		out = append(out, scenario.NodeGroup{Name: pool, Type: scenario.Karpenter, Karpenter: k})
	}
	return out, nil
}

// fargate reads the Fargate profiles.
func (g *groups) fargate(ctx context.Context) ([]scenario.NodeGroup, error) {
	names, err := allNames("eks ListFargateProfiles", func(token *string) ([]string, *string, error) {
		out, err := g.src.AWS.EKS.ListFargateProfiles(ctx, &eks.ListFargateProfilesInput{ClusterName: &g.src.Cluster, NextToken: token})
		if err != nil {
			return nil, nil, err
		}
		return out.FargateProfileNames, out.NextToken, nil
	})
	if err != nil {
		return nil, err
	}
	var out []scenario.NodeGroup
	for _, name := range names {
		d, err := g.src.AWS.EKS.DescribeFargateProfile(ctx, &eks.DescribeFargateProfileInput{ClusterName: &g.src.Cluster, FargateProfileName: aws.String(name)})
		if err != nil {
			return nil, fmt.Errorf("eks DescribeFargateProfile %s: %w", name, err)
		}
		f := &scenario.FargateProfile{}
		for _, s := range d.FargateProfile.Selectors {
			f.Selectors = append(f.Selectors, scenario.FargateSelector{Namespace: aws.ToString(s.Namespace), Labels: s.Labels})
		}
		out = append(out, scenario.NodeGroup{Name: name, Type: scenario.Fargate, Fargate: f})
	}
	return out, nil
}

// amis are the AMIs in use that the embedded catalog does not know, with
// the name EC2 gives (when EC2 is read) and the kubelet version a node
// running each reports. The name is what tells the AMI's family (AL2023,
// Bottlerocket, ...), which the plan's image choice needs, so a failed
// DescribeImages fails the capture, naming the AMI and the permission; an
// AMI EC2 no longer has (deregistered: InvalidAMIID.NotFound, or no image)
// keeps its id as its name.
func (g *groups) amis(ctx context.Context) ([]scenario.AMI, error) {
	var out []scenario.AMI
	for _, id := range slices.Sorted(maps.Keys(g.images)) {
		if _, known := catalog.LookupAMI(id); known {
			continue
		}
		use := g.images[id]
		a := scenario.AMI{ID: id, Name: id, KubeletVersion: use.kubelet}
		if v, err := kubeversion.Parse(use.kubelet); err == nil {
			a.KubernetesVersion = v.String()
		}
		if arch, ok := catalog.AMIArch(use.arch); ok {
			a.Arch = arch
		}
		if g.src.AWS.Images != nil {
			images, err := g.src.AWS.Images.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{id}})
			var api smithy.APIError
			switch {
			case errors.As(err, &api) && api.ErrorCode() == "InvalidAMIID.NotFound":
			case err != nil:
				return nil, fmt.Errorf("ec2 DescribeImages %s (the AMI of %s, which the embedded catalog does not know): %w — grant ec2:DescribeImages (deploy/ladder-capture-iam-policy.json)", id, use.node, err)
			case len(images.Images) == 1:
				a.Name = aws.ToString(images.Images[0].Name)
			}
		}
		a.Family = catalog.FamilyOfName(a.Name)
		out = append(out, a)
	}
	return out, nil
}

// allNames pages through an EKS List call (nextToken until none) and
// returns the names sorted; what names the call in errors.
func allNames(what string, page func(token *string) ([]string, *string, error)) ([]string, error) {
	var names []string
	var token *string
	for {
		items, next, err := page(token)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		names = append(names, items...)
		if token = next; token == nil {
			break
		}
	}
	slices.Sort(names)
	return names, nil
}

// readAddons reads the EKS add-ons and their versions.
func readAddons(ctx context.Context, src Source) ([]scenario.Addon, error) {
	names, err := allNames("eks ListAddons", func(token *string) ([]string, *string, error) {
		out, err := src.AWS.EKS.ListAddons(ctx, &eks.ListAddonsInput{ClusterName: &src.Cluster, NextToken: token})
		if err != nil {
			return nil, nil, err
		}
		return out.Addons, out.NextToken, nil
	})
	if err != nil {
		return nil, err
	}
	var out []scenario.Addon
	for _, name := range names {
		d, err := src.AWS.EKS.DescribeAddon(ctx, &eks.DescribeAddonInput{ClusterName: &src.Cluster, AddonName: aws.String(name)})
		if err != nil {
			return nil, fmt.Errorf("eks DescribeAddon %s: %w", name, err)
		}
		out = append(out, scenario.Addon{Name: name, Version: aws.ToString(d.Addon.AddonVersion)})
	}
	return out, nil
}
