package disruption

import (
	"slices"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

// Drift reasons, as Karpenter names them in the NodeClaim's Drifted
// condition (semantics.md §A.3) ...
const (
	NodePoolDrifted     = "NodePoolDrifted"
	RequirementsDrifted = "RequirementsDrifted"
)

// ... and as its AWS provider does (aws-apis.md §6.4).
const (
	NodeClassDrift     = "NodeClassDrift"
	AMIDrift           = "AMIDrift"
	SecurityGroupDrift = "SecurityGroupDrift"
	SubnetDrift        = "SubnetDrift"
)

// StampNodePoolHash is Karpenter's nodepool hash controller: it writes
// NodePool.Hash() (spec.template) and NodePoolHashVersion on the NodePool's
// annotations; a NodeClaim created from it carries the same two.
func StampNodePoolHash(np *karpv1.NodePool) {
	if np.Annotations == nil {
		np.Annotations = map[string]string{}
	}
	np.Annotations[karpv1.NodePoolHashAnnotationKey] = np.Hash()
	np.Annotations[karpv1.NodePoolHashVersionAnnotationKey] = karpv1.NodePoolHashVersion
}

// StampNodeClassHash is the AWS provider's nodeclass hash controller:
// EC2NodeClass.Hash (spec minus the selector terms, the resolved AMI
// family; no CA bundle) and EC2NodeClassHashVersion on the EC2NodeClass's
// annotations; the provider's Create copies both onto the NodeClaim.
func StampNodeClassHash(nc *awsv1.EC2NodeClass) {
	if nc.Annotations == nil {
		nc.Annotations = map[string]string{}
	}
	nc.Annotations[awsv1.AnnotationEC2NodeClassHash] = nc.Hash(nil)
	nc.Annotations[awsv1.AnnotationEC2NodeClassHashVersion] = awsv1.EC2NodeClassHashVersion
}

// Instance is what the AWS provider reads of a NodeClaim's EC2 instance
// (DescribeInstances) for the last drift checks.
type Instance struct {
	SubnetID         string
	SecurityGroupIDs []string
}

// DriftReason is why a launched NodeClaim no longer matches its NodePool
// and EC2NodeClass, or "" (aws-apis.md §6.4). Karpenter checks, in order,
// the NodePool hash annotations (stamped at creation; compared only when
// both sides carry the same hash version), the NodePool's requirements
// against the NodeClaim's labels, then the provider's IsDrifted: the
// EC2NodeClass hash annotations the same way, the AMI the first image of
// status.amis compatible with the instance type would be, and, when the
// instance is known and the EC2NodeClass lists them, its security groups
// and subnet. nc nil (not found) skips the provider's checks. The instance
// type's labels are read from the NodeClaim's, which the provider copies
// from them at launch.
//
// InstanceTypeNotFound, capacity reservation and placement group drift are
// not checked.
func DriftReason(np *karpv1.NodePool, nc *awsv1.EC2NodeClass, claim *karpv1.NodeClaim, instance *Instance) string {
	if hashDrifted(np.Annotations, claim.Annotations, karpv1.NodePoolHashAnnotationKey, karpv1.NodePoolHashVersionAnnotationKey) {
		return NodePoolDrifted
	}
	labels := scheduling.NewLabelRequirements(claim.Labels)
	if labels.Compatible(scheduling.NewNodeSelectorRequirementsWithMinValues(np.Spec.Template.Spec.Requirements...)) != nil {
		return RequirementsDrifted
	}
	if nc == nil {
		return ""
	}
	return NodeClassDriftReason(nc, claim, instance)
}

// NodeClassDriftReason is the AWS provider's IsDrifted (aws-apis.md §6.4):
// the EC2NodeClass hash annotations (compared only when both sides carry
// the same hash version), the AMI the first image of status.amis
// compatible with the instance type would be, and, when the instance is
// known and the EC2NodeClass lists them, its security groups and subnet;
// "" when none has drifted.
func NodeClassDriftReason(nc *awsv1.EC2NodeClass, claim *karpv1.NodeClaim, instance *Instance) string {
	if hashDrifted(nc.Annotations, claim.Annotations, awsv1.AnnotationEC2NodeClassHash, awsv1.AnnotationEC2NodeClassHashVersion) {
		return NodeClassDrift
	}
	if len(nc.Status.AMIs) > 0 && claim.Status.ImageID != "" {
		if MappedAMI(nc.Status.AMIs, scheduling.NewLabelRequirements(claim.Labels)) != claim.Status.ImageID {
			return AMIDrift
		}
	}
	if instance == nil {
		return ""
	}
	if want := nc.Status.SecurityGroups; len(want) > 0 {
		ids := make([]string, len(want))
		for i, sg := range want {
			ids[i] = sg.ID
		}
		if !sameSet(ids, instance.SecurityGroupIDs) {
			return SecurityGroupDrift
		}
	}
	if subnets := nc.Status.Subnets; len(subnets) > 0 && !slices.ContainsFunc(subnets, func(s awsv1.Subnet) bool { return s.ID == instance.SubnetID }) {
		return SubnetDrift
	}
	return ""
}

// hashDrifted is areStaticFieldsDrifted: the hashes differ while both
// sides carry them and the same hash version.
func hashDrifted(owner, claim map[string]string, hashKey, versionKey string) bool {
	ownerHash, ok1 := owner[hashKey]
	ownerVersion, ok2 := owner[versionKey]
	claimHash, ok3 := claim[hashKey]
	claimVersion, ok4 := claim[versionKey]
	if !ok1 || !ok2 || !ok3 || !ok4 || ownerVersion != claimVersion {
		return false
	}
	return ownerHash != claimHash
}

func sameSet(a, b []string) bool {
	in := map[string]bool{}
	for _, s := range a {
		in[s] = true
	}
	seen := map[string]bool{}
	for _, s := range b {
		if !in[s] {
			return false
		}
		seen[s] = true
	}
	return len(seen) == len(in)
}

// AMIRequirements are the requirements status.amis gives an image of an
// architecture: the instance types it serves.
func AMIRequirements(kubeArch string) []corev1.NodeSelectorRequirement {
	return []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{kubeArch}}}
}

// MappedAMI is amifamily.MapToInstanceTypes for one instance type: the
// first image of status.amis whose requirements the type's labels meet —
// the image a launch of that type gets, and the one a NodeClaim of it must
// run not to have drifted. "" when none does.
func MappedAMI(amis []awsv1.AMI, instanceType scheduling.Requirements) string {
	for _, ami := range amis {
		if instanceType.Compatible(scheduling.NewNodeSelectorRequirements(ami.Requirements...)) == nil {
			return ami.ID
		}
	}
	return ""
}
