package karpenter_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/twin/karpenter"
)

// TestProvisioningCheapestFittingInstanceType: a pending pod that fits no
// node gets, after the batch window, one NodeClaim launched as the cheapest
// offering the NodePool's requirements allow (the provisioner, and the
// seed's log "launched nodeclaim ... c4.large ... spot"; the AWS provider
// only launches instance types that have an AMI, amifamily
// MapToInstanceTypes, semantics.md §A.3 AMIDrift).
func TestProvisioningCheapestFittingInstanceType(t *testing.T) {
	cases := []struct {
		name     string
		reqs     []karpv1.NodeSelectorRequirementWithMinValues
		class    *awsv1.EC2NodeClass
		cpu      string
		wantType string
		wantCap  string
	}{
		{
			// c4.large spot $0.0262/h is the cheapest large c/m/r on spot
			// (next: c6g.large $0.0278, c5.large $0.0301).
			name:     "spot, category c/m/r, size large: c4.large",
			reqs:     nodePool().Spec.Template.Spec.Requirements,
			class:    nodeClass(amiID(ami130)),
			cpu:      "500m",
			wantType: "c4.large", wantCap: "spot",
		},
		{
			// c6g.large $0.068/h is cheaper, but arm64: the x86_64 AMI
			// leaves c6a.large $0.0765/h as the cheapest launchable type.
			name: "on-demand, category c/m/r, size large, x86_64-only AMI: c6a.large",
			reqs: []karpv1.NodeSelectorRequirementWithMinValues{
				req(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "on-demand"),
				req(awsv1.LabelInstanceCategory, corev1.NodeSelectorOpIn, "c", "m", "r"),
				req(awsv1.LabelInstanceSize, corev1.NodeSelectorOpIn, "large"),
			},
			class:    nodeClass(amiID(ami130)),
			cpu:      "500m",
			wantType: "c6a.large", wantCap: "on-demand",
		},
		{
			// With an alias both architectures have an AMI: c6g.large
			// on-demand $0.068/h wins.
			name: "on-demand, category c/m/r, size large, al2023@latest: c6g.large",
			reqs: []karpv1.NodeSelectorRequirementWithMinValues{
				req(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "on-demand"),
				req(awsv1.LabelInstanceCategory, corev1.NodeSelectorOpIn, "c", "m", "r"),
				req(awsv1.LabelInstanceSize, corev1.NodeSelectorOpIn, "large"),
			},
			class:    nodeClass(amiAlias("al2023@latest")),
			cpu:      "500m",
			wantType: "c6g.large", wantCap: "on-demand",
		},
		{
			// 3 CPUs do not fit a large (1930m allocatable); among 4-vCPU
			// amd64 c/m/r on spot c4.xlarge $0.0541/h is the cheapest
			// (next: c5.xlarge $0.0634/h).
			name: "spot, category c/m/r, arch amd64, pod of 3 CPUs: c4.xlarge",
			reqs: []karpv1.NodeSelectorRequirementWithMinValues{
				req(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot"),
				req(awsv1.LabelInstanceCategory, corev1.NodeSelectorOpIn, "c", "m", "r"),
				req(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "amd64"),
			},
			class:    nodeClass(amiID(ami130)),
			cpu:      "3",
			wantType: "c4.xlarge", wantCap: "spot",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.wantType == "c6a.large" {
			}
			tw := newTwin(t)
			tw.apply(tc.class, nodePool(withRequirements(tc.reqs...)))
			tw.apply(pod("web", tc.cpu))
			tw.runFor(time.Minute)
			claims := tw.karp.NodeClaims()
			if len(claims) != 1 {
				t.Fatalf("NodeClaims = %d, want 1\n%s", len(claims), tw.dumpLog())
			}
			c := claims[0]
			if c.InstanceType.Name != tc.wantType || c.CapacityType != tc.wantCap {
				t.Errorf("launched %s/%s, want %s/%s\n%s", c.InstanceType.Name, c.CapacityType, tc.wantType, tc.wantCap, tw.dumpLog())
			}
			if got := tw.Kube.Pod("default", "web"); got == nil || got.Spec.NodeName != c.Node {
				t.Errorf("pod web is on %q, want the new node %q", got.Spec.NodeName, c.Node)
			}
		})
	}
}

