package scenario

import (
	"fmt"
	"strings"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/addon"
	"github.com/ladder-eks/ladder/internal/rules/instancerefresh"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
)

// strategies lists the upgrade strategies each node group type accepts,
// its default first.
var strategies = map[string][]string{
	Managed:     {InPlace, BlueGreen, NoUpgrade},
	SelfManaged: {InstanceRefresh, Ladder, NoUpgrade},
	Karpenter:   {Drift, NoUpgrade},
	Fargate:     {Restart, NoUpgrade},
}

// groupUpgrades checks each node group's upgrade block against its type.
func (v *validator) groupUpgrades() {
	names := map[string]bool{}
	for _, g := range v.sc.Spec.NodeGroups {
		names[g.Name] = true
	}
	zones := map[string]bool{}
	for _, z := range v.sc.Spec.Cluster.Zones {
		zones[z] = true
	}
	for i, g := range v.sc.Spec.NodeGroups {
		u := g.Upgrade
		allowed, ok := strategies[g.Type]
		if u == nil || !ok {
			continue
		}
		f := fmt.Sprintf("spec.nodeGroups[%d].upgrade", i)
		strategy := g.StrategyOf()
		if !contains(allowed, strategy) {
			v.fail(f+".strategy", "%q is not a strategy for a %s group (use %s)", strategy, g.Type, strings.Join(allowed, ", "))
			continue
		}
		if u.Force && strategy != InPlace {
			v.fail(f+".force", "applies to the in-place strategy of a managed group only")
		}
		if u.Green != nil && strategy != BlueGreen {
			v.fail(f+".green", "applies to strategy blue-green only")
		}
		if u.Refresh != nil && strategy != InstanceRefresh {
			v.fail(f+".refresh", "applies to strategy instance-refresh only")
		}
		switch u.AMI {
		case "", "latest", "id":
			if u.AMI != "" && strategy != Drift {
				v.fail(f+".ami", "applies to strategy drift only")
			}
		default:
			v.fail(f+".ami", "%q is not latest or id", u.AMI)
		}
		if strategy == BlueGreen {
			gr := u.Green
			if gr == nil || gr.Name == "" {
				v.fail(f+".green.name", "missing: name the new node group, e.g. %s-green", g.Name)
				continue
			}
			if names[gr.Name] {
				v.fail(f+".green.name", "%q is already a node group", gr.Name)
			}
			names[gr.Name] = true
			v.groupZones(f+".green.zones", gr.Zones, zones)
			for j, t := range gr.InstanceTypes {
				if _, ok := v.types[t]; !ok {
					v.fail(fmt.Sprintf("%s.green.instanceTypes[%d]", f, j), "%q is not in the instance-type catalog (add it under spec.instanceTypes)", t)
				}
			}
			v.greenImage(f+".green.instanceTypes", g, gr)
			if gr.Desired != nil && *gr.Desired < 0 {
				v.fail(f+".green.desired", "cannot be negative")
			} else if gr.Desired != nil && *gr.Desired > MaxNodes {
				v.fail(f+".green.desired", "%d is more than the %d nodes a cluster may have (Kubernetes is designed for at most 5,000 nodes; Considerations for large clusters)", *gr.Desired, MaxNodes)
			}
		}
		if r := u.Refresh; r != nil {
			v.refreshPreferences(f+".refresh", r)
		}
	}
}

// refreshPreferences checks what StartInstanceRefresh validates
// (semantics.md §C, §F.10) and that the refresh replaces every instance, as
// a hop needs.
func (v *validator) refreshPreferences(f string, r *RefreshPreferences) {
	if err := r.ASG().Validate(); err != nil {
		v.fail(f, "%v", err)
		return
	}
	if n := len(r.CheckpointPercentages); n > 0 && r.CheckpointPercentages[n-1] != 100 {
		v.fail(f+".checkpointPercentages", "the last checkpoint must be 100: a hop replaces every instance (a lower one is a partial refresh)")
	}
}

// ASG converts the preferences for the Auto Scaling twin.
func (r *RefreshPreferences) ASG() instancerefresh.Preferences {
	p := instancerefresh.Preferences{
		MinHealthyPercentage:  r.MinHealthyPercentage,
		MaxHealthyPercentage:  r.MaxHealthyPercentage,
		CheckpointPercentages: r.CheckpointPercentages,
		SkipMatching:          r.SkipMatching,
	}
	if r.InstanceWarmup != nil {
		d := r.InstanceWarmup.Duration
		p.InstanceWarmup = &d
	}
	if r.CheckpointDelay != nil {
		d := r.CheckpointDelay.Duration
		p.CheckpointDelay = &d
	}
	return p
}

