package catalog

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestEmbeddedInstanceTypes parses every row of the embedded file (a malformed
// row fails here) and checks the catalogue-wide invariants.
func TestEmbeddedInstanceTypes(t *testing.T) {
	its, err := parseInstanceTypes(instanceTypesCSV)
	if err != nil {
		t.Fatalf("instancetypes.csv: %v", err)
	}
	if len(its) < 40 || len(its) > 60 {
		t.Errorf("instance types = %d, want 40 to 60", len(its))
	}
	if !slices.IsSortedFunc(its, func(a, b InstanceType) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("instance types are not sorted by name")
	}
	for _, it := range its {
		if it.Arch != "amd64" && it.Arch != "arm64" {
			t.Errorf("%s: arch %q", it.Name, it.Arch)
		}
		if it.VCPU <= 0 || it.MemoryMiB <= 0 || it.MaxPods <= 0 {
			t.Errorf("%s: non-positive vcpu/memory/max pods: %+v", it.Name, it)
		}
		if !(0 < it.SpotPrice && it.SpotPrice < it.OnDemandPrice) {
			t.Errorf("%s: want 0 < spot %v < on-demand %v", it.Name, it.SpotPrice, it.OnDemandPrice)
		}
		// Plausibility: on-demand between $0.005 and $0.10 per vCPU-hour;
		// spot between 15% and 60% of on-demand.
		if perCPU := it.OnDemandPrice / float64(it.VCPU); perCPU < 0.005 || perCPU > 0.10 {
			t.Errorf("%s: on-demand $%v per vCPU-hour is implausible", it.Name, perCPU)
		}
		if ratio := it.SpotPrice / it.OnDemandPrice; ratio < 0.15 || ratio > 0.60 {
			t.Errorf("%s: spot/on-demand ratio %.2f is implausible", it.Name, ratio)
		}
		got, ok := LookupInstanceType(it.Name)
		if !ok || got != it {
			t.Errorf("LookupInstanceType(%q) = %+v, %v; want %+v", it.Name, got, ok, it)
		}
	}
	if got := InstanceTypes(); !slices.Equal(got, its) {
		t.Errorf("InstanceTypes() differs from a fresh parse")
	}
}

func TestInstanceTypeFacts(t *testing.T) {
	tests := []struct {
		name                         string
		arch, category, family, size string
		generation, vcpu, maxPods    int
		memoryMiB                    int64
		onDemand                     float64
	}{
		{"t3.medium", "amd64", "t", "t3", "medium", 3, 2, 17, 4096, 0.0416},
		{"t3.large", "amd64", "t", "t3", "large", 3, 2, 35, 8192, 0.0832},
		{"m5.large", "amd64", "m", "m5", "large", 5, 2, 29, 8192, 0.096},
		{"m5.xlarge", "amd64", "m", "m5", "xlarge", 5, 4, 58, 16384, 0.192},
		{"m5.2xlarge", "amd64", "m", "m5", "2xlarge", 5, 8, 58, 32768, 0.384},
		{"m5.4xlarge", "amd64", "m", "m5", "4xlarge", 5, 16, 234, 65536, 0.768},
		{"m5a.large", "amd64", "m", "m5a", "large", 5, 2, 29, 8192, 0.086},
		{"m6i.large", "amd64", "m", "m6i", "large", 6, 2, 29, 8192, 0.096},
		{"m6a.large", "amd64", "m", "m6a", "large", 6, 2, 29, 8192, 0.0864},
		{"m6g.large", "arm64", "m", "m6g", "large", 6, 2, 29, 8192, 0.077},
		{"m7g.large", "arm64", "m", "m7g", "large", 7, 2, 29, 8192, 0.0816},
		{"c4.large", "amd64", "c", "c4", "large", 4, 2, 29, 3840, 0.10},
		{"c5.large", "amd64", "c", "c5", "large", 5, 2, 29, 4096, 0.085},
		{"c6g.large", "arm64", "c", "c6g", "large", 6, 2, 29, 4096, 0.068},
		{"r4.large", "amd64", "r", "r4", "large", 4, 2, 29, 15616, 0.133},
		{"r5.large", "amd64", "r", "r5", "large", 5, 2, 29, 16384, 0.126},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it, ok := LookupInstanceType(tt.name)
			if !ok {
				t.Fatalf("LookupInstanceType(%q) not found", tt.name)
			}
			want := InstanceType{
				Name: tt.name, Arch: tt.arch, Category: tt.category, Family: tt.family, Size: tt.size,
				Generation: tt.generation, VCPU: tt.vcpu, MaxPods: tt.maxPods, MemoryMiB: tt.memoryMiB,
				OnDemandPrice: tt.onDemand, SpotPrice: it.SpotPrice,
			}
			if it != want {
				t.Errorf("got  %+v\nwant %+v", it, want)
			}
		})
	}
	if _, ok := LookupInstanceType("m5.huge"); ok {
		t.Errorf("LookupInstanceType(m5.huge) found a type")
	}
}

