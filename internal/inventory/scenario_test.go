package inventory

import (
	"reflect"
	"testing"

	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// The workshop's starting cluster (seed §8.3): managed initial and
// blue-mng, the custom-AMI managed group custom-Y, the self-managed
// default-selfmng, the Karpenter NodePool default and the Fargate profile
// fp-profile, all at 1.30, each carrying what the scenario pins to it.
func TestWorkshopInventory(t *testing.T) {
	sc, err := scenario.LoadBuiltin("workshop")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := FromScenario(sc)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		name  string
		typ   Type
		nodes int
		zones int
	}
	var got []row
	for _, g := range inv.Groups {
		got = append(got, row{g.Name, g.Type, g.Nodes, len(g.Zones)})
		if want := map[string]int{"v1.30.14-eks-f69f56f": g.Nodes}; !reflect.DeepEqual(g.KubeletVersions, want) {
			t.Errorf("%s kubelets %v, want %v", g.Name, g.KubeletVersions, want)
		}
		if g.ReadyNodes != g.Nodes {
			t.Errorf("%s: %d of %d nodes Ready", g.Name, g.ReadyNodes, g.Nodes)
		}
	}
	want := []row{
		{"blue-mng", Managed, 2, 2},
		{"initial", Managed, 3, 3},
		{"custom-Y", CustomAMI, 2, 2},
		{"default-selfmng", SelfManaged, 2, 2},
		{"default", Karpenter, 1, 1},
		{"fp-profile", Fargate, 1, 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("groups\n got %+v\nwant %+v", got, want)
	}
	if inv.Source != (Source{Kind: "scenario", Name: "workshop", Cluster: "eksworkshop-eksctl"}) {
		t.Errorf("source %+v", inv.Source)
	}
	if len(inv.Unscheduled) != 0 {
		t.Errorf("unscheduled %+v: the workshop starts with every pod bound", inv.Unscheduled)
	}
	// What the manifests pin: orders on blue-mng (nodeSelector and the
	// OrdersApp toleration), checkout on the NodePool, assets on Fargate,
	// Karpenter's controller on initial.
	pinned := map[Workload]string{
		{"orders", "Deployment", "orders"}:           "blue-mng",
		{"orders", "Deployment", "orders-mysql"}:     "blue-mng",
		{"checkout", "Deployment", "checkout"}:       "default",
		{"checkout", "Deployment", "checkout-redis"}: "default",
		{"assets", "Deployment", "assets"}:           "fp-profile",
		{"karpenter", "Deployment", "karpenter"}:     "initial",
	}
	for _, g := range inv.Groups {
		for _, w := range g.Workloads {
			if at, ok := pinned[w.Workload]; ok && at != g.Name {
				t.Errorf("%v on %s, want %s", w.Workload, g.Name, at)
			}
			delete(pinned, w.Workload)
		}
	}
	for w, g := range pinned {
		t.Errorf("%v is on no group, want %s", w, g)
	}
	proxies := inv.Groups[0].KubeProxyVersions
	if want := map[string]int{"v1.30.14-minimal-eksbuild.28": 2}; !reflect.DeepEqual(proxies, want) {
		t.Errorf("blue-mng kube-proxy %v, want the add-on's image tag %v", proxies, want)
	}
}

// Reading the labels finds the groups the twins made the nodes for, in
// every built-in scenario: the labels the twins set are the ones the
// inventory reads on a real cluster.
func TestLabelsMatchTheTwinsGroups(t *testing.T) {
	for _, name := range scenario.Builtins() {
		t.Run(name, func(t *testing.T) {
			sc, err := scenario.LoadBuiltin(name)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := twinbuild.Start(sc)
			if err != nil {
				t.Fatal(err)
			}
			pools := map[string]string{} // scenario group → NodePool
			for _, g := range sc.Spec.NodeGroups {
				if g.Karpenter != nil {
					pools[g.Name] = g.Karpenter.NodePool
				}
			}
			inv := FromSnapshot(name, snap)
			for _, g := range inv.Groups {
				for _, n := range g.NodeNames {
					twin := snap.Groups[n]
					wantName, wantTypes := twin.Name, map[string][]Type{
						"managed": {Managed, CustomAMI}, "self-managed": {SelfManaged}, "karpenter": {Karpenter}, "fargate": {Fargate}}[twin.Type]
					if twin.Type == "karpenter" {
						wantName = pools[twin.Name]
					}
					if g.Name != wantName || !contains(wantTypes, g.Type) {
						t.Errorf("node %s: inventory says %s %s, the twin made it for %s %s", n, g.Type, g.Name, twin.Type, twin.Name)
					}
				}
			}
		})
	}
}

func contains(ts []Type, t Type) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}
