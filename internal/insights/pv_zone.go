package insights

import (
	"fmt"
	"slices"
	"strings"
)

func init() { Register(pvZone{}) }

// pvZone finds EBS volumes in a zone where the nodes that replace their
// pods' nodes cannot run: a blue/green replacement group without the zone
// (seed eks-upgrade-workshop §6.2, "EBS PV의 AZ 제약"; builtin scenario
// az-mismatch), or a group — a Karpenter NodePool, a node group whose
// subnets changed — that no longer launches nodes there. An EBS volume
// attaches only in its zone, so the pod stays Pending with "volume node
// affinity conflict". In-place managed updates launch the new nodes in the
// zones of the old (semantics.md §B, scale-up phase), so they are not
// reported. ERROR.
type pvZone struct{}

func (pvZone) Info() Info {
	return Info{
		ID:    "pv-zone",
		Title: "EBS volumes in zones their pods' replacement nodes lack",
		Help: "An EBS volume attaches only in its availability zone. When a node group is replaced by one without that zone (a blue/green green group on other subnets, a NodePool limited to other zones), " +
			"the pod using the volume fits no node after the drain and stays Pending (volume node affinity conflict). ERROR.",
		Needs: NeedsCluster,
	}
}

func (pvZone) Run(in *Input) []Finding {
	c := in.Cluster
	nodeGroup := map[string]string{}
	for _, n := range c.Nodes {
		nodeGroup[n.Name] = n.Group
	}
	var out []Finding
	for _, v := range c.Volumes {
		seen := map[string]bool{}
		for _, node := range v.Nodes {
			g := c.Group(nodeGroup[node])
			if g == nil || seen[g.Name] {
				continue
			}
			seen[g.Name] = true
			users := strings.Join(v.Workloads, ", ")
			if users == "" {
				users = strings.Join(v.Pods, ", ")
			}
			switch {
			case g.Replacement != nil && !slices.Contains(g.Replacement.Zones, v.Zone):
				out = append(out, c.finding(Error, "PersistentVolumeClaim", v.Namespace, v.Claim,
					fmt.Sprintf("PersistentVolumeClaim %s/%s's EBS volume is in %s and used by %s on %s, whose blue/green replacement %s has zones %s only: after %s is drained the pod fits no node (volume node affinity conflict) and stays Pending",
						v.Namespace, v.Claim, v.Zone, users, groupText(g), g.Replacement.Name, strings.Join(g.Replacement.Zones, ", "), g.Name),
					fmt.Sprintf("Create %s with a subnet in %s (the same zones as %s: %s), or move the data to a volume in one of its zones (snapshot, new volume) before the switch; provision EBS with volumeBindingMode: WaitForFirstConsumer.",
						g.Replacement.Name, v.Zone, g.Name, strings.Join(g.Zones, ", "))))
			case g.Replacement == nil && len(g.Zones) > 0 && !slices.Contains(g.Zones, v.Zone):
				out = append(out, c.finding(Error, "PersistentVolumeClaim", v.Namespace, v.Claim,
					fmt.Sprintf("PersistentVolumeClaim %s/%s's EBS volume is in %s and used by %s on %s, which launches new nodes in %s only: once its node there is replaced, the pod fits no node and stays Pending",
						v.Namespace, v.Claim, v.Zone, users, groupText(g), strings.Join(g.Zones, ", ")),
					fmt.Sprintf("Let %s launch nodes in %s again (subnets, or the NodePool's topology.kubernetes.io/zone requirement), or move the data to a volume in one of its zones before the upgrade.", g.Name, v.Zone)))
			}
		}
	}
	return out
}
