package insights

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/scenario"
)

var (
	scenarioMu       sync.Mutex
	scenarioClusters = map[string]*Cluster{}
)

// scenarioIn is the input `ladder check --scenario NAME --target TARGET`
// builds: the scenario's manifests, its version, its start as the instant
// and its starting cluster's facts (cached per scenario; checks only read
// them). mutate, when not nil, changes the scenario first (not cached).
func scenarioIn(t *testing.T, name, target string, mutate func(*scenario.Scenario)) *Input {
	t.Helper()
	sc, err := scenario.LoadBuiltin(name)
	if err != nil {
		t.Fatal(err)
	}
	key := name
	if mutate != nil {
		mutate(sc)
		key = ""
	}
	scenarioMu.Lock()
	c := scenarioClusters[key]
	scenarioMu.Unlock()
	if c == nil {
		if c, err = ScenarioCluster(sc); err != nil {
			t.Fatal(err)
		}
		if key != "" {
			scenarioMu.Lock()
			scenarioClusters[key] = c
			scenarioMu.Unlock()
		}
	}
	cur := kubeversion.MustParse(sc.Spec.Cluster.Version)
	in := &Input{Current: cur, Target: cur.Next(), Now: sc.Spec.Start.UTC(), Cluster: c}
	if target != "" {
		in.Target = kubeversion.MustParse(target)
	}
	in.Add(FromManifests(sc.Objects), nil)
	return in
}

// TestScenarioCluster: the workshop's starting cluster as the checks see
// it — every kind of node group with its type, zones, AMI and kubelets,
// kube-proxy per node, the add-ons, orders' EBS volume and the predicted
// drains.
func TestScenarioCluster(t *testing.T) {
	c := scenarioIn(t, "workshop", "", nil).Cluster
	if c.Name != "eksworkshop-eksctl" || c.Version.String() != "1.30" || c.Region != "us-west-2" || len(c.Zones) != 3 || c.Source != "scenario workshop" {
		t.Errorf("cluster %s %s %s %v %q", c.Name, c.Version, c.Region, c.Zones, c.Source)
	}
	types := map[string]GroupType{}
	for _, g := range c.NodeGroups {
		types[g.Name] = g.Type
	}
	wantTypes := map[string]GroupType{"blue-mng": GroupManaged, "custom-Y": GroupCustomAMI, "default": GroupKarpenter,
		"default-selfmng": GroupSelfManaged, "fp-profile": GroupFargate, "initial": GroupManaged}
	for name, typ := range wantTypes {
		if types[name] != typ {
			t.Errorf("group %s is %q, want %q", name, types[name], typ)
		}
	}
	custom := c.Group("custom-Y")
	if !custom.CustomAMI || custom.AMIType != "CUSTOM" || custom.AMIFamily != "al2023" || custom.Version.String() != "1.30" ||
		custom.LaunchTemplate != "custom-Y:1" || !slices.Equal(custom.AMIs, []string{"ami-0f676a166352f02ab"}) || len(custom.Nodes) != 2 {
		t.Errorf("custom-Y: %+v", custom)
	}
	blue := c.Group("blue-mng")
	if blue.Replacement == nil || blue.Replacement.Name != "green-mng" || !slices.Equal(blue.Replacement.Zones, []string{"us-west-2a", "us-west-2b"}) ||
		!slices.Equal(blue.Zones, []string{"us-west-2a", "us-west-2b"}) || blue.AMIType != "AL2023_x86_64_STANDARD" {
		t.Errorf("blue-mng: %+v", blue)
	}
	if g := c.Group("initial"); !slices.Equal(g.KubeletVersions, []string{"v1.30.14-eks-f69f56f"}) || len(g.Zones) != 3 {
		t.Errorf("initial: %+v", g)
	}
	if len(c.Nodes) != 11 {
		t.Errorf("%d nodes, want 11", len(c.Nodes))
	}
	for _, n := range c.Nodes {
		if n.KubeProxyVersion == "" || n.KubeletVersion == "" || n.Group == "" || n.Zone == "" {
			t.Errorf("node %+v lacks a fact", n)
		}
	}
	var addons []string
	for _, a := range c.Addons {
		addons = append(addons, a.Name+"="+a.Version)
	}
	if got := strings.Join(addons, " "); got != "aws-ebs-csi-driver=v1.35.0-eksbuild.1 coredns=v1.11.4-eksbuild.40 kube-proxy=v1.30.14-eksbuild.28 vpc-cni=v1.20.1-eksbuild.3" {
		t.Errorf("add-ons %s", got)
	}
	var orders *Volume
	for i, v := range c.Volumes {
		if v.Namespace == "orders" {
			orders = &c.Volumes[i]
		}
	}
	if orders == nil || orders.Claim != "orders-mysql-data" || orders.Zone == "" || !slices.Equal(orders.Workloads, []string{"Deployment orders/orders-mysql"}) || len(orders.Nodes) != 1 {
		t.Errorf("orders' volume: %+v", orders)
	}
	if !c.DrainsPredicted || len(c.Drains) != 10 {
		t.Errorf("%d drains predicted (%v), want 10 (every node but the Fargate one)", len(c.Drains), c.DrainsPredicted)
	}
}

