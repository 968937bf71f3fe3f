package labkarpenter

import (
	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/rules/nodeclass"
)

// InstanceTypes are the embedded catalog's instance types as the AWS
// provider's GetInstanceTypes returns them (aws-apis.md §6.1): every type,
// with the labels it offers (nodeclass.InstanceTypeRequirements, the
// twin's too, plus the region), an available spot and on-demand offering
// in each zone at the catalog's prices, the capacity Karpenter predicts,
// and the difference between capacity and allocatable as kube-reserved
// overhead, so that Karpenter's Allocatable() is the catalog's.
func InstanceTypes(region string, zones []string) []*cloudprovider.InstanceType {
	var out []*cloudprovider.InstanceType
	for _, it := range catalog.InstanceTypes() {
		reqs := nodeclass.InstanceTypeRequirements(it, zones)
		reqs.Add(scheduling.NewRequirement(corev1.LabelTopologyRegion, corev1.NodeSelectorOpIn, region))
		var offerings cloudprovider.Offerings
		for _, zone := range zones {
			for _, ct := range []string{karpv1.CapacityTypeSpot, karpv1.CapacityTypeOnDemand} {
				offerings = append(offerings, &cloudprovider.Offering{
					Requirements: scheduling.NewRequirements(
						scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zone),
						scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, ct),
					),
					Price:     it.Price(ct),
					Available: true,
				})
			}
		}
		capacity := it.Capacity()
		out = append(out, &cloudprovider.InstanceType{
			Name:         it.Name,
			Requirements: reqs,
			Offerings:    offerings,
			Capacity:     capacity,
			Overhead:     &cloudprovider.InstanceTypeOverhead{KubeReserved: reserved(capacity, it.Allocatable())},
		})
	}
	return out
}

// reserved is capacity minus allocatable, resource by resource.
func reserved(capacity, allocatable corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, c := range capacity {
		r := c.DeepCopy()
		if a, ok := allocatable[name]; ok {
			r.Sub(a)
		}
		out[name] = r
	}
	return out
}
