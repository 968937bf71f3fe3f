package karpenter_test

import (
	"reflect"
	"testing"
	"time"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/twin/karpenter"
)

// A NodeClaim object carries what upstream stamps at launch — the
// NodePool's and EC2NodeClass's hashes with their versions — so drift can
// be read from the object; a changed AMI turns its Drifted condition True
// with the twin's reason, and the EC2NodeClass's status.amis follows.
func TestNodeClaimObjects(t *testing.T) {
	tw := newTwin(t)
	tw.apply(nodeClass(amiID(ami130)), nodePool())
	tw.adopt(2, "c4.large", "spot", ami130, 4*time.Hour)
	np, nc := tw.karp.NodePool("default"), tw.karp.NodeClass("default")

	objs := tw.karp.NodeClaimObjects()
	if len(objs) != 2 || objs[0].Name != tw.karp.NodeClaims()[0].Name {
		t.Fatalf("NodeClaimObjects: %d objects, want the 2 adopted claims in name order", len(objs))
	}
	o := objs[0]
	want := map[string]string{
		karpv1.NodePoolHashAnnotationKey:        np.Hash(),
		karpv1.NodePoolHashVersionAnnotationKey: karpv1.NodePoolHashVersion,
		awsv1.AnnotationEC2NodeClassHash:        nc.Hash(nil), // the twin has no CA bundle, as ApplyNodeClass hashes
		awsv1.AnnotationEC2NodeClassHashVersion: awsv1.EC2NodeClassHashVersion,
	}
	for k, v := range want {
		if o.Annotations[k] != v {
			t.Errorf("%s: annotation %s = %q, want %q", o.Name, k, o.Annotations[k], v)
		}
	}
	if o.Labels[karpv1.NodePoolLabelKey] != "default" || o.Status.ImageID != ami130 || o.Status.NodeName == "" || o.Spec.NodeClassRef.Name != "default" {
		t.Errorf("%s: nodepool label %q, image %q, node %q, class %q", o.Name, o.Labels[karpv1.NodePoolLabelKey], o.Status.ImageID, o.Status.NodeName, o.Spec.NodeClassRef.Name)
	}
	if !o.StatusConditions().Get(karpv1.ConditionTypeInitialized).IsTrue() || o.StatusConditions().Get(karpv1.ConditionTypeDrifted) != nil {
		t.Errorf("%s: conditions %+v, want Initialized and no Drifted", o.Name, o.Status.Conditions)
	}
	if again := tw.karp.NodeClaimObject(o.Name); !reflect.DeepEqual(again, &objs[0]) {
		t.Errorf("two reads of %s differ:\n%+v\n%+v", o.Name, again, &objs[0])
	}

	tw.apply(nodeClass(amiID(ami131)))
	d := tw.karp.NodeClaimObject(o.Name).StatusConditions().Get(karpv1.ConditionTypeDrifted)
	if d == nil || d.Status != metav1.ConditionTrue || d.Reason != karpenter.DriftAMI {
		t.Fatalf("after the AMI change: Drifted %+v, want True with reason %s", d, karpenter.DriftAMI)
	}
	class := tw.karp.NodeClassObject("default")
	if len(class.Status.AMIs) != 1 || class.Status.AMIs[0].ID != ami131 || class.Status.AMIs[0].Requirements[0].Values[0] != "amd64" ||
		class.Status.AMIs[0].Requirements[0].Key != corev1.LabelArchStable {
		t.Fatalf("status.amis = %+v, want %s for amd64", class.Status.AMIs, ami131)
	}
	if tw.karp.NodeClaimObject("missing") != nil || tw.karp.NodeClassObject("missing") != nil {
		t.Fatal("objects for names that do not exist")
	}
}