// TestProvisioningBatchWindow: the provisioner waits BatchIdle (1 s) after
// the last pending pod, at most BatchMax (10 s) after the first
// (BATCH_IDLE_DURATION, BATCH_MAX_DURATION; karpenter.go Timings).
func TestProvisioningBatchWindow(t *testing.T) {
	cases := []struct {
		name string
		// every is the gap between pods; count how many arrive.
		every       time.Duration
		count       int
		wantCreated time.Duration // first "created nodeclaim", from t0
	}{
		{name: "one pod: batch closes 1s after it", every: 0, count: 1, wantCreated: 1 * time.Second},
		{name: "pods 500ms apart for 2s: 1s after the last", every: 500 * time.Millisecond, count: 5, wantCreated: 3 * time.Second},
		{name: "pods 500ms apart for 20s: cut at 10s", every: 500 * time.Millisecond, count: 41, wantCreated: 10 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t)
			tw.apply(nodeClass(amiID(ami130)), nodePool())
			for i := 0; i < tc.count; i++ {
				p := pod(fmt.Sprintf("p%02d", i), "10m")
				tw.Eng.At(t0.Add(time.Duration(i)*tc.every), func() { tw.apply(p) })
			}
			tw.runFor(tc.wantCreated - time.Millisecond)
			if n := len(tw.events("NodeClaimCreated")); n != 0 {
				t.Fatalf("%d NodeClaims created before +%s, want 0\n%s", n, tc.wantCreated, tw.dumpLog())
			}
			tw.runFor(time.Millisecond)
			created := tw.events("NodeClaimCreated")
			if len(created) != 1 || !created[0].At.Equal(t0.Add(tc.wantCreated)) {
				t.Fatalf("NodeClaimCreated = %v, want one at +%s\n%s", created, tc.wantCreated, tw.dumpLog())
			}
		})
	}
}

