package nodeclass

import (
	"strconv"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/ladder-eks/ladder/internal/catalog"
)

// InstanceTypeRequirements are the labels an instance type offers, as the
// AWS provider computes them, with every offering's zone and capacity type.
func InstanceTypeRequirements(it catalog.InstanceType, zones []string) scheduling.Requirements {
	return scheduling.NewRequirements(
		scheduling.NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, it.Name),
		scheduling.NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, it.Arch),
		scheduling.NewRequirement(corev1.LabelOSStable, corev1.NodeSelectorOpIn, "linux"),
		scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zones...),
		scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, karpv1.CapacityTypeSpot, karpv1.CapacityTypeOnDemand),
		scheduling.NewRequirement(awsv1.LabelInstanceCategory, corev1.NodeSelectorOpIn, it.Category),
		scheduling.NewRequirement(awsv1.LabelInstanceFamily, corev1.NodeSelectorOpIn, it.Family),
		scheduling.NewRequirement(awsv1.LabelInstanceGeneration, corev1.NodeSelectorOpIn, strconv.Itoa(it.Generation)),
		scheduling.NewRequirement(awsv1.LabelInstanceSize, corev1.NodeSelectorOpIn, it.Size),
		scheduling.NewRequirement(awsv1.LabelInstanceCPU, corev1.NodeSelectorOpIn, strconv.Itoa(it.VCPU)),
		scheduling.NewRequirement(awsv1.LabelInstanceMemory, corev1.NodeSelectorOpIn, strconv.FormatInt(it.MemoryMiB, 10)),
	)
}

// InstanceLabels are the labels a node of this type carries.
func InstanceLabels(it catalog.InstanceType) map[string]string {
	return map[string]string{
		corev1.LabelInstanceTypeStable: it.Name,
		corev1.LabelArchStable:         it.Arch,
		corev1.LabelOSStable:           "linux",
		awsv1.LabelInstanceCategory:    it.Category,
		awsv1.LabelInstanceFamily:      it.Family,
		awsv1.LabelInstanceGeneration:  strconv.Itoa(it.Generation),
		awsv1.LabelInstanceSize:        it.Size,
		awsv1.LabelInstanceCPU:         strconv.Itoa(it.VCPU),
		awsv1.LabelInstanceMemory:      strconv.FormatInt(it.MemoryMiB, 10),
	}
}