// The numbers below were cross-checked against karpenter-provider-aws v1.14.1
// instancetype.NewInstanceType (AL2023, default options) for every type.
func TestCapacityAndAllocatable(t *testing.T) {
	tests := []struct {
		name                         string
		capCPU, capMemory, capPods   string
		allocCPU, allocMemory        string
		capEphemeral, allocEphemeral string
	}{
		// m5.large: 8192Mi - ceil(8192 x 0.075 = 614.4) = 7577Mi; kube-reserved 11 x 29 + 255 = 574Mi;
		// allocatable 7577 - 574 - 100 = 6903Mi; cpu 2000m - (60 + 10) = 1930m.
		{"m5.large", "2", "7577Mi", "29", "1930m", "6903Mi", "20Gi", "17Gi"},
		// c4.large: 3840Mi - 288 = 3552Mi; 3552 - 574 - 100 = 2878Mi.
		{"c4.large", "2", "3552Mi", "29", "1930m", "2878Mi", "20Gi", "17Gi"},
		// t3.medium: 4096 - ceil(307.2) = 3788Mi; 3788 - (11 x 17 + 255 = 442) - 100 = 3246Mi.
		{"t3.medium", "2", "3788Mi", "17", "1930m", "3246Mi", "20Gi", "17Gi"},
		// m6g.large (Graviton): 8192 - 64 = 8128; 8128 - ceil(609.6) = 7518Mi; 7518 - 574 - 100 = 6844Mi.
		{"m6g.large", "2", "7518Mi", "29", "1930m", "6844Mi", "20Gi", "17Gi"},
		// c5.xlarge: 8192 - 615 = 7577Mi; 7577 - (11 x 58 + 255 = 893) - 100 = 6584Mi; cpu 4000 - 80 = 3920m.
		{"c5.xlarge", "4", "7577Mi", "58", "3920m", "6584Mi", "20Gi", "17Gi"},
		// m5.2xlarge: 32768 - ceil(2457.6) = 30310Mi; 30310 - 893 - 100 = 29317Mi; cpu 8000 - 90 = 7910m.
		{"m5.2xlarge", "8", "30310Mi", "58", "7910m", "29317Mi", "20Gi", "17Gi"},
		// m5.4xlarge: 65536 - ceil(4915.2) = 60620Mi; 60620 - (11 x 234 + 255 = 2829) - 100 = 57691Mi; cpu 16000 - 110 = 15890m.
		{"m5.4xlarge", "16", "60620Mi", "234", "15890m", "57691Mi", "20Gi", "17Gi"},
		// r4.large: 15616 - ceil(1171.2) = 14444Mi; 14444 - 574 - 100 = 13770Mi.
		{"r4.large", "2", "14444Mi", "29", "1930m", "13770Mi", "20Gi", "17Gi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it, ok := LookupInstanceType(tt.name)
			if !ok {
				t.Fatalf("LookupInstanceType(%q) not found", tt.name)
			}
			check := func(what string, list corev1.ResourceList, name corev1.ResourceName, want string) {
				t.Helper()
				got, ok := list[name]
				if !ok {
					t.Errorf("%s has no %s", what, name)
					return
				}
				if w := resource.MustParse(want); got.Cmp(w) != 0 || got.String() != want {
					t.Errorf("%s %s = %s, want %s", what, name, got.String(), want)
				}
			}
			c, a := it.Capacity(), it.Allocatable()
			check("capacity", c, corev1.ResourceCPU, tt.capCPU)
			check("capacity", c, corev1.ResourceMemory, tt.capMemory)
			check("capacity", c, corev1.ResourcePods, tt.capPods)
			check("capacity", c, corev1.ResourceEphemeralStorage, tt.capEphemeral)
			check("allocatable", a, corev1.ResourceCPU, tt.allocCPU)
			check("allocatable", a, corev1.ResourceMemory, tt.allocMemory)
			check("allocatable", a, corev1.ResourcePods, tt.capPods)
			check("allocatable", a, corev1.ResourceEphemeralStorage, tt.allocEphemeral)
			if len(c) != 4 || len(a) != 4 {
				t.Errorf("want exactly cpu, memory, pods, ephemeral-storage; got capacity %v, allocatable %v", c, a)
			}
		})
	}
}