// TestProvisioningLifecycle: created → launched after Timings.Launch →
// registered after Register → initialized after Initialize; the node
// carries the NodePool's and the instance's labels, karpenter.sh/initialized
// only once initialized, and the kubelet version of the AMI it booted
// (seed log: created, launched, registered, initialized nodeclaim).
func TestProvisioningLifecycle(t *testing.T) {
	cases := []struct {
		name        string
		class       *awsv1.EC2NodeClass
		cp          string
		timings     karpenter.Timings
		wantAMI     string
		wantKubelet string
	}{
		{
			name:  "AMI by id 1.30, default timings",
			class: nodeClass(amiID(ami130)), cp: "1.30",
			timings: testTimings,
			wantAMI: ami130, wantKubelet: kubelet130,
		},
		{
			name:  "AMI by id 1.31, slow boot",
			class: nodeClass(amiID(ami131)), cp: "1.30",
			timings: karpenter.Timings{BatchIdle: time.Second, BatchMax: 10 * time.Second, Launch: 7 * time.Second, Register: 95 * time.Second, Initialize: 25 * time.Second, Terminate: 30 * time.Second},
			wantAMI: ami131, wantKubelet: kubelet131,
		},
		{
			name:  "al2023@latest on a 1.31 control plane",
			class: nodeClass(amiAlias("al2023@latest")), cp: "1.31",
			timings: testTimings,
			wantAMI: ami131, wantKubelet: kubelet131,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t, withTimings(tc.timings), func(c *twinConfig) { c.cp = tc.cp })
			tw.apply(tc.class, nodePool(withLabels("team", "checkout")))
			tw.apply(pod("web", "500m"))

			createdAt := t0.Add(tc.timings.BatchIdle)
			launchedAt := createdAt.Add(tc.timings.Launch)
			registeredAt := launchedAt.Add(tc.timings.Register)
			initializedAt := registeredAt.Add(tc.timings.Initialize)

			tw.Eng.RunUntil(registeredAt)
			claims := tw.karp.NodeClaims()
			if len(claims) != 1 {
				t.Fatalf("NodeClaims = %d, want 1\n%s", len(claims), tw.dumpLog())
			}
			c := claims[0]
			node := tw.Kube.Node(c.Node)
			if node == nil {
				t.Fatalf("node %q not registered at +%s\n%s", c.Node, registeredAt.Sub(t0), tw.dumpLog())
			}
			if v, ok := node.Labels[karpv1.NodeInitializedLabelKey]; ok {
				t.Errorf("registered node has %s=%q before it is initialized", karpv1.NodeInitializedLabelKey, v)
			}
			tw.Eng.RunUntil(initializedAt)

			for _, step := range []struct {
				name      string
				got, want time.Time
			}{
				{"Created", c.Created, createdAt},
				{"Launched", c.Launched, launchedAt},
				{"Registered", c.Registered, registeredAt},
				{"Initialized", c.Initialized, initializedAt},
			} {
				if !step.got.Equal(step.want) {
					t.Errorf("%s at +%s, want +%s", step.name, step.got.Sub(t0), step.want.Sub(t0))
				}
			}
			node = tw.Kube.Node(c.Node)
			wantLabels := map[string]string{
				karpv1.NodePoolLabelKey:        "default",
				corev1.LabelInstanceTypeStable: c.InstanceType.Name,
				corev1.LabelTopologyZone:       c.Zone,
				karpv1.CapacityTypeLabelKey:    c.CapacityType,
				karpv1.NodeInitializedLabelKey: "true",
				"team":                         "checkout",
			}
			for k, v := range wantLabels {
				if node.Labels[k] != v {
					t.Errorf("node label %s = %q, want %q", k, node.Labels[k], v)
				}
			}
			if c.AMI.ID != tc.wantAMI {
				t.Errorf("AMI = %s, want %s", c.AMI.ID, tc.wantAMI)
			}
			if got := node.Status.NodeInfo.KubeletVersion; got != tc.wantKubelet {
				t.Errorf("kubelet = %s, want %s", got, tc.wantKubelet)
			}
			if !strings.HasPrefix(node.Spec.ProviderID, "aws:///"+c.Zone+"/i-") {
				t.Errorf("providerID = %q, want aws:///%s/i-...", node.Spec.ProviderID, c.Zone)
			}
			if p := tw.Kube.Pod("default", "web"); p.Spec.NodeName != c.Node {
				t.Errorf("pod web on %q, want %q", p.Spec.NodeName, c.Node)
			}
			var codes []string
			for _, l := range tw.log.Lines {
				if l.NodeClaim == c.Name {
					codes = append(codes, l.Code)
				}
			}
			want := []string{"NodeClaimCreated", "NodeClaimLaunched", "NodeClaimRegistered", "NodeClaimInitialized"}
			if strings.Join(codes, " ") != strings.Join(want, " ") {
				t.Errorf("log for %s = %v, want %v", c.Name, codes, want)
			}
		})
	}
}

