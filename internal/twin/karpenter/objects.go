package karpenter

import (
	"sort"
	"time"

	awsapis "github.com/aws/karpenter-provider-aws/pkg/apis"
	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	"github.com/awslabs/operatorpkg/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpapis "sigs.k8s.io/karpenter/pkg/apis"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// The twin's state as the API objects a client reads: what
// `kubectl get nodepools,ec2nodeclasses,nodeclaims -o yaml` shows of it.
// Each call returns a fresh copy the caller owns.

// karpenterAPIVersion is the apiVersion of NodePools and NodeClaims.
const karpenterAPIVersion = karpapis.Group + "/v1"

// NodePoolObjects returns every NodePool as stored (defaulted), sorted by
// name.
func (k *Karpenter) NodePoolObjects() []karpv1.NodePool {
	out := make([]karpv1.NodePool, 0, len(k.pools))
	for _, name := range k.NodePools() {
		out = append(out, *k.pools[name].obj.DeepCopy())
	}
	return out
}

// NodeClassObject returns an EC2NodeClass with the status the nodeclass
// controller writes (status.amis from the resolved selector terms), or nil.
func (k *Karpenter) NodeClassObject(name string) *awsv1.EC2NodeClass {
	c, ok := k.classes[name]
	if !ok {
		return nil
	}
	obj := c.obj.DeepCopy()
	obj.Status.AMIs = make([]awsv1.AMI, 0, len(c.amis))
	for _, a := range c.amis {
		obj.Status.AMIs = append(obj.Status.AMIs, awsv1.AMI{
			ID:   a.ID,
			Name: a.Name,
			Requirements: []corev1.NodeSelectorRequirement{
				{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{a.KubeArch()}},
			},
		})
	}
	return obj
}

// NodeClassObjects returns every EC2NodeClass (see NodeClassObject),
// sorted by name.
func (k *Karpenter) NodeClassObjects() []awsv1.EC2NodeClass {
	names := make([]string, 0, len(k.classes))
	for n := range k.classes {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]awsv1.EC2NodeClass, len(names))
	for i, n := range names {
		out[i] = *k.NodeClassObject(n)
	}
	return out
}

// NodeClaimObject returns a NodeClaim as the API server stores it, or nil.
// It carries the hash annotations upstream stamps at launch
// (karpenter.sh/nodepool-hash, karpenter.k8s.aws/ec2nodeclass-hash and
// their versions, semantics.md §A.3), so drift can be read from the object
// as upstream reads it; the Drifted condition is set once the twin has
// found a drift, with its reason.
func (k *Karpenter) NodeClaimObject(name string) *karpv1.NodeClaim {
	c, ok := k.claims[name]
	if !ok {
		return nil
	}
	return c.object(k.pools[c.NodePool])
}

// NodeClaimObjects returns every NodeClaim (see NodeClaimObject), sorted by
// name.
func (k *Karpenter) NodeClaimObjects() []karpv1.NodeClaim {
	claims := k.NodeClaims()
	out := make([]karpv1.NodeClaim, len(claims))
	for i, c := range claims {
		out[i] = *c.object(k.pools[c.NodePool])
	}
	return out
}

func (c *NodeClaim) object(p *pool) *karpv1.NodeClaim {
	obj := &karpv1.NodeClaim{
		TypeMeta: metav1.TypeMeta{APIVersion: karpenterAPIVersion, Kind: "NodeClaim"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              c.Name,
			CreationTimestamp: metav1.NewTime(c.Created),
			Labels:            map[string]string{karpv1.NodePoolLabelKey: c.NodePool},
			Annotations:       map[string]string{},
			Finalizers:        []string{karpv1.TerminationFinalizer},
		},
		Spec: karpv1.NodeClaimSpec{
			NodeClassRef: &karpv1.NodeClassReference{Group: awsapis.Group, Kind: "EC2NodeClass", Name: c.NodeClass},
		},
	}
	for key, v := range c.labels {
		obj.Labels[key] = v
	}
	if c.poolHash != "" {
		obj.Annotations[karpv1.NodePoolHashAnnotationKey] = c.poolHash
		obj.Annotations[karpv1.NodePoolHashVersionAnnotationKey] = karpv1.NodePoolHashVersion
	}
	if c.classHash != "" {
		obj.Annotations[awsv1.AnnotationEC2NodeClassHash] = c.classHash
		obj.Annotations[awsv1.AnnotationEC2NodeClassHashVersion] = awsv1.EC2NodeClassHashVersion
	}
	if p != nil {
		obj.OwnerReferences = []metav1.OwnerReference{{APIVersion: karpenterAPIVersion, Kind: "NodePool", Name: c.NodePool}}
		obj.Spec.Taints = append([]corev1.Taint(nil), p.taints...)
		obj.Spec.StartupTaints = append([]corev1.Taint(nil), p.startup...)
	}
	if c.requirements != nil {
		// Requirements is a map: sort by key so that the object is the same
		// on every read.
		obj.Spec.Requirements = c.requirements.NodeSelectorRequirements()
		sort.Slice(obj.Spec.Requirements, func(i, j int) bool {
			a, b := obj.Spec.Requirements[i], obj.Spec.Requirements[j]
			if a.Key != b.Key {
				return a.Key < b.Key
			}
			return a.Operator < b.Operator
		})
	}
	if c.ExpireAfter != nil {
		d := *c.ExpireAfter
		obj.Spec.ExpireAfter = karpv1.NillableDuration{Duration: &d}
	}
	if c.TerminationGracePeriod != nil {
		obj.Spec.TerminationGracePeriod = &metav1.Duration{Duration: *c.TerminationGracePeriod}
	}
	if c.deleting || c.markedForDeletion {
		t := metav1.NewTime(c.deletionStarted)
		obj.DeletionTimestamp = &t
	}
	if !c.Launched.IsZero() {
		obj.Status.ProviderID = c.ProviderID
		obj.Status.ImageID = c.AMI.ID
		obj.Status.Capacity = c.InstanceType.Capacity()
		obj.Status.Allocatable = c.InstanceType.Allocatable()
		obj.Labels[corev1.LabelInstanceTypeStable] = c.InstanceType.Name
		obj.Labels[corev1.LabelTopologyZone] = c.Zone
		obj.Labels[karpv1.CapacityTypeLabelKey] = c.CapacityType
	}
	if !c.Registered.IsZero() {
		obj.Status.NodeName = c.Node
	}
	// The lifecycle conditions, then Drifted, each with the instant it
	// turned: Unknown until it happens, as the nodeclaim controllers set them.
	for _, cond := range []struct {
		typ string
		at  time.Time
	}{
		{karpv1.ConditionTypeLaunched, c.Launched},
		{karpv1.ConditionTypeRegistered, c.Registered},
		{karpv1.ConditionTypeInitialized, c.Initialized},
	} {
		obj.Status.Conditions = append(obj.Status.Conditions, condition(cond.typ, cond.at, c.Created, ""))
	}
	if c.Drifted != "" {
		obj.Status.Conditions = append(obj.Status.Conditions, condition(karpv1.ConditionTypeDrifted, c.DriftedSince, c.Created, c.Drifted))
	}
	return obj
}

// condition is True with reason (the type itself when empty) from at on,
// or Unknown since created while at is zero.
func condition(typ string, at, created time.Time, reason string) status.Condition {
	if at.IsZero() {
		return status.Condition{Type: typ, Status: metav1.ConditionUnknown, Reason: "AwaitingReconciliation", LastTransitionTime: metav1.NewTime(created)}
	}
	if reason == "" {
		reason = typ
	}
	return status.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, LastTransitionTime: metav1.NewTime(at)}
}
