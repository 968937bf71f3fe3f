package catalog

import (
	_ "embed"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

//go:embed instancetypes.csv
var instanceTypesCSV []byte

// Capacity types accepted by [InstanceType.Price]; they are the values of the
// karpenter.sh/capacity-type label.
const (
	CapacityTypeSpot     = "spot"
	CapacityTypeOnDemand = "on-demand"
)

// Node-overhead constants of karpenter-provider-aws v1.14.1
// (pkg/providers/instancetype/types.go, pkg/operator/options) with default
// settings and an EKS-optimized AMI family (AL2, AL2023 or Bottlerocket).
const (
	// vmMemoryOverheadPercent is the --vm-memory-overhead-percent default.
	vmMemoryOverheadPercent float64 = 0.075
	// gravitonCMAReservedMiB is the CMA memory arm64 (Graviton) kernels reserve.
	gravitonCMAReservedMiB = 64
	// kubeReservedMemoryPerPodMiB and kubeReservedMemoryBaseMiB give
	// kube-reserved memory = 11Mi x max pods + 255Mi.
	kubeReservedMemoryPerPodMiB = 11
	kubeReservedMemoryBaseMiB   = 255
	// evictionHardMemoryMiB is the default memory.available hard eviction threshold.
	evictionHardMemoryMiB = 100
	// rootVolumeBytes is the default 20Gi EBS volume Karpenter reports as ephemeral-storage.
	rootVolumeBytes int64 = 20 << 30
	// kubeReservedEphemeralBytes is the default 1Gi kube-reserved ephemeral-storage.
	kubeReservedEphemeralBytes int64 = 1 << 30
	// evictionHardNodeFSPercent is the default nodefs.available hard eviction threshold (10%).
	evictionHardNodeFSPercent = 10
)

// InstanceType is one EC2 instance type with the facts the twin needs.
// Values are copies; changing one does not change the catalog.
type InstanceType struct {
	// Name is the EC2 instance type, e.g. "m5.large".
	Name string
	// Arch is the Kubernetes architecture: "amd64" or "arm64".
	Arch string
	// Category is the karpenter.k8s.aws/instance-category label, e.g. "m".
	Category string
	// Family is the karpenter.k8s.aws/instance-family label, e.g. "m5a".
	Family string
	// Size is the karpenter.k8s.aws/instance-size label, e.g. "xlarge".
	Size string
	// Generation is the karpenter.k8s.aws/instance-generation label, e.g. 5.
	Generation int
	// VCPU is the default vCPU count.
	VCPU int
	// MaxPods is the EKS ENI-based max pods (eni-max-pods.txt).
	MaxPods int
	// MemoryMiB is the EC2 memory size in MiB (before any overhead).
	MemoryMiB int64
	// OnDemandPrice is the us-west-2 Linux on-demand price in USD per hour.
	OnDemandPrice float64
	// SpotPrice is a dated estimate of a typical us-west-2 spot price in USD per hour.
	SpotPrice float64
}

var (
	instanceTypesOnce sync.Once
	instanceTypeList  []InstanceType
	instanceTypeIndex map[string]int
)

func loadInstanceTypes() {
	instanceTypesOnce.Do(func() {
		its, err := parseInstanceTypes(instanceTypesCSV)
		if err != nil {
			panic("catalog: embedded " + err.Error())
		}
		instanceTypeList = its
		instanceTypeIndex = make(map[string]int, len(its))
		for i, it := range its {
			instanceTypeIndex[it.Name] = i
		}
	})
}

// InstanceTypes returns every catalogued instance type, sorted by name. The
// slice is a fresh copy.
func InstanceTypes() []InstanceType {
	loadInstanceTypes()
	return slices.Clone(instanceTypeList)
}

// LookupInstanceType returns the named instance type ("m5.large").
func LookupInstanceType(name string) (InstanceType, bool) {
	loadInstanceTypes()
	i, ok := instanceTypeIndex[name]
	if !ok {
		return InstanceType{}, false
	}
	return instanceTypeList[i], true
}

// Price returns the hourly USD price for a capacity type: [CapacityTypeSpot]
// or [CapacityTypeOnDemand]. It returns 0 for any other capacity type.
func (t InstanceType) Price(capacityType string) float64 {
	switch capacityType {
	case CapacityTypeSpot:
		return t.SpotPrice
	case CapacityTypeOnDemand:
		return t.OnDemandPrice
	default:
		return 0
	}
}

// Capacity returns the node capacity Karpenter predicts for this type on an
// EKS-optimized AMI with default settings: cpu = vCPUs; memory = MemoryMiB
// (less 64Mi on arm64) minus the VM overhead ceil(7.5%) in MiB; pods =
// MaxPods; ephemeral-storage = the default 20Gi root volume. It follows
// karpenter-provider-aws v1.14.1 pkg/providers/instancetype/types.go
// (computeCapacity, memory, pods).
func (t InstanceType) Capacity() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(t.VCPU), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(t.capacityMemoryMiB()<<20, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(int64(t.MaxPods), resource.DecimalSI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(rootVolumeBytes, resource.BinarySI),
	}
}

// Allocatable returns Capacity minus kube-reserved, system-reserved (none by
// default) and the hard eviction thresholds, as Karpenter computes it:
//
//   - cpu: kube-reserved is 6% of the first core, 1% of the second, 0.5% of
//     cores 3-4 and 0.25% of the rest, each band truncated to millicores;
//   - memory: kube-reserved 11Mi x max pods + 255Mi, eviction 100Mi;
//   - ephemeral-storage: kube-reserved 1Gi, eviction 10% of the volume;
//   - pods: unchanged.
func (t InstanceType) Allocatable() corev1.ResourceList {
	cpuMilli := int64(t.VCPU)*1000 - kubeReservedCPUMilli(int64(t.VCPU)*1000)
	memMiB := t.capacityMemoryMiB() - (kubeReservedMemoryPerPodMiB*int64(t.MaxPods) + kubeReservedMemoryBaseMiB) - evictionHardMemoryMiB
	ephemeral := rootVolumeBytes - kubeReservedEphemeralBytes - int64(math.Ceil(float64(rootVolumeBytes)/100*evictionHardNodeFSPercent))
	return corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(cpuMilli, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(memMiB<<20, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(int64(t.MaxPods), resource.DecimalSI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(ephemeral, resource.BinarySI),
	}
}

// capacityMemoryMiB mirrors memory() in karpenter-provider-aws: the Graviton
// CMA reservation first, then ceil(bytes x percent / 1024 / 1024) MiB of VM
// overhead, with the floating-point operations in the same order.
func (t InstanceType) capacityMemoryMiB() int64 {
	mib := t.MemoryMiB
	if t.Arch == "arm64" {
		mib -= gravitonCMAReservedMiB
	}
	overhead := int64(math.Ceil(float64(mib<<20) * vmMemoryOverheadPercent / 1024 / 1024))
	return mib - overhead
}

// kubeReservedCPUMilli mirrors kubeReservedResources() in
// karpenter-provider-aws: per band, int64(range x percentage) millicores.
func kubeReservedCPUMilli(cpuMilli int64) int64 {
	var reserved int64
	for _, band := range []struct {
		start, end int64
		percentage float64
	}{
		{start: 0, end: 1000, percentage: 0.06},
		{start: 1000, end: 2000, percentage: 0.01},
		{start: 2000, end: 4000, percentage: 0.005},
		{start: 4000, end: 1 << 31, percentage: 0.0025},
	} {
		if cpuMilli >= band.start {
			r := float64(band.end - band.start)
			if cpuMilli < band.end {
				r = float64(cpuMilli - band.start)
			}
			reserved += int64(r * band.percentage)
		}
	}
	return reserved
}

var (
	instanceTypeNamePattern = regexp.MustCompile(`^([a-z]+)([0-9]+)[a-z0-9-]*\.([a-z0-9]+)$`)
	instanceTypesHeader     = []string{"name", "arch", "category", "family", "generation", "size", "vcpu", "memory_mib", "max_pods", "ondemand_usd_hour", "spot_usd_hour"}
)

// parseInstanceTypes parses instancetypes.csv and checks each row against its
// name (category, family, generation and size must agree with it).
func parseInstanceTypes(data []byte) ([]InstanceType, error) {
	recs, err := readCSV("instancetypes.csv", data, instanceTypesHeader)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []InstanceType
	for _, r := range recs {
		var it InstanceType
		var gen, vcpu, maxPods int64
		var errs []error
		get := func(dst *string, name string) {
			v, err := r.str(name)
			*dst = v
			errs = append(errs, err)
		}
		get(&it.Name, "name")
		get(&it.Arch, "arch")
		get(&it.Category, "category")
		get(&it.Family, "family")
		get(&it.Size, "size")
		gen, err = r.integer("generation")
		errs = append(errs, err)
		vcpu, err = r.integer("vcpu")
		errs = append(errs, err)
		it.MemoryMiB, err = r.integer("memory_mib")
		errs = append(errs, err)
		maxPods, err = r.integer("max_pods")
		errs = append(errs, err)
		it.OnDemandPrice, err = r.float("ondemand_usd_hour")
		errs = append(errs, err)
		it.SpotPrice, err = r.float("spot_usd_hour")
		errs = append(errs, err)
		for _, e := range errs {
			if e != nil {
				return nil, e
			}
		}
		it.Generation, it.VCPU, it.MaxPods = int(gen), int(vcpu), int(maxPods)

		m := instanceTypeNamePattern.FindStringSubmatch(it.Name)
		switch {
		case m == nil:
			return nil, r.errorf("name %q is not an EC2 instance type name", it.Name)
		case seen[it.Name]:
			return nil, r.errorf("duplicate instance type %q", it.Name)
		case it.Arch != "amd64" && it.Arch != "arm64":
			return nil, r.errorf("%s: arch %q must be amd64 or arm64", it.Name, it.Arch)
		case it.Category != m[1]:
			return nil, r.errorf("%s: category %q, want %q", it.Name, it.Category, m[1])
		case fmt.Sprint(it.Generation) != m[2]:
			return nil, r.errorf("%s: generation %d, want %s", it.Name, it.Generation, m[2])
		case it.Family+"."+it.Size != it.Name:
			return nil, r.errorf("%s: family %q and size %q do not make up the name", it.Name, it.Family, it.Size)
		case !strings.HasPrefix(it.Family, m[1]+m[2]):
			return nil, r.errorf("%s: family %q does not start with %s%s", it.Name, it.Family, m[1], m[2])
		case it.VCPU <= 0 || it.MemoryMiB <= 0 || it.MaxPods <= 0:
			return nil, r.errorf("%s: vcpu, memory_mib and max_pods must be positive", it.Name)
		case it.OnDemandPrice <= 0 || it.SpotPrice <= 0:
			return nil, r.errorf("%s: prices must be positive", it.Name)
		case it.SpotPrice >= it.OnDemandPrice:
			return nil, r.errorf("%s: spot price %v must be below the on-demand price %v", it.Name, it.SpotPrice, it.OnDemandPrice)
		}
		seen[it.Name] = true
		out = append(out, it)
	}
	slices.SortFunc(out, func(a, b InstanceType) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
