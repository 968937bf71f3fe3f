package twinbuild

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/scenario"
)

func load(t *testing.T, name string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.LoadBuiltin(name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// Every built-in scenario's starting cluster is in place when Build
// returns, at the scenario's start: each node in a group of the scenario,
// each group with the nodes it starts with, every pod bound and Running,
// every manifest applied.
func TestBuildStartsTheScenariosCluster(t *testing.T) {
	for _, name := range scenario.Builtins() {
		t.Run(name, func(t *testing.T) {
			sc := load(t, name)
			tw, err := Build(sc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := tw.Engine.Now(), sc.Spec.Start.UTC(); !got.Equal(want) {
				t.Errorf("the twin's clock is at %s, want the scenario's start %s: building takes no virtual time", got, want)
			}
			groups := map[string]bool{}
			want := map[string]int{} // scenario group → starting nodes, for the kinds whose count the scenario states
			for _, g := range sc.Spec.NodeGroups {
				groups[g.Name] = true
				switch {
				case g.Managed != nil:
					want[g.Name] = g.Managed.Desired
				case g.SelfManaged != nil:
					want[g.Name] = g.SelfManaged.Desired
				case g.Karpenter != nil:
					for _, n := range g.Karpenter.Nodes {
						want[g.Name] += max(n.Count, 1)
					}
				}
			}
			got := map[string]int{}
			for _, n := range tw.Kube.Nodes() {
				group, typ := tw.NodeGroup(n)
				if !groups[group] || typ == "" {
					t.Errorf("node %s is in group %q (%q), not one of the scenario's", n.Name, group, typ)
				}
				if _, counted := want[group]; counted {
					got[group]++
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("nodes per group %v, want %v", got, want)
			}
			for _, p := range tw.Kube.Pods() {
				if p.Spec.NodeName != "" && p.Status.Phase != corev1.PodRunning {
					t.Errorf("pod %s/%s on %s is %s, want Running as a running cluster has it", p.Namespace, p.Name, p.Spec.NodeName, p.Status.Phase)
				}
			}
			for _, o := range sc.Objects {
				if _, ok := tw.Objects[ObjectKey(o.GVK.Kind, o.Object.GetNamespace(), o.Object.GetName())]; !ok {
					t.Errorf("%s %s is not among the applied objects", o.GVK.Kind, o.Name())
				}
			}
		})
	}
}

// Observe runs on the wired twins before the first manifest is applied, so
// what an observer registers sees the whole construction: here every
// starting pod's creation.
func TestObserveSeesTheConstruction(t *testing.T) {
	inPlace := -1
	created := 0
	tw, err := Build(load(t, "workshop"), Options{Observe: func(tw *Twin) {
		inPlace = len(tw.Kube.Nodes()) + len(tw.Kube.Pods()) + len(tw.Objects)
		tw.Kube.OnPodCreated(func(*corev1.Pod) { created++ })
	}})
	if err != nil {
		t.Fatal(err)
	}
	if inPlace != 0 {
		t.Errorf("Observe ran with %d nodes, pods and objects in place, want it before any", inPlace)
	}
	if pods := len(tw.Kube.Pods()); created != pods || pods == 0 {
		t.Errorf("the observer saw %d pods created, want the %d starting pods", created, pods)
	}
}

// The same scenario and seed build the same cluster; Options.Seed is the
// engine's seed over the scenario's.
func TestBuildIsDeterministic(t *testing.T) {
	seed := uint64(7)
	a, err := Build(load(t, "workshop"), Options{Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build(load(t, "workshop"), Options{Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	if a.Seed != seed {
		t.Errorf("seed %d, want Options.Seed %d", a.Seed, seed)
	}
	sa, sb := a.Snapshot(), b.Snapshot()
	if !reflect.DeepEqual(sa.Nodes, sb.Nodes) || !reflect.DeepEqual(sa.Groups, sb.Groups) || !reflect.DeepEqual(sa.NodeClaims, sb.NodeClaims) {
		t.Error("two builds of one scenario and seed differ")
	}
}