func TestKubeReservedCPU(t *testing.T) {
	tests := []struct {
		name     string
		vcpu     int64
		reserved int64
	}{
		{"1 vCPU: 6% of 1000m", 1, 60},
		{"2 vCPU: 60 + 1% of 1000m", 2, 70},
		{"3 vCPU: 70 + 0.5% of 1000m", 3, 75},
		{"4 vCPU: 70 + 0.5% of 2000m", 4, 80},
		{"8 vCPU: 80 + 0.25% of 4000m", 8, 90},
		{"16 vCPU: 80 + 0.25% of 12000m", 16, 110},
		{"96 vCPU: 80 + 0.25% of 92000m", 96, 310},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := kubeReservedCPUMilli(tt.vcpu * 1000); got != tt.reserved {
				t.Errorf("kubeReservedCPUMilli(%d) = %dm, want %dm", tt.vcpu*1000, got, tt.reserved)
			}
		})
	}
}

// The seed's Karpenter NodePool may pick any 2-vCPU c/m/r type and launches
// c4.large on spot, so c4.large must be the strictly cheapest such type. The
// next four mirror the order of the seed log's "replacing with node from
// types c5.large, c4.large, m6a.large, r4.large, m5.large" (a single spot price
// per type cannot also put c5.large first).
func TestSeedSpotOrdering(t *testing.T) {
	var cands []InstanceType
	for _, it := range InstanceTypes() {
		if it.Arch == "amd64" && it.VCPU == 2 && strings.Contains("cmr", it.Category) && len(it.Category) == 1 {
			cands = append(cands, it)
		}
	}
	if len(cands) < 10 {
		t.Fatalf("only %d amd64 2-vCPU c/m/r types", len(cands))
	}
	slices.SortFunc(cands, func(a, b InstanceType) int {
		switch {
		case a.SpotPrice < b.SpotPrice:
			return -1
		case a.SpotPrice > b.SpotPrice:
			return 1
		}
		return 0
	})
	if cands[0].Name != "c4.large" || !(cands[0].SpotPrice < cands[1].SpotPrice) {
		t.Errorf("cheapest 2-vCPU amd64 c/m/r spot type = %s ($%v), next %s ($%v); want c4.large strictly cheapest",
			cands[0].Name, cands[0].SpotPrice, cands[1].Name, cands[1].SpotPrice)
	}
	var first5 []string
	for _, it := range cands[:5] {
		first5 = append(first5, it.Name)
	}
	if want := []string{"c4.large", "c5.large", "m6a.large", "r4.large", "m5.large"}; !slices.Equal(first5, want) {
		t.Errorf("five cheapest = %v, want %v", first5, want)
	}
	// Graviton 2-vCPU c/m/r types are not cheaper either.
	c4, _ := LookupInstanceType("c4.large")
	for _, it := range InstanceTypes() {
		if it.Name != "c4.large" && it.VCPU == 2 && len(it.Category) == 1 && strings.Contains("cmr", it.Category) && it.SpotPrice <= c4.SpotPrice {
			t.Errorf("%s spot $%v is not above c4.large's $%v", it.Name, it.SpotPrice, c4.SpotPrice)
		}
	}
}