// scenarioCase runs one check over a built-in scenario.
type scenarioCase struct {
	check, scenario, target string
	mutate                  func(*scenario.Scenario)
	want                    []want
}

// TestClusterChecksOnScenarios: each cluster check, fired and not fired,
// through the built-in scenarios as `ladder check --scenario` runs them.
func TestClusterChecksOnScenarios(t *testing.T) {
	al2 := func(sc *scenario.Scenario) {
		for i := range sc.Spec.NodeGroups {
			if sc.Spec.NodeGroups[i].Name == "initial" {
				sc.Spec.NodeGroups[i].Managed.AMIType = "AL2_x86_64"
			}
		}
	}
	behind := func(sc *scenario.Scenario) {
		for i := range sc.Spec.NodeGroups {
			if sc.Spec.NodeGroups[i].Name == "initial" {
				sc.Spec.NodeGroups[i].Managed.Version = "1.29"
			}
		}
	}
	for _, tc := range []scenarioCase{
		{check: "kubelet-skew", scenario: "workshop"},
		{check: "kubelet-skew", scenario: "workshop", target: "1.34", want: []want{
			{Warning, "FargateProfile fp-profile", "", []string{"4 minors behind Kubernetes 1.34"}},
			{Warning, "NodeGroup blue-mng", "", []string{"2 nodes run kubelet v1.30.14-eks-f69f56f, 4 minors behind Kubernetes 1.34"}},
			{Warning, "NodeGroup custom-Y", "", nil},
			{Warning, "NodeGroup default-selfmng", "", nil},
			{Warning, "NodeGroup initial", "", []string{"3 nodes run kubelet"}},
			{Warning, "NodePool default", "", nil},
		}},
		{check: "kube-proxy-skew", scenario: "workshop"},
		{check: "control-plane-hop", scenario: "workshop"},
		{check: "control-plane-hop", scenario: "workshop", mutate: behind, want: []want{
			{Error, "NodeGroup initial", "", []string{"managed node group initial is at Kubernetes 1.29, behind the control plane's 1.30: UpdateClusterVersion to 1.31 is refused"}},
		}},
		{check: "control-plane-hop", scenario: "workshop", target: "1.32", want: []want{
			{Warning, "Cluster eksworkshop-eksctl", "", []string{"before the update from 1.31 to 1.32, 3 managed node groups must be at 1.31 (blue-mng, custom-Y, initial)"}},
		}},
		{check: "addon-compatibility", scenario: "workshop", want: []want{
			{Warning, "Addon kube-proxy", "", []string{"at 1.31: v1.30.14-eksbuild.28 → v1.31.14-eksbuild.20"}},
		}},
		{check: "pv-zone", scenario: "workshop"},
		{check: "pv-zone", scenario: "az-mismatch", want: []want{
			{Error, "PersistentVolumeClaim orders/orders-mysql-data", "", []string{"whose blue/green replacement green-mng has zones us-west-2b, us-west-2c only"}},
		}},
		{check: "custom-ami-nodegroup", scenario: "workshop", want: []want{
			{Warning, "NodeGroup custom-Y", "", []string{"managed node group custom-Y (custom AMI) runs ami-0f676a166352f02ab"}},
			{Warning, "NodeGroup default-selfmng", "", []string{"self-managed node group default-selfmng runs ami-0f676a166352f02ab"}},
		}},
		{check: "custom-ami-nodegroup", scenario: "pdb-deadlock"},
		{check: "al2-end-of-life", scenario: "workshop"},
		{check: "al2-end-of-life", scenario: "workshop", target: "1.33", mutate: al2, want: []want{
			{Warning, "NodeGroup initial", "", []string{"managed node group initial runs Amazon Linux 2 (amiType AL2_x86_64): there are no AL2 AMIs for Kubernetes 1.33"}},
		}},
		{check: "support-window", scenario: "workshop", want: []want{
			{Warning, "Cluster eksworkshop-eksctl", "", []string{"Kubernetes 1.30, the control plane's version, has been in extended support since 2025-07-23"}},
			{Warning, "Cluster eksworkshop-eksctl", "", []string{"Kubernetes 1.31, the target version"}},
		}},
		{check: "drain-blocked", scenario: "workshop", want: []want{
			{Warning, "Node ip-10-0-3-18.us-west-2.compute.internal", "", []string{"(managed node group blue-mng, us-west-2a) leaves Deployment orders/orders-mysql", "Pending", "its volumes bind it to us-west-2a"}},
		}},
		{check: "drain-blocked", scenario: "pdb-deadlock", want: []want{
			{Error, "Node ip-10-0-18-142.us-west-2.compute.internal", "", []string{"of Deployment orders/orders is refused by PodDisruptionBudget orders/orders-pdb for the whole 15m", "PodEvictionFailure"}},
			{Warning, "Node ip-10-0-10-168.us-west-2.compute.internal", "", []string{"leaves Deployment orders/orders-mysql"}},
		}},
		{check: "drain-timeout-risk", scenario: "workshop"},
		{check: "drain-timeout-risk", scenario: "pdb-deadlock", want: []want{
			{Error, "NodeGroup blue-mng", "", []string{"managed node group blue-mng: pods on 1 node cannot be evicted within EKS's 15m", "orders/orders-pdb", "PodEvictionFailure"}},
		}},
	} {
		name := tc.check + " " + tc.scenario
		if tc.target != "" {
			name += " to " + tc.target
		}
		if tc.mutate != nil {
			name += " changed"
		}
		t.Run(name, func(t *testing.T) {
			in := scenarioIn(t, tc.scenario, tc.target, tc.mutate)
			expectFindings(t, runCheck(t, tc.check, in), tc.want)
		})
	}
}

// BenchmarkScenarioCheckWorkshop: the whole of `ladder check --scenario
// workshop` — the twin's starting cluster, the predicted drains, every
// check (about 0.2 s on this 2-core VM).
func BenchmarkScenarioCheckWorkshop(b *testing.B) {
	sc, err := scenario.LoadBuiltin("workshop")
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		c, err := ScenarioCluster(sc)
		if err != nil {
			b.Fatal(err)
		}
		in := &Input{Current: c.Version, Target: c.Version.Next(), Now: sc.Spec.Start.UTC(), Cluster: c}
		in.Add(FromManifests(sc.Objects), nil)
		Run(in, nil)
	}
}
