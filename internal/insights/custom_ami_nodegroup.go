package insights

import (
	"fmt"
	"strings"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

func init() { Register(customAMINodegroup{}) }

// customAMINodegroup finds node groups whose AMI does not move with the
// upgrade: managed node groups whose launch template names an AMI
// ("You aren't notified ... when a newer AMI version is available. To
// update ... create a new version of your launch template with an updated
// AMI ID", and version cannot be set for them: semantics.md §B "Custom
// launch template / AMI"), and self-managed groups, whose launch template
// is theirs to change. WARNING: their nodes keep their kubelet until the
// template changes, and the next hop's precondition (managed groups at the
// control plane's minor) then refuses the update; ERROR when the AMI is
// already beyond the skew policy at the next hop.
type customAMINodegroup struct{}

func (customAMINodegroup) Info() Info {
	return Info{
		ID:    "custom-ami-nodegroup",
		Title: "Node groups whose AMI is pinned in a launch template",
		Help: "A managed node group whose launch template names an AMI (amiType CUSTOM) is not moved by UpdateNodegroupVersion's version: its nodes keep their AMI until a new launch template version names an AMI built for the new minor. " +
			"Self-managed groups are the same, through their launch template and an instance refresh. WARNING (the hop after next is refused while a managed group trails); ERROR when the AMI is beyond the kubelet skew policy at the next hop.",
		Needs: NeedsCurrent | NeedsCluster,
	}
}

func (customAMINodegroup) Run(in *Input) []Finding {
	c := in.Cluster
	var out []Finding
	for i := range c.NodeGroups {
		g := &c.NodeGroups[i]
		if !(g.Type == GroupCustomAMI || (g.Type == GroupSelfManaged && g.CustomAMI)) {
			continue
		}
		target := in.FirstHop()
		amis := strings.Join(g.AMIs, ", ")
		if amis == "" {
			amis = "its launch template's AMI"
		}
		minor := g.Version
		for _, id := range g.AMIs {
			if a, ok := catalog.LookupAMI(id); ok {
				if m, err := kubeversion.Parse(a.KubernetesMinor); err == nil && (minor.IsZero() || m.Less(minor)) {
					minor = m
				}
				amis = fmt.Sprintf("%s (%s)", id, a.Name)
			}
		}
		sev := Warning
		what := fmt.Sprintf("%s runs %s from launch template %s: the upgrade to %s does not change it, so its nodes keep their kubelet until a new launch template version names an AMI built for %s",
			groupText(g), amis, g.LaunchTemplate, target, target)
		if g.Type == GroupCustomAMI {
			what += fmt.Sprintf(", and the next control-plane update after %s is refused while the group trails it", target)
		}
		if !minor.IsZero() && !kubeversion.KubeletSkewOK(target, minor) {
			sev = Error
			what += fmt.Sprintf("; its AMI is built for %s, beyond the kubelet skew policy at %s", minor, target)
		}
		rec := fmt.Sprintf("After the control-plane update to %s, create a launch template version with an AMI for %s%s and %s.",
			target, target, suggestAMI(g, target, in), applyTemplate(g))
		out = append(out, c.groupFinding(sev, g, what, rec))
	}
	return out
}

// suggestAMI names the newest EKS-optimized AMI of the group's family for
// a minor that the embedded catalog knows (an example: the live SSM
// parameter is authoritative).
func suggestAMI(g *NodeGroup, to kubeversion.Minor, in *Input) string {
	family := g.AMIFamily
	if family == "" {
		family = catalog.FamilyAL2023
	}
	arch := catalog.ArchX8664
	for _, id := range g.AMIs {
		if a, ok := catalog.LookupAMI(id); ok {
			arch = a.Arch
		}
	}
	a, err := catalog.ResolveAlias(family+"@latest", to.String(), arch, in.Now)
	if err != nil {
		return ""
	}
	name := a.Name
	if !a.Synthetic {
		name = a.ID + ", " + a.Name
	}
	ssm := fmt.Sprintf("/aws/service/eks/optimized-ami/%s/...", to)
	if family == catalog.FamilyBottlerocket {
		ssm = fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s/...", to)
	}
	return fmt.Sprintf(" (e.g. %s, the newest Ladder's catalog knows on %s; the SSM parameter %s has the current one)", name, in.Now.Format("2006-01-02"), ssm)
}

func applyTemplate(g *NodeGroup) string {
	name, _, _ := strings.Cut(g.LaunchTemplate, ":")
	if g.Type == GroupSelfManaged {
		return "start an instance refresh of the Auto Scaling group"
	}
	return fmt.Sprintf("run aws eks update-nodegroup-version --nodegroup-name %s --launch-template name=%s,version=NEW (no --kubernetes-version: it is refused with a custom AMI)", g.Name, name)
}
