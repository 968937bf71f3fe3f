package insights

import (
	"fmt"
	"strings"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/controlplane"
)

func init() { Register(controlPlaneHop{}) }

// controlPlaneHop checks the control plane's path: EKS updates it one
// minor at a time, and UpdateClusterVersion requires every managed node
// group at the control plane's minor (semantics.md §E, the API reference's
// rule, internal/rules/controlplane.CheckPrecondition, which the twin
// enforces too). ERROR for a managed group behind the control plane
// now (the next update is refused); WARNING, per later hop, for the
// groups that must catch up between hops, and for Fargate nodes behind
// the control plane (the user guide asks for them at its minor).
type controlPlaneHop struct{}

func (controlPlaneHop) Info() Info {
	return Info{
		ID:    "control-plane-hop",
		Title: "Node groups that must catch up before a control-plane hop",
		Help: "EKS updates the control plane one minor at a time, and UpdateClusterVersion requires every managed node group at the control plane's minor. " +
			"ERROR when a managed node group is behind the control plane now (the next update is refused); WARNING for each later hop of the report, naming the groups to upgrade in between, " +
			"and for Fargate pods still on an older kubelet than the control plane.",
		Needs: NeedsCurrent | NeedsCluster,
	}
}

func (controlPlaneHop) Run(in *Input) []Finding {
	c := in.Cluster
	var out []Finding
	first := in.FirstHop()
	var managed []string
	for i := range c.NodeGroups {
		g := &c.NodeGroups[i]
		switch {
		case g.Type.Managed():
			managed = append(managed, g.Name)
			if g.Version.IsZero() {
				continue
			}
			nodes := controlplane.DataPlane{NodeGroups: map[string]kubeversion.Minor{g.Name: g.Version}}
			if err := controlplane.CheckPrecondition(in.Current, first, nodes, controlplane.Strict); err != nil {
				f := c.groupFinding(Error, g,
					fmt.Sprintf("%s is at Kubernetes %s, behind the control plane's %s: UpdateClusterVersion to %s is refused — %v", groupText(g), g.Version, in.Current, first, err),
					fmt.Sprintf("Upgrade %s to %s first: %s.", g.Name, in.Current, upgradeHow(g, in.Current)))
				out = append(out, f)
			}
		case g.Type == GroupFargate:
			var behind []string
			oldest := in.Current
			for _, n := range c.nodesOf(g.Name) {
				if k, err := kubeversion.Parse(n.KubeletVersion); err == nil && k.Less(in.Current) {
					behind = append(behind, n.Name)
					if k.Less(oldest) {
						oldest = k
					}
				}
			}
			if len(behind) > 0 {
				out = append(out, c.groupFinding(Warning, g,
					fmt.Sprintf("%s: %s on kubelet %s, behind the control plane's %s; EKS asks for Fargate nodes at the control plane's minor before its update, and supports one minor of skew for them",
						groupText(g), plural(len(behind), "Fargate pod")+" run", oldest, in.Current),
					"Restart the profile's workloads (kubectl rollout restart) before the control-plane update: new Fargate pods get the control plane's kubelet."))
			}
		}
	}
	hops := in.Hops()
	for i, hop := range hops {
		if i == 0 || len(managed) == 0 {
			continue
		}
		before := hops[i-1]
		f := c.finding(Warning, "Cluster", "", c.Name,
			fmt.Sprintf("EKS updates the control plane one minor at a time: before the update from %s to %s, %s must be at %s (%s), after the control plane's update to %s",
				before, hop, plural(len(managed), "managed node group"), before, strings.Join(managed, ", "), before),
			fmt.Sprintf("Plan the hop to %s as control plane → add-ons → every node group at %s; then the hop to %s.", before, before, hop))
		out = append(out, in.atHop(f, hop))
	}
	return out
}