func (v *validator) addons() {
	seen := map[string]bool{}
	for i, a := range v.sc.Spec.Addons {
		f := fmt.Sprintf("spec.addons[%d]", i)
		wl := addon.Workloads(a.Name)
		if wl == nil {
			v.fail(f+".name", "%q is not an add-on the twin models (vpc-cni, coredns, kube-proxy, aws-ebs-csi-driver)", a.Name)
			continue
		}
		if seen[a.Name] {
			v.fail(f+".name", "%q is listed twice", a.Name)
		}
		seen[a.Name] = true
		if !strings.HasPrefix(a.Version, "v") || !strings.Contains(a.Version, ".") {
			v.fail(f+".version", "%q is not an add-on version such as v1.30.14-eksbuild.28", a.Version)
		}
		for _, w := range wl {
			if _, found := v.sc.Find(w.Kind, w.Namespace, w.Name); !found {
				v.fail(f+".name", "add-on %s runs as %s %s/%s, which is not in the scenario's manifests", a.Name, w.Kind, w.Namespace, w.Name)
			}
		}
		for _, minor := range sortedKeys(a.Versions) {
			if err := checkVersion(minor); err != nil {
				v.fail(f+".versions", "%s: %v", minor, err)
			}
		}
	}
}

func (v *validator) probe() {
	p := v.sc.Spec.Probe
	if p == nil {
		return
	}
	if p.Name == "" {
		v.fail("spec.probe.name", "missing (e.g. ui)")
	}
	if len(p.Requires) == 0 {
		v.fail("spec.probe.requires", "list the workloads a request passes through, e.g. {kind: Deployment, namespace: ui, name: ui}")
	}
	for i, w := range p.Requires {
		v.workloadRef(fmt.Sprintf("spec.probe.requires[%d]", i), w)
	}
}

// workloadRef checks a reference to a Deployment, StatefulSet or DaemonSet
// of the scenario's manifests.
func (v *validator) workloadRef(f string, w WorkloadRef) {
	switch w.Kind {
	case "Deployment", "StatefulSet", "DaemonSet":
	default:
		v.fail(f+".kind", "%q is not Deployment, StatefulSet or DaemonSet", w.Kind)
		return
	}
	if _, ok := v.sc.Find(w.Kind, nsOrDefault(w.Namespace), w.Name); !ok {
		v.fail(f+".name", "%s %s/%s is not in the scenario's manifests (%s)", w.Kind, nsOrDefault(w.Namespace), w.Name, v.existing(w.Kind))
	}
}

func (v *validator) upgrade() {
	u := v.sc.Spec.Upgrade
	if u == nil {
		return
	}
	if u.To != "" {
		if err := checkVersion(u.To); err != nil {
			v.fail("spec.upgrade.to", "%v", err)
		} else if cur, err := kubeversion.Parse(v.sc.Spec.Cluster.Version); err == nil {
			if to, _ := kubeversion.Parse(u.To); !cur.Less(to) {
				v.fail("spec.upgrade.to", "%s is not newer than spec.cluster.version %s", to, cur)
			}
		}
	}
	switch u.Precondition {
	case "", "strict", "relaxed":
	default:
		v.fail("spec.upgrade.precondition", "%q is not strict or relaxed", u.Precondition)
	}
	groups := map[string]bool{}
	for _, g := range v.sc.Spec.NodeGroups {
		groups[g.Name] = true
	}
	seen := map[string]bool{}
	for i, name := range u.Order {
		f := fmt.Sprintf("spec.upgrade.order[%d]", i)
		if !groups[name] {
			v.fail(f, "%q is not a node group of spec.nodeGroups", name)
		}
		if seen[name] {
			v.fail(f, "%q is listed twice", name)
		}
		seen[name] = true
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// greenImage refuses green instance types the blue group's image cannot
// run on — of two architectures, or of another than its amiType or its
// launch template's AMI — as CreateNodegroup refuses the green group
// (nodegroup.ResolveImage) half-way through the upgrade. The green group copies
// the blue's image settings at the new version; the architecture does not
// depend on the version, so the check runs at the cluster's.
func (v *validator) greenImage(f string, blue NodeGroup, gr *GreenGroup) {
	m := blue.Managed
	if m == nil || len(gr.InstanceTypes) == 0 || len(m.InstanceTypes) == 0 || checkVersion(v.sc.Spec.Cluster.Version) != nil {
		return
	}
	first, ok := v.types[gr.InstanceTypes[0]]
	if !ok {
		return
	}
	for j, t := range gr.InstanceTypes {
		if it, ok := v.types[t]; ok && it.Arch != first.Arch {
			v.fail(fmt.Sprintf("%s[%d]", f, j), "%s is %s but %s is %s: a managed node group's instance types share one architecture (EKS CreateNodegroup refuses a mix)", t, it.Arch, first.Name, first.Arch)
			return
		}
	}
	spec := nodegroup.Spec{Name: gr.Name, InstanceTypes: m.InstanceTypes, AMIType: m.AMIType}
	if lt := m.LaunchTemplate; lt != nil {
		spec.LaunchTemplate = &nodegroup.LaunchTemplate{Name: gr.Name, Version: "1", ImageID: lt.ImageID}
	}
	if v.resolveImage(spec) != nil {
		return // the blue group's own image is refused, and reported
	}
	spec.InstanceTypes = gr.InstanceTypes
	if imgErr := v.resolveImage(spec); imgErr != nil {
		v.fail(f, "%s (EKS CreateNodegroup refuses the green group; use instance types of %s's architecture)", imageMessage(imgErr), blue.Name)
	}
}
