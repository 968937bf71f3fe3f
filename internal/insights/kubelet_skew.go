package insights

import (
	"fmt"
	"strings"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

func init() { Register(kubeletSkew{}) }

// kubeletSkew finds nodes whose kubelet is, or after a hop will be,
// outside the version skew policy (semantics.md §D.4): never newer than
// the API server, at most three minors older (two for kubelets older than
// 1.25). EKS refuses a control-plane update that would leave a kubelet
// beyond it (controlplane.CheckPrecondition; §E "the
// kubelet ≥ N-3 rule as the skew limit"). The arithmetic is
// internal/kubeversion's.
type kubeletSkew struct{}

func (kubeletSkew) Info() Info {
	return Info{
		ID:    "kubelet-skew",
		Title: "Kubelets outside the version skew policy",
		Help: "A kubelet may not be newer than the API server and may trail it by at most three minors (two below 1.25). " +
			"EKS refuses to update the control plane past that, and nodes beyond it are unsupported. ERROR when the skew is broken now or by the next hop; " +
			"WARNING when a later hop of the report breaks it (upgrade the nodes between hops).",
		Needs: NeedsCurrent | NeedsCluster,
	}
}

func (kubeletSkew) Run(in *Input) []Finding {
	c := in.Cluster
	var out []Finding
	for _, g := range c.nodeGroups() {
		byMinor := map[kubeversion.Minor][]string{}
		versions := map[kubeversion.Minor]map[string]bool{}
		var minors []kubeversion.Minor
		for _, n := range c.nodesOf(g.Name) {
			m, err := kubeversion.Parse(n.KubeletVersion)
			if err != nil {
				continue
			}
			if byMinor[m] == nil {
				minors = append(minors, m)
				versions[m] = map[string]bool{}
			}
			byMinor[m] = append(byMinor[m], n.Name)
			versions[m][n.KubeletVersion] = true
		}
		sortMinors(minors)
		for _, m := range minors {
			nodes := byMinor[m]
			what := fmt.Sprintf("%s: %s kubelet %s", groupText(g), plural(len(nodes), "node")+" run", strings.Join(sortedKeys(versions[m]), ", "))
			if len(nodes) == 1 {
				what = fmt.Sprintf("%s: node %s runs kubelet %s", groupText(g), nodes[0], strings.Join(sortedKeys(versions[m]), ", "))
			}
			if !kubeversion.KubeletSkewOK(in.Current, m) {
				out = append(out, c.groupFinding(Error, g,
					fmt.Sprintf("%s, %s the control plane's %s already: the version skew policy allows a kubelet at most %d minors older and never newer",
						what, skewText(in.Current, m), in.Current, kubeversion.MaxKubeletSkew(m)),
					catchUp(g, in.Current, m)))
				continue
			}
			for _, hop := range in.Hops() {
				if kubeversion.KubeletSkewOK(hop, m) {
					continue
				}
				f := c.groupFinding(in.hopSeverity(hop), g,
					fmt.Sprintf("%s, %s Kubernetes %s: after the control plane goes to %s the version skew policy (at most %d minors) is broken, and EKS refuses that update",
						what, skewText(hop, m), hop, hop, kubeversion.MaxKubeletSkew(m)),
					catchUp(g, hop, m))
				out = append(out, in.atHop(f, hop))
				break
			}
		}
	}
	return out
}

// skewText says how far a kubelet is from an API server: "4 minors
// behind", "1 minor newer than".
func skewText(apiserver, kubelet kubeversion.Minor) string {
	d := apiserver.Sub(kubelet)
	if d < 0 {
		return plural(-d, "minor") + " newer than"
	}
	return plural(d, "minor") + " behind"
}

// minKubelet is the oldest kubelet minor the skew policy allows at an API
// server minor.
func minKubelet(apiserver kubeversion.Minor) kubeversion.Minor {
	k := apiserver
	for {
		older := kubeversion.Minor{Major: k.Major, Minor: k.Minor - 1}
		if older.Minor < 0 || !kubeversion.KubeletSkewOK(apiserver, older) {
			return k
		}
		k = older
	}
}

// catchUp says how to bring a group's kubelets within the policy at an API
// server minor, by the group's own upgrade mechanism.
func catchUp(g *NodeGroup, apiserver, kubelet kubeversion.Minor) string {
	if apiserver.Less(kubelet) {
		return fmt.Sprintf("Replace these nodes with nodes of Kubernetes %s or older: a kubelet newer than the API server is unsupported.", apiserver)
	}
	least := minKubelet(apiserver)
	return fmt.Sprintf("Upgrade %s to Kubernetes %s at least (the control plane's minor is best) before the control plane goes to %s: %s.",
		g.Name, least, apiserver, upgradeHow(g, least))
}

// upgradeHow names the mechanism that moves a group's nodes to a minor.
func upgradeHow(g *NodeGroup, to kubeversion.Minor) string {
	switch g.Type {
	case GroupManaged:
		return fmt.Sprintf("aws eks update-nodegroup-version --nodegroup-name %s --kubernetes-version %s", g.Name, to)
	case GroupCustomAMI:
		return fmt.Sprintf("create a launch template version with an AMI built for %s and update the node group to it", to)
	case GroupSelfManaged:
		return fmt.Sprintf("put an AMI built for %s in the launch template and start an instance refresh", to)
	case GroupKarpenter:
		return "select AMIs that follow the control plane (alias …@latest) in its EC2NodeClass so Karpenter drifts the nodes"
	case GroupFargate:
		return "restart the profile's workloads (kubectl rollout restart): new Fargate pods get the control plane's kubelet"
	}
	return "replace its nodes"
}

func sortMinors(ms []kubeversion.Minor) {
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].Less(ms[j-1]); j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}
