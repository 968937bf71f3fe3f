package materialize

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// KWOK's contract with the lab: kwok runs with
// --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake, so it
// plays the kubelet of exactly the nodes that carry this annotation (and of
// the pods bound to them).
const (
	KwokAnnotation = "kwok.x-k8s.io/node"
	KwokValue      = "fake"
)

// FargateScheduler is the scheduler name EKS's Fargate admission webhook
// gives the pods a Fargate profile selects; kube-scheduler leaves them alone.
const FargateScheduler = "fargate-scheduler"

// EBSDriver is the CSI driver of the volumes the lab pre-provisions.
const EBSDriver = "ebs.csi.aws.com"

// Labels every real node carries that the twins leave out, because nothing
// in the twin reads them: the kubelet sets the beta os/arch labels, the AWS
// cloud controller manager the deprecated zone, region and instance-type
// labels beside the topology ones.
var betaLabels = map[string]string{
	corev1.LabelArchStable:         "beta.kubernetes.io/arch",
	corev1.LabelOSStable:           "beta.kubernetes.io/os",
	corev1.LabelTopologyZone:       corev1.LabelFailureDomainBetaZone,
	corev1.LabelTopologyRegion:     corev1.LabelFailureDomainBetaRegion,
	corev1.LabelInstanceTypeStable: corev1.LabelInstanceType,
}

// KWOKNode is the lab's Node for a twin's node: the same name, labels (plus
// the beta labels a kubelet and the cloud provider add), annotations,
// finalizers, taints, providerID, capacity, allocatable and nodeInfo, and
// the KWOK annotation. Conditions are left for KWOK's node-initialize
// stage, which keeps a nodeInfo, capacity and allocatable it finds set
// (sigs.k8s.io/kwok kustomize/stage/node/fast/node-initialize.yaml).
func KWOKNode(twin *corev1.Node) *corev1.Node {
	labels := make(map[string]string, len(twin.Labels)+len(betaLabels))
	for k, v := range twin.Labels {
		labels[k] = v
	}
	for stable, beta := range betaLabels {
		if v, ok := twin.Labels[stable]; ok {
			if _, set := labels[beta]; !set {
				labels[beta] = v
			}
		}
	}
	annotations := map[string]string{KwokAnnotation: KwokValue}
	for k, v := range twin.Annotations {
		annotations[k] = v
	}
	n := &corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        twin.Name,
			Labels:      labels,
			Annotations: annotations,
			Finalizers:  append([]string(nil), twin.Finalizers...),
		},
		Spec: corev1.NodeSpec{
			ProviderID: twin.Spec.ProviderID,
			Taints:     append([]corev1.Taint(nil), twin.Spec.Taints...),
		},
		Status: corev1.NodeStatus{
			Capacity:    twin.Status.Capacity.DeepCopy(),
			Allocatable: twin.Status.Allocatable.DeepCopy(),
			NodeInfo:    twin.Status.NodeInfo,
			Addresses:   nodeAddresses(twin.Name),
		},
	}
	for i := range n.Spec.Taints {
		n.Spec.Taints[i].TimeAdded = nil
	}
	return n
}

// nodeAddresses are an EC2 node's: the private IP its DNS name spells
// (ip-10-0-20-191.us-west-2.compute.internal; fargate-ip-… for Fargate),
// the DNS name and the hostname.
func nodeAddresses(name string) []corev1.NodeAddress {
	var out []corev1.NodeAddress
	host, _, _ := strings.Cut(strings.TrimPrefix(name, "fargate-"), ".")
	if rest, ok := strings.CutPrefix(host, "ip-"); ok {
		if ip := net.ParseIP(strings.ReplaceAll(rest, "-", ".")); ip != nil && ip.To4() != nil {
			out = append(out, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip.String()})
		}
	}
	return append(out,
		corev1.NodeAddress{Type: corev1.NodeInternalDNS, Address: name},
		corev1.NodeAddress{Type: corev1.NodeHostName, Address: name})
}

// ebsVolume is the PersistentVolume the EBS CSI driver would have
// provisioned for a claim the twin bound: in the claim's zone (the node
// affinity kube-scheduler's VolumeBinding filter honours), pre-bound to the
// claim by claimRef so the PV controller binds the pair at once, even for a
// WaitForFirstConsumer class.
func ebsVolume(v twinbuild.SnapshotVolume, reclaim corev1.PersistentVolumeReclaimPolicy) *corev1.PersistentVolume {
	c := v.Claim
	if reclaim == "" {
		reclaim = corev1.PersistentVolumeReclaimDelete
	}
	storage := c.Spec.Resources.Requests[corev1.ResourceStorage]
	if storage.IsZero() {
		storage = resource.MustParse("1Gi")
	}
	sum := sha256.Sum256([]byte(c.Spec.VolumeName))
	pv := &corev1.PersistentVolume{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        c.Spec.VolumeName,
			Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": EBSDriver},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: storage},
			AccessModes:                   c.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: reclaim,
			VolumeMode:                    c.Spec.VolumeMode,
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver:       EBSDriver,
				VolumeHandle: "vol-" + hex.EncodeToString(sum[:])[:17],
				FSType:       "ext4",
			}},
			ClaimRef: &corev1.ObjectReference{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: c.Namespace, Name: c.Name},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{v.Zone}}},
			}}}},
		},
	}
	if len(pv.Spec.AccessModes) == 0 {
		pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	}
	if c.Spec.StorageClassName != nil {
		pv.Spec.StorageClassName = *c.Spec.StorageClassName
	}
	return pv
}

