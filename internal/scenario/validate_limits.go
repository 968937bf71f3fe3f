package scenario

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/rules/subnet"
)

// The caps of limits.go, checked field by field so the error names the
// field that is too large.

// replicas caps one workload's replicas.
func (v *validator) replicas(o manifest.Object, r *int32) {
	if r != nil && *r > MaxPods {
		v.failObject(o, "spec.replicas", fmt.Sprintf("%d is more than the %d pods a cluster may run", *r, MaxPods),
			"Kubernetes is designed for at most 150,000 pods, see Considerations for large clusters; lower it")
	}
}

// podCount caps the pods of the starting manifests: the replicas of the
// Deployments and StatefulSets (1 when unset, as the API server defaults
// them) and the bare Pods.
func (v *validator) podCount() {
	total := int64(0)
	for _, o := range v.sc.Objects {
		var n int64
		switch obj := o.Object.(type) {
		case *appsv1.Deployment:
			n = replicasOf(obj.Spec.Replicas)
		case *appsv1.StatefulSet:
			n = replicasOf(obj.Spec.Replicas)
		case *corev1.Pod:
			n = 1
		}
		if n > MaxPods {
			return // the workload's own error says it
		}
		total += n
	}
	if total > MaxPods {
		v.fail("spec.manifests", "the manifests ask for %d pods, more than the %d a cluster may run (Kubernetes is designed for at most 150,000; lower the workloads' replicas)", total, MaxPods)
	}
}

func replicasOf(r *int32) int64 {
	if r == nil {
		return 1
	}
	return int64(max(*r, 0))
}

// nodeCount caps the EC2 nodes the node groups start with, and each
// count on the way, so a sum of huge counts cannot overflow; ok is false
// when it refused a count.
func (v *validator) nodeCount() (ok bool) {
	total, ok := 0, true
	add := func(field string, n int) {
		if n > MaxNodes {
			v.fail(field, "%d is more than the %d nodes a cluster may have (Kubernetes is designed for at most 5,000 nodes; Considerations for large clusters)", n, MaxNodes)
			ok = false
			return
		}
		total += max(n, 0)
	}
	for i, g := range v.sc.Spec.NodeGroups {
		f := fmt.Sprintf("spec.nodeGroups[%d]", i)
		switch {
		case g.Type == Karpenter && g.Karpenter != nil:
			for j, n := range g.Karpenter.Nodes {
				add(fmt.Sprintf("%s.karpenter.nodes[%d].count", f, j), n.nodes())
			}
		case g.Type == Managed && g.Managed != nil:
			add(f+".managed.desired", g.Managed.Desired)
			if g.Managed.Max > MaxNodes {
				add(f+".managed.max", g.Managed.Max)
			}
		case g.Type == SelfManaged && g.SelfManaged != nil:
			add(f+".selfManaged.desired", g.SelfManaged.Desired)
			if g.SelfManaged.Max > MaxNodes {
				add(f+".selfManaged.max", g.SelfManaged.Max)
			}
		}
	}
	if total > MaxNodes {
		v.fail("spec.nodeGroups", "the node groups start with %d nodes, more than the %d a cluster may have (Kubernetes is designed for at most 5,000 nodes; lower the counts and desired sizes)", total, MaxNodes)
		return false
	}
	return ok
}

// zoneAddresses refuses a starting cluster whose nodes in one zone are
// more than the twin's subnet of that zone holds (subnet.AddressesPerZone):
// the twin would fail to launch them. A managed or self-managed group
// places its nodes round-robin over its zones, as the twin creates them;
// a Karpenter node is in the zone it names. It runs once nodeCount has
// found every count within MaxNodes, so the sums cannot overflow and a
// count too large is one error, not two.
func (v *validator) zoneAddresses() {
	perZone := map[string]int{}
	spread := func(n int, zones []string) {
		if len(zones) == 0 {
			zones = v.sc.Spec.Cluster.Zones
		}
		if len(zones) == 0 {
			return // refused elsewhere: a group needs a zone
		}
		for i, z := range zones {
			perZone[z] += n / len(zones)
			if i < n%len(zones) {
				perZone[z]++
			}
		}
	}
	for _, g := range v.sc.Spec.NodeGroups {
		switch {
		case g.Type == Karpenter && g.Karpenter != nil:
			for _, n := range g.Karpenter.Nodes {
				perZone[n.Zone] += max(n.nodes(), 0)
			}
		case g.Type == Managed && g.Managed != nil:
			spread(max(g.Managed.Desired, 0), g.Managed.Zones)
		case g.Type == SelfManaged && g.SelfManaged != nil:
			spread(max(g.SelfManaged.Desired, 0), g.SelfManaged.Zones)
		}
	}
	free := 0
	for _, z := range v.sc.Spec.Cluster.Zones {
		if n := perZone[z]; n > subnet.AddressesPerZone {
			v.fail("spec.nodeGroups", "%d nodes start in zone %s, more than the %d addresses of the zone's subnet in the twin; spread the node groups over more zones or lower their counts", n, z, subnet.AddressesPerZone)
		} else {
			free += subnet.AddressesPerZone - n
		}
	}
	// Each Fargate pod runs on a micro-VM of its own, with an address of
	// one of the cluster's zones (semantics.md §E).
	if field, n := v.fargatePods(); n > free {
		v.fail(field, "%d starting pods run on Fargate, each with an address of its own, but the cluster's zones have %d addresses left after the nodes (%d per zone's subnet in the twin); lower the replicas the profiles select or add zones", n, free, subnet.AddressesPerZone)
	}
}

// fargatePods counts the starting pods a Fargate profile selects — those
// of Deployments, StatefulSets and bare Pods in a profile's namespace with
// its labels (the profile's selector, as EKS's webhook matches it);
// DaemonSets never run on Fargate — and names the first profile's field.
func (v *validator) fargatePods() (field string, n int) {
	var selectors []FargateSelector
	for i, g := range v.sc.Spec.NodeGroups {
		if g.Type == Fargate && g.Fargate != nil {
			if field == "" {
				field = fmt.Sprintf("spec.nodeGroups[%d].fargate.selectors", i)
			}
			selectors = append(selectors, g.Fargate.Selectors...)
		}
	}
	if len(selectors) == 0 {
		return "", 0
	}
	selected := func(namespace string, podLabels map[string]string) bool {
		for _, s := range selectors {
			if s.Namespace == namespace && labels.SelectorFromSet(s.Labels).Matches(labels.Set(podLabels)) {
				return true
			}
		}
		return false
	}
	for _, o := range v.sc.Objects {
		ns := o.Object.GetNamespace()
		switch obj := o.Object.(type) {
		case *appsv1.Deployment:
			if selected(ns, obj.Spec.Template.Labels) {
				n += int(replicasOf(obj.Spec.Replicas))
			}
		case *appsv1.StatefulSet:
			if selected(ns, obj.Spec.Template.Labels) {
				n += int(replicasOf(obj.Spec.Replicas))
			}
		case *corev1.Pod:
			if obj.Spec.NodeName == "" && selected(ns, obj.Labels) {
				n++
			}
		}
	}
	return field, n
}

// nodes is how many nodes an entry describes: Count, 1 when it is unset.
func (n ExistingNode) nodes() int {
	if n.Count == 0 {
		return 1
	}
	return n.Count
}