// TestProvisioningUnschedulable: a pod the NodePool cannot serve gets no
// NodeClaim, and Unschedulable says which constraint failed (the
// provisioner's "could not schedule pod" with "incompatible with nodepool").
func TestProvisioningUnschedulable(t *testing.T) {
	dedicated := corev1.Taint{Key: "dedicated", Value: "CheckoutApp", Effect: corev1.TaintEffectNoSchedule}
	cases := []struct {
		name       string
		pool       *karpv1.NodePool
		pod        *corev1.Pod
		wantClaims int
		wantWhy    []string // substrings of Unschedulable; none when provisioned
	}{
		{
			name:       "nodeSelector on-demand, NodePool spot only",
			pool:       nodePool(),
			pod:        pod("web", "500m", withNodeSelector(karpv1.CapacityTypeLabelKey, "on-demand")),
			wantClaims: 0,
			wantWhy:    []string{`incompatible with nodepool "default"`, karpv1.CapacityTypeLabelKey},
		},
		{
			name:       "nodeSelector team=payments, NodePool labels team=checkout",
			pool:       nodePool(withLabels("team", "checkout")),
			pod:        pod("web", "500m", withNodeSelector("team", "payments")),
			wantClaims: 0,
			wantWhy:    []string{`incompatible with nodepool "default"`, "team"},
		},
		{
			name:       "NodePool taint dedicated=CheckoutApp:NoSchedule not tolerated",
			pool:       nodePool(withTaints(dedicated)),
			pod:        pod("web", "500m"),
			wantClaims: 0,
			wantWhy:    []string{`incompatible with nodepool "default"`, "did not tolerate", "dedicated"},
		},
		{
			name:       "64 CPUs on a NodePool of large instances",
			pool:       nodePool(),
			pod:        pod("web", "64"),
			wantClaims: 0,
			wantWhy:    []string{`incompatible with nodepool "default"`, "no instance type satisfied resources"},
		},
		{
			name:       "control: toleration for the taint is provisioned",
			pool:       nodePool(withTaints(dedicated)),
			pod:        pod("web", "500m", withToleration("dedicated", "CheckoutApp")),
			wantClaims: 1,
		},
		{
			name:       "control: nodeSelector team=checkout is provisioned",
			pool:       nodePool(withLabels("team", "checkout")),
			pod:        pod("web", "500m", withNodeSelector("team", "checkout")),
			wantClaims: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t)
			tw.apply(nodeClass(amiID(ami130)), tc.pool)
			tw.apply(tc.pod)
			tw.runFor(2 * time.Minute)
			if n := len(tw.karp.NodeClaims()); n != tc.wantClaims {
				t.Fatalf("NodeClaims = %d, want %d\n%s", n, tc.wantClaims, tw.dumpLog())
			}
			why := tw.karp.Unschedulable("default", "web")
			if len(tc.wantWhy) == 0 {
				if p := tw.Kube.Pod("default", "web"); p.Spec.NodeName == "" {
					t.Errorf("pod still pending: %q", why)
				}
				return
			}
			for _, s := range tc.wantWhy {
				if !strings.Contains(why, s) {
					t.Errorf("Unschedulable = %q, want it to mention %q", why, s)
				}
			}
		})
	}
}

// TestProvisioningVolumeZone: a pod whose EBS volume lives in one zone gets
// a node in that zone (the volume's topology becomes a requirement).
func TestProvisioningVolumeZone(t *testing.T) {
	for _, zone := range zones {
		for _, seed := range []uint64{1, 2, 3} {
			t.Run(zone, func(t *testing.T) {
				tw := newTwin(t, withSeed(seed))
				sc, pvc := zonalStorage(zone)
				tw.apply(nodeClass(amiID(ami130)), nodePool(), sc, pvc)
				if got := tw.Kube.PVCZone("default", "data"); got != zone {
					t.Fatalf("volume in %q, want %q", got, zone)
				}
				tw.apply(pod("db", "500m", withClaim("data")))
				tw.runFor(2 * time.Minute)
				claims := tw.karp.NodeClaims()
				if len(claims) != 1 {
					t.Fatalf("NodeClaims = %d, want 1\n%s", len(claims), tw.dumpLog())
				}
				if claims[0].Zone != zone {
					t.Errorf("NodeClaim in %s, want %s (seed %d)", claims[0].Zone, zone, seed)
				}
				if p := tw.Kube.Pod("default", "db"); p.Spec.NodeName != claims[0].Node {
					t.Errorf("pod db on %q, want %q", p.Spec.NodeName, claims[0].Node)
				}
			})
		}
	}
}