// templateClaim is a claim a StatefulSet's volumeClaimTemplates made in the
// twin, created in the lab before the StatefulSet (which adopts a claim of
// the name it would give one) so that it is bound to its volume's zone.
func templateClaim(c *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{
			Name: c.Name, Namespace: c.Namespace,
			Labels: c.Labels, Annotations: c.Annotations,
		},
		Spec: *c.Spec.DeepCopy(),
	}
}

// awsLabelPrefix is the AWS provider's well-known labels' domain.
const awsLabelPrefix = "karpenter.k8s.aws/"

// nodeClaim is the NodeClaim Karpenter keeps for a node it launched: the
// spec it created from the NodePool, and the status it filled in as the
// instance launched, registered and initialized.
func nodeClaim(c twinbuild.SnapshotNodeClaim, node *corev1.Node) (*unstructured.Unstructured, error) {
	labels := map[string]string{}
	for _, k := range []string{karpv1.NodePoolLabelKey, karpv1.CapacityTypeLabelKey, corev1.LabelInstanceTypeStable,
		corev1.LabelTopologyZone, corev1.LabelTopologyRegion, corev1.LabelArchStable, corev1.LabelOSStable,
		"karpenter.k8s.aws/ec2nodeclass"} {
		if v, ok := node.Labels[k]; ok {
			labels[k] = v
		}
	}
	// Karpenter labels a NodeClaim it launches with its instance type's
	// single-valued requirements (karpenter.k8s.aws/instance-category,
	// -size, -family, ...), which the node inherits. Without them the
	// real Karpenter finds the NodePool's requirements on those keys
	// unmet and drifts the node the moment it starts (RequirementsDrifted).
	for k, v := range node.Labels {
		if strings.HasPrefix(k, awsLabelPrefix) {
			labels[k] = v
		}
	}
	expire := "720h" // the NodePool default
	if c.ExpireAfter != nil {
		expire = c.ExpireAfter.String()
	}
	nc := &karpv1.NodeClaim{
		TypeMeta: metav1.TypeMeta{APIVersion: "karpenter.sh/v1", Kind: "NodeClaim"},
		ObjectMeta: metav1.ObjectMeta{
			Name:       c.Name,
			Labels:     labels,
			Finalizers: []string{karpv1.TerminationFinalizer},
		},
		Spec: karpv1.NodeClaimSpec{
			NodeClassRef: &karpv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: c.NodeClass},
			Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
				{Key: karpv1.NodePoolLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{c.NodePool}},
				{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{c.InstanceType}},
				{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{c.Zone}},
				{Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{c.CapacityType}},
			},
			Taints: append([]corev1.Taint(nil), node.Spec.Taints...),
		},
		Status: karpv1.NodeClaimStatus{
			NodeName:    c.Node,
			ProviderID:  c.ProviderID,
			ImageID:     c.ImageID,
			Capacity:    node.Status.Capacity.DeepCopy(),
			Allocatable: node.Status.Allocatable.DeepCopy(),
		},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(nc)
	if err != nil {
		return nil, fmt.Errorf("NodeClaim %s: %v", c.Name, err)
	}
	u := &unstructured.Unstructured{Object: obj}
	// A zero metav1.Time converts to null (omitempty does not apply to a
	// struct): metadata.creationTimestamp, and status.lastPodEventTime,
	// which Karpenter sets when a pod binds to the node or leaves it. The
	// CRD's schema does not allow null there, so the API server refuses
	// the object; no Karpenter runs in the lab to need the field, so the
	// claim goes without it rather than with an invented time.
	dropNulls(u.Object)
	// Set as a string: NillableDuration converts to its raw JSON bytes.
	if err := unstructured.SetNestedField(u.Object, expire, "spec", "expireAfter"); err != nil {
		return nil, fmt.Errorf("NodeClaim %s: %v", c.Name, err)
	}
	// The conditions Karpenter's lifecycle controller sets, in the shape of
	// operatorpkg's status.Condition (metav1.Condition's fields).
	at := c.Created.UTC().Format(time.RFC3339)
	var conds []any
	for _, t := range []string{karpv1.ConditionTypeLaunched, karpv1.ConditionTypeRegistered, karpv1.ConditionTypeInitialized, "Ready"} {
		conds = append(conds, map[string]any{"type": t, "status": "True", "reason": t, "message": "", "lastTransitionTime": at})
	}
	if err := unstructured.SetNestedSlice(u.Object, conds, "status", "conditions"); err != nil {
		return nil, fmt.Errorf("NodeClaim %s: %v", c.Name, err)
	}
	return u, nil
}

// describeNode is "initial/ip-10-0-15-11… (managed)" for progress lines.
func describeNode(name string, g twinbuild.GroupRef) string {
	if g.Name == "" {
		return name
	}
	return fmt.Sprintf("%s (%s %s)", name, g.Type, g.Name)
}

// dropNulls removes every null field of an object converted from a Go
// type, at any depth: a structural schema rejects null where it does not
// say nullable, and leaving a field out means "not set" as well.
func dropNulls(m map[string]any) {
	for k, v := range m {
		switch v := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			dropNulls(v)
		case []any:
			for _, e := range v {
				if em, ok := e.(map[string]any); ok {
					dropNulls(em)
				}
			}
		}
	}
}