func TestPrice(t *testing.T) {
	m5, _ := LookupInstanceType("m5.large")
	tests := []struct {
		name, capacityType string
		want               float64
	}{
		{"on-demand", CapacityTypeOnDemand, 0.096},
		{"spot", CapacityTypeSpot, m5.SpotPrice},
		{"reserved is not modelled", "reserved", 0},
		{"empty", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m5.Price(tt.capacityType); got != tt.want {
				t.Errorf("Price(%q) = %v, want %v", tt.capacityType, got, tt.want)
			}
		})
	}
}

func TestInstanceTypesReturnsCopy(t *testing.T) {
	its := InstanceTypes()
	name := its[0].Name
	its[0].Name = "mutated"
	its[0].SpotPrice = 99
	if got := InstanceTypes()[0]; got.Name != name || got.SpotPrice == 99 {
		t.Errorf("mutating the returned slice changed the catalog: %+v", got)
	}
}

func TestParseInstanceTypesRejectsMalformedRows(t *testing.T) {
	const header = "name,arch,category,family,generation,size,vcpu,memory_mib,max_pods,ondemand_usd_hour,spot_usd_hour\n"
	const good = "m5.large,amd64,m,m5,5,large,2,8192,29,0.096,0.03\n"
	tests := []struct {
		name, data, wantErr string
	}{
		{"bad header", "name,arch\n" + good, "header"},
		{"no rows", header, "no data rows"},
		{"missing field", header + "m5.large,amd64,m,m5,5,large,2,8192,29,0.096\n", "wrong number of fields"},
		{"duplicate", header + good + good, "duplicate instance type"},
		{"bad arch", header + "m5.large,x86_64,m,m5,5,large,2,8192,29,0.096,0.03\n", "arch"},
		{"category disagrees with name", header + "m5.large,amd64,c,m5,5,large,2,8192,29,0.096,0.03\n", "category"},
		{"generation disagrees with name", header + "m5.large,amd64,m,m5,6,large,2,8192,29,0.096,0.03\n", "generation"},
		{"size disagrees with name", header + "m5.large,amd64,m,m5,5,xlarge,2,8192,29,0.096,0.03\n", "family"},
		{"zero vcpu", header + "m5.large,amd64,m,m5,5,large,0,8192,29,0.096,0.03\n", "positive"},
		{"non-numeric memory", header + "m5.large,amd64,m,m5,5,large,2,8GiB,29,0.096,0.03\n", "memory_mib"},
		{"zero price", header + "m5.large,amd64,m,m5,5,large,2,8192,29,0,0.03\n", "positive"},
		{"spot not below on-demand", header + "m5.large,amd64,m,m5,5,large,2,8192,29,0.096,0.096\n", "below the on-demand"},
		{"empty field", header + "m5.large,amd64,m,m5,5,large,2,8192,,0.096,0.03\n", "max_pods is empty"},
		{"bad name", header + "M5-large,amd64,m,m5,5,large,2,8192,29,0.096,0.03\n", "not an EC2 instance type name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseInstanceTypes([]byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseInstanceTypes() error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
	if _, err := parseInstanceTypes([]byte("# a comment\n" + header + good)); err != nil {
		t.Errorf("a good file with a comment line: %v", err)
	}
}
