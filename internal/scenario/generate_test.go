package scenario

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/rules/addon"
)

func TestGenerateWritesValidScenario(t *testing.T) {
	data, err := Generate(GenerateOptions{Nodes: 30, PodsPerNode: 20, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if p := os.Getenv("LADDER_DUMP"); p != "" {
		os.WriteFile(p, data, 0o644)
	}
	sc, err := Parse("gen.yaml", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
}

// mixScenario generates, parses and validates a --mix scenario.
func mixScenario(t *testing.T, o GenerateOptions) (*Scenario, []byte) {
	t.Helper()
	o.Mix = true
	data, err := Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Parse("mix.yaml", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	warnings, err := sc.Validate()
	if err != nil {
		t.Fatalf("the generated scenario is not valid:\n%v", err)
	}
	for _, w := range warnings {
		// Fargate warnings are validate.go's business (being removed);
		// anything else is the generator's fault.
		if !strings.Contains(w, "Fargate") {
			t.Errorf("warning: %s", w)
		}
	}
	return sc, data
}

func TestGenerateMix(t *testing.T) {
	cases := []struct {
		nodes, podsPerNode int
		want               MixSplit
		managed, custom    int // groups
		fargatePods        int
	}{
		// the fewest nodes: one of every kind at least
		{10, 20, MixSplit{Karpenter: 5, Managed: 3, Custom: 1, SelfManaged: 1}, 1, 1, 10},
		{101, 7, MixSplit{Karpenter: 46, Managed: 30, Custom: 10, SelfManaged: 15}, 1, 1, 35},
		// managed shares above 450 nodes are split; Fargate is capped at 200 pods
		{2000, 20, MixSplit{Karpenter: 900, Managed: 600, Custom: 200, SelfManaged: 300}, 2, 1, 200},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%dx%d", tc.nodes, tc.podsPerNode), func(t *testing.T) {
			if got := SplitMix(tc.nodes); got != tc.want {
				t.Fatalf("SplitMix(%d) = %+v, want %+v", tc.nodes, got, tc.want)
			}
			if got := MixFargatePods(tc.nodes, tc.podsPerNode); got != tc.fargatePods {
				t.Fatalf("MixFargatePods = %d, want %d", got, tc.fargatePods)
			}
			sc, _ := mixScenario(t, GenerateOptions{Nodes: tc.nodes, PodsPerNode: tc.podsPerNode, Seed: 3})

			if sc.Spec.Cluster.Version != "1.30" || sc.Spec.Upgrade == nil || sc.Spec.Upgrade.To != "1.31" || len(sc.Spec.Actions) != 0 {
				t.Fatalf("control plane %s, upgrade %+v, %d actions; want 1.30, to 1.31 by the playbook, no actions",
					sc.Spec.Cluster.Version, sc.Spec.Upgrade, len(sc.Spec.Actions))
			}
			// Nodes per type, and the selector that pins workloads to each group.
			var got MixSplit
			var managed, custom, fargate int
			pinned := map[string]int{} // "key=value" → nodes
			for _, g := range sc.Spec.NodeGroups {
				switch g.Type {
				case Karpenter:
					n := 0
					for _, e := range g.Karpenter.Nodes {
						n += e.Count
					}
					got.Karpenter += n
					pinned["karpenter.sh/nodepool="+g.Karpenter.NodePool] = n
					if g.StrategyOf() != Drift || g.Upgrade.AMI != "latest" {
						t.Errorf("group %s: upgrade %+v, want drift to al2023@latest", g.Name, g.Upgrade)
					}
				case Managed:
					m := g.Managed
					if m.Desired > 450 {
						t.Errorf("managed group %s has %d nodes, above the EKS quota of 450", g.Name, m.Desired)
					}
					if lt := m.LaunchTemplate; lt != nil && lt.ImageID != "" {
						got.Custom += m.Desired
						custom++
						if m.Version != "" || m.AMIType != "CUSTOM" {
							t.Errorf("custom-AMI group %s: version %q, amiType %q; want none and CUSTOM", g.Name, m.Version, m.AMIType)
						}
					} else {
						got.Managed += m.Desired
						managed++
						if m.Version != "1.30" {
							t.Errorf("managed group %s at %q, want 1.30", g.Name, m.Version)
						}
					}
					if g.StrategyOf() != InPlace {
						t.Errorf("managed group %s: strategy %s", g.Name, g.StrategyOf())
					}
					pinned["eks.amazonaws.com/nodegroup="+g.Name] = m.Desired
				case SelfManaged:
					s := g.SelfManaged
					got.SelfManaged += s.Desired
					if !s.TerminationHook || g.StrategyOf() != InstanceRefresh || g.Upgrade.Refresh == nil {
						t.Errorf("self-managed group %s: hook %v, upgrade %+v; want a termination hook and an instance refresh", g.Name, s.TerminationHook, g.Upgrade)
					}
					pinned["alpha.eksctl.io/nodegroup-name="+g.Name] = s.Desired
				case Fargate:
					fargate++
					if len(g.Fargate.Selectors) != 1 || g.Fargate.Selectors[0].Namespace != "serverless" || g.StrategyOf() != Restart {
						t.Errorf("Fargate group %s: %+v, strategy %s", g.Name, g.Fargate, g.StrategyOf())
					}
				}
			}
			if got != tc.want || managed != tc.managed || custom != tc.custom || fargate != 1 {
				t.Errorf("nodes %+v in %d managed, %d custom-AMI and %d Fargate group(s); want %+v, %d, %d, 1",
					got, managed, custom, fargate, tc.want, tc.managed, tc.custom)
			}
			if n := len(sc.Spec.Upgrade.Order); n != len(sc.Spec.NodeGroups) {
				t.Errorf("spec.upgrade.order lists %d of %d groups", n, len(sc.Spec.NodeGroups))
			}

			// Workloads: K pods per node of each group, the Fargate pods,
			// a PDB each; DaemonSets off Fargate.
			pods := map[string]int{}
			pdbs := map[string]bool{}
			for _, o := range sc.Objects {
				if p, ok := o.Object.(*policyv1.PodDisruptionBudget); ok && p.Namespace != "kube-system" {
					if p.Spec.MaxUnavailable == nil || p.Spec.MaxUnavailable.String() != "25%" {
						t.Errorf("PDB %s/%s: maxUnavailable %v, want 25%%", p.Namespace, p.Name, p.Spec.MaxUnavailable)
					}
					pdbs[p.Namespace+"/"+p.Name] = true
				}
			}
			for _, o := range sc.Objects {
				switch obj := o.Object.(type) {
				case *appsv1.Deployment:
					if obj.Namespace == "kube-system" {
						continue
					}
					if !pdbs[obj.Namespace+"/"+obj.Name] {
						t.Errorf("Deployment %s/%s has no PDB", obj.Namespace, obj.Name)
					}
					sel := obj.Spec.Template.Spec.NodeSelector
					if obj.Namespace == "serverless" {
						if len(sel) != 0 {
							t.Errorf("Fargate Deployment %s has a nodeSelector %v", obj.Name, sel)
						}
						pods["fargate"] += int(*obj.Spec.Replicas)
						continue
					}
					if len(sel) != 1 {
						t.Fatalf("Deployment %s/%s: nodeSelector %v, want one label of its group", obj.Namespace, obj.Name, sel)
					}
					for k, v := range sel {
						pods[k+"="+v] += int(*obj.Spec.Replicas)
					}
				case *appsv1.DaemonSet:
					if !avoidsFargate(obj.Spec.Template.Spec.Affinity) {
						t.Errorf("DaemonSet %s/%s lacks the required node affinity eks.amazonaws.com/compute-type NotIn [fargate]", obj.Namespace, obj.Name)
					}
				}
			}
			for sel, nodes := range pinned {
				if pods[sel] != nodes*tc.podsPerNode {
					t.Errorf("%s: %d pods on %d nodes, want %d per node", sel, pods[sel], nodes, tc.podsPerNode)
				}
				delete(pods, sel)
			}
			if pods["fargate"] != tc.fargatePods {
				t.Errorf("%d Fargate pods, want %d", pods["fargate"], tc.fargatePods)
			}
			delete(pods, "fargate")
			if len(pods) != 0 {
				t.Errorf("pods pinned to no group: %v", pods)
			}
		})
	}
}

// avoidsFargate reports whether a required node affinity keeps pods off
// Fargate in every term.
func avoidsFargate(a *corev1.Affinity) bool {
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for _, term := range terms {
		ok := false
		for _, e := range term.MatchExpressions {
			if e.Key == "eks.amazonaws.com/compute-type" && e.Operator == corev1.NodeSelectorOpNotIn && slices.Contains(e.Values, "fargate") {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return len(terms) > 0
}

// The add-ons come from the embedded table for the control plane's minor,
// with the kube-system workloads they run as; aws-ebs-csi-driver, which has
// no table, is pinned for the target.
func TestGenerateMixAddons(t *testing.T) {
	sc, data := mixScenario(t, GenerateOptions{Nodes: 20, PodsPerNode: 10, Seed: 1, Version: "1.32"})
	var names []string
	for _, a := range sc.Spec.Addons {
		names = append(names, a.Name)
		if a.Name == "aws-ebs-csi-driver" {
			if a.Version != mixEBSVersion || a.Versions["1.32"] != mixEBSTarget || len(a.Versions) != 1 {
				t.Errorf("aws-ebs-csi-driver %s, versions %v", a.Version, a.Versions)
			}
		} else if row, _ := catalog.LatestAddon(a.Name, "1.31"); a.Version != row.Version || len(a.Versions) != 0 {
			t.Errorf("%s %s %v, want the table's %s for 1.31 and no pin", a.Name, a.Version, a.Versions, row.Version)
		}
		for _, w := range addon.Workloads(a.Name) {
			if _, ok := sc.Find(w.Kind, w.Namespace, w.Name); !ok {
				t.Errorf("add-on %s: %s %s/%s missing", a.Name, w.Kind, w.Namespace, w.Name)
			}
		}
	}
	if got := strings.Join(names, ","); got != "vpc-cni,coredns,kube-proxy,aws-ebs-csi-driver" {
		t.Errorf("add-ons %s", got)
	}
	// The images carry the versions.
	kp, _ := catalog.LatestAddon("kube-proxy", "1.31")
	for _, want := range []string{
		"eks/kube-proxy:" + strings.Replace(kp.Version, "-eksbuild.", "-minimal-eksbuild.", 1),
		"eks/aws-ebs-csi-driver:v1.35.0\n",
		"{{", // no placeholder is left
	} {
		if has := strings.Contains(string(data), want); has != (want != "{{") {
			t.Errorf("output contains %q: %v", want, has)
		}
	}
}

func TestGenerateMixDeterministic(t *testing.T) {
	o := GenerateOptions{Nodes: 60, PodsPerNode: 15, Seed: 7, Mix: true}
	a, err := Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(o)
	if !bytes.Equal(a, b) {
		t.Error("the same options gave different bytes")
	}
	o.Seed = 8
	c, _ := Generate(o)
	if bytes.Equal(a, c) {
		t.Error("another seed gave the same bytes")
	}
	// Mix leaves the default output alone.
	o.Mix = false
	plain, _ := Generate(o)
	if bytes.Contains(plain, []byte("fargate")) || bytes.Contains(plain, []byte("spec.upgrade")) {
		t.Error("the output without Mix changed")
	}
}

func TestGenerateMixBadOptions(t *testing.T) {
	cases := []struct {
		name string
		o    GenerateOptions
		want string
	}{
		{"no drift", GenerateOptions{Nodes: 20, PodsPerNode: 10, Mix: true, NoDrift: true}, "--no-drift cannot be combined with --mix"},
		{"too few nodes", GenerateOptions{Nodes: 9, PodsPerNode: 10, Mix: true}, "--nodes 9: --mix needs 10 or more"},
		{"too many nodes", GenerateOptions{Nodes: 5001, PodsPerNode: 10, Mix: true}, "--nodes 5001: use 1 to 5000"},
		{"too many pods in all", GenerateOptions{Nodes: 5000, PodsPerNode: 30, Mix: true}, "--nodes 5000 × --pods-per-node 30 is 150000 pods: use at most 149000 in all"},
		{"too many pods", GenerateOptions{Nodes: 20, PodsPerNode: 60, Mix: true}, "--pods-per-node 60: m5.xlarge holds at most 58 pods, 3 of them daemons"},
		{"unknown type", GenerateOptions{Nodes: 20, PodsPerNode: 10, Mix: true, InstanceType: "m5.huge"}, `--instance-type "m5.huge" is not in the catalog`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Generate(tc.o)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want one starting %q", err, tc.want)
			}
		})
	}
}
