package disruption

import (
	"testing"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// TestDriftReason: each of Karpenter's drift checks over API objects, in
// upstream's order, with the hash annotations its controllers stamp
// (aws-apis.md §6.4).
func TestDriftReason(t *testing.T) {
	pool := func(mut ...func(*karpv1.NodePool)) *karpv1.NodePool {
		np := &karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
		np.Spec.Template.Labels = map[string]string{"team": "a"}
		np.Spec.Template.Spec.Requirements = []karpv1.NodeSelectorRequirementWithMinValues{
			{Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"on-demand"}}}
		for _, m := range mut {
			m(np)
		}
		StampNodePoolHash(np)
		return np
	}
	class := func(mut ...func(*awsv1.EC2NodeClass)) *awsv1.EC2NodeClass {
		nc := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
		nc.Spec.Role = "node-role"
		nc.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{ID: "ami-new"}}
		nc.Status.AMIs = []awsv1.AMI{
			{ID: "ami-arm-new", Requirements: AMIRequirements("arm64")},
			{ID: "ami-new", Requirements: AMIRequirements("amd64")},
			{ID: "ami-old", Requirements: AMIRequirements("amd64")},
		}
		for _, m := range mut {
			m(nc)
		}
		StampNodeClassHash(nc)
		return nc
	}
	// claimOf is a NodeClaim created from np and launched from nc on an
	// amd64 on-demand instance running image.
	claimOf := func(np *karpv1.NodePool, nc *awsv1.EC2NodeClass, image string) *karpv1.NodeClaim {
		ann := map[string]string{}
		for _, m := range []map[string]string{np.Annotations, nc.Annotations} {
			for k, v := range m {
				ann[k] = v
			}
		}
		return &karpv1.NodeClaim{
			ObjectMeta: metav1.ObjectMeta{Annotations: ann, Labels: map[string]string{
				corev1.LabelArchStable: "amd64", karpv1.CapacityTypeLabelKey: "on-demand", "team": "a"}},
			Status: karpv1.NodeClaimStatus{ImageID: image},
		}
	}
	launchedFrom, launchedClass := pool(), class()
	cases := []struct {
		name     string
		pool     *karpv1.NodePool
		class    *awsv1.EC2NodeClass
		image    string
		instance *Instance
		edit     func(*karpv1.NodeClaim)
		want     string
	}{
		{name: "unchanged", pool: pool(), class: class(), image: "ami-new", want: ""},
		{name: "template label changed", pool: pool(func(np *karpv1.NodePool) { np.Spec.Template.Labels["team"] = "b" }), class: class(), image: "ami-new", want: NodePoolDrifted},
		{name: "template label changed, other hash version on the NodeClaim", pool: pool(func(np *karpv1.NodePool) { np.Spec.Template.Labels["team"] = "b" }), class: class(), image: "ami-new",
			edit: func(c *karpv1.NodeClaim) { c.Annotations[karpv1.NodePoolHashVersionAnnotationKey] = "v2" }, want: ""},
		{name: "template label changed, NodeClaim without hash", pool: pool(func(np *karpv1.NodePool) { np.Spec.Template.Labels["team"] = "b" }), class: class(), image: "ami-new",
			edit: func(c *karpv1.NodeClaim) { delete(c.Annotations, karpv1.NodePoolHashAnnotationKey) }, want: ""},
		{name: "requirements: spot only (not hashed)", pool: pool(func(np *karpv1.NodePool) { np.Spec.Template.Spec.Requirements[0].Values = []string{"spot"} }), class: class(), image: "ami-new", want: RequirementsDrifted},
		{name: "EC2NodeClass role changed", pool: pool(), class: class(func(nc *awsv1.EC2NodeClass) { nc.Spec.Role = "other" }), image: "ami-new", want: NodeClassDrift},
		{name: "amiSelectorTerms changed (not hashed), same AMIs", pool: pool(), class: class(func(nc *awsv1.EC2NodeClass) {
			nc.Spec.AMISelectorTerms = append(nc.Spec.AMISelectorTerms, awsv1.AMISelectorTerm{ID: "ami-old"})
		}), image: "ami-new", want: ""},
		{name: "older image than the first amd64 AMI", pool: pool(), class: class(), image: "ami-old", want: AMIDrift},
		{name: "only arm64 AMIs", pool: pool(), class: class(func(nc *awsv1.EC2NodeClass) { nc.Status.AMIs = nc.Status.AMIs[:1] }), image: "ami-new", want: AMIDrift},
		{name: "no EC2NodeClass: provider checks skipped", pool: pool(), image: "ami-old", want: ""},
		{name: "security groups differ", pool: pool(), class: class(func(nc *awsv1.EC2NodeClass) {
			nc.Status.SecurityGroups = []awsv1.SecurityGroup{{ID: "sg-1"}, {ID: "sg-2"}}
		}),
			image: "ami-new", instance: &Instance{SubnetID: "subnet-1", SecurityGroupIDs: []string{"sg-1"}}, want: SecurityGroupDrift},
		{name: "security groups the same set", pool: pool(), class: class(func(nc *awsv1.EC2NodeClass) {
			nc.Status.SecurityGroups = []awsv1.SecurityGroup{{ID: "sg-1"}, {ID: "sg-2"}}
		}),
			image: "ami-new", instance: &Instance{SubnetID: "subnet-1", SecurityGroupIDs: []string{"sg-2", "sg-1"}}, want: ""},
		{name: "subnet no longer selected", pool: pool(), class: class(func(nc *awsv1.EC2NodeClass) { nc.Status.Subnets = []awsv1.Subnet{{ID: "subnet-2"}} }),
			image: "ami-new", instance: &Instance{SubnetID: "subnet-1"}, want: SubnetDrift},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			claim := claimOf(launchedFrom, launchedClass, tc.image)
			if tc.edit != nil {
				tc.edit(claim)
			}
			if got := DriftReason(tc.pool, tc.class, claim, tc.instance); got != tc.want {
				t.Errorf("DriftReason = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestStampedHashesAreUpstreams: the annotations carry upstream's own hash
// functions' values and hash versions.
func TestStampedHashesAreUpstreams(t *testing.T) {
	np := &karpv1.NodePool{}
	np.Spec.Template.Labels = map[string]string{"team": "a"}
	StampNodePoolHash(np)
	if np.Annotations[karpv1.NodePoolHashAnnotationKey] != np.Hash() || np.Annotations[karpv1.NodePoolHashVersionAnnotationKey] != "v3" {
		t.Errorf("NodePool annotations %v, want hash %s version v3", np.Annotations, np.Hash())
	}
	nc := &awsv1.EC2NodeClass{}
	nc.Spec.Role = "r"
	StampNodeClassHash(nc)
	if nc.Annotations[awsv1.AnnotationEC2NodeClassHash] != nc.Hash(nil) || nc.Annotations[awsv1.AnnotationEC2NodeClassHashVersion] != "v5" {
		t.Errorf("EC2NodeClass annotations %v, want hash %s version v5", nc.Annotations, nc.Hash(nil))
	}
}