// TestProvisioningUnschedulableTaintMessage: the reason for an untolerated
// NodePool taint reads as Karpenter's does, "incompatible with nodepool
// "default", ... did not tolerate taint (taint=dedicated=CheckoutApp:NoSchedule)",
// with the phrase once.
func TestProvisioningUnschedulableTaintMessage(t *testing.T) {
	tw := newTwin(t)
	dedicated := corev1.Taint{Key: "dedicated", Value: "CheckoutApp", Effect: corev1.TaintEffectNoSchedule}
	tw.apply(nodeClass(amiID(ami130)), nodePool(withTaints(dedicated)), pod("web", "500m"))
	tw.runFor(time.Minute)
	why := tw.karp.Unschedulable("default", "web")
	if n := strings.Count(why, "did not tolerate taint"); n != 1 {
		t.Errorf("Unschedulable = %q: %q appears %d times, want 1", why, "did not tolerate taint", n)
	}
	if !strings.Contains(why, "dedicated=CheckoutApp:NoSchedule") {
		t.Errorf("Unschedulable = %q, want it to name the taint dedicated=CheckoutApp:NoSchedule", why)
	}
}

// TestProvisioningNodePoolWeight: the provisioner tries NodePools by
// weight, highest first, and takes the first that can serve the pod
// (spec.weight, semantics.md §A.1; the scheduler orders NodePools by
// weight).
func TestProvisioningNodePoolWeight(t *testing.T) {
	amd64 := req(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "amd64")
	large := req(awsv1.LabelInstanceSize, corev1.NodeSelectorOpIn, "large")
	cmr := req(awsv1.LabelInstanceCategory, corev1.NodeSelectorOpIn, "c", "m", "r")
	pool := func(name string, weight int32, capacityType string) *karpv1.NodePool {
		np := nodePool(withRequirements(req(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, capacityType), amd64, large, cmr))
		np.Name = name
		if weight > 0 {
			np.Spec.Weight = &weight
		}
		return np
	}
	cases := []struct {
		name        string
		pools       []*karpv1.NodePool
		pod         *corev1.Pod
		wantPool    string
		wantType    string
		wantCapType string
	}{
		{
			name:  "on-demand pool weight 10 beats cheaper spot pool",
			pools: []*karpv1.NodePool{pool("on-demand", 10, "on-demand"), pool("spot", 0, "spot")},
			pod:   pod("web", "500m"), wantPool: "on-demand", wantType: "c6a.large", wantCapType: "on-demand",
		},
		{
			name:  "spot pool weight 10",
			pools: []*karpv1.NodePool{pool("on-demand", 1, "on-demand"), pool("spot", 10, "spot")},
			pod:   pod("web", "500m"), wantPool: "spot", wantType: "c4.large", wantCapType: "spot",
		},
		{
			name:  "heavier pool cannot serve the pod: the next one does",
			pools: []*karpv1.NodePool{pool("on-demand", 10, "on-demand"), pool("spot", 0, "spot")},
			pod:   pod("web", "500m", withNodeSelector(karpv1.CapacityTypeLabelKey, "spot")), wantPool: "spot", wantType: "c4.large", wantCapType: "spot",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t)
			tw.apply(nodeClass(amiID(ami130)))
			for _, p := range tc.pools {
				tw.apply(p)
			}
			tw.apply(tc.pod)
			tw.runFor(time.Minute)
			claims := tw.karp.NodeClaims()
			if len(claims) != 1 {
				t.Fatalf("NodeClaims = %d, want 1\n%s", len(claims), tw.dumpLog())
			}
			c := claims[0]
			if c.NodePool != tc.wantPool || c.InstanceType.Name != tc.wantType || c.CapacityType != tc.wantCapType {
				t.Errorf("NodeClaim from %s as %s/%s, want %s as %s/%s", c.NodePool, c.InstanceType.Name, c.CapacityType, tc.wantPool, tc.wantType, tc.wantCapType)
			}
			if !strings.HasPrefix(c.Name, tc.wantPool+"-") {
				t.Errorf("NodeClaim %s, want name %s-xxxxx", c.Name, tc.wantPool)
			}
		})
	}
}
