package insights

import (
	"fmt"
	"strings"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

func init() { Register(kubeProxySkew{}) }

// kubeProxySkew finds kube-proxies outside the version skew policy
// (semantics.md §D.4, internal/kubeversion.KubeProxySkew): not newer than
// the API server, at most three minors older (two below 1.25), and at most
// three minors from the kubelet beside it — for the kube-proxy each node
// runs now, against each hop's API server, and for the kube-proxy add-on
// the hop updates to (its minor is the hop's) against every kubelet, the
// rule the twin's UpdateAddon enforces (internal/rules/addon.CheckUpdate).
type kubeProxySkew struct{}

func (kubeProxySkew) Info() Info {
	return Info{
		ID:    "kube-proxy-skew",
		Title: "kube-proxy outside the version skew policy",
		Help: "kube-proxy may not be newer than the API server, may trail it by at most three minors (two below 1.25), and may be at most three minors from the kubelet on its node. " +
			"Checked for the kube-proxy each node runs against each hop, and for the kube-proxy add-on version of each hop against every kubelet (EKS updates the add-on, not the nodes). " +
			"ERROR when it breaks now or at the next hop; WARNING at a later hop.",
		Needs: NeedsCurrent | NeedsCluster,
	}
}

func (kubeProxySkew) Run(in *Input) []Finding {
	c := in.Cluster
	var out []Finding
	type pair struct{ kubelet, proxy kubeversion.Minor }
	for _, g := range c.nodeGroups() {
		nodes := map[pair][]Node{}
		var pairs []pair
		for _, n := range c.nodesOf(g.Name) {
			k, err1 := kubeversion.Parse(n.KubeletVersion)
			p, err2 := kubeversion.Parse(n.KubeProxyVersion)
			if err1 != nil || err2 != nil {
				continue
			}
			pr := pair{k, p}
			if nodes[pr] == nil {
				pairs = append(pairs, pr)
			}
			nodes[pr] = append(nodes[pr], n)
		}
		for _, pr := range pairs {
			ns := nodes[pr]
			who := fmt.Sprintf("%s: %s kube-proxy %s beside kubelet %s", groupText(g), plural(len(ns), "node")+" run", ns[0].KubeProxyVersion, ns[0].KubeletVersion)
			if len(ns) == 1 {
				who = fmt.Sprintf("%s: node %s runs kube-proxy %s beside kubelet %s", groupText(g), ns[0].Name, ns[0].KubeProxyVersion, ns[0].KubeletVersion)
			}
			if why := kubeversion.KubeProxySkew(in.Current, pr.kubelet, pr.proxy); why != "" {
				out = append(out, c.groupFinding(Error, g, fmt.Sprintf("%s: %s, already at the control plane's %s", who, why, in.Current),
					fmt.Sprintf("Update the kube-proxy add-on to a %s build (%s) and bring the group's kubelets within three minors of it.", in.Current, latestAddon("kube-proxy", in.Current))))
				continue
			}
			for _, hop := range in.Hops() {
				if why := kubeversion.KubeProxySkew(hop, pr.kubelet, pr.proxy); why != "" {
					f := c.groupFinding(in.hopSeverity(hop), g,
						fmt.Sprintf("%s: after the control plane goes to %s, %s", who, hop, why),
						fmt.Sprintf("Update the kube-proxy add-on one minor at a time as the control plane moves (to %s at %s), so it never trails the API server by more than the policy allows.", latestAddon("kube-proxy", hop), hop))
					out = append(out, in.atHop(f, hop))
					break
				}
			}
		}
	}
	// The add-on update of each hop: its kube-proxy (the hop's minor)
	// against every kubelet that is still there when it rolls out.
	if a, ok := c.Addon("kube-proxy"); ok {
		for _, hop := range in.Hops() {
			var far []string
			oldest := kubeversion.Minor{}
			for _, n := range c.Nodes {
				k, err := kubeversion.Parse(n.KubeletVersion)
				if err != nil {
					continue
				}
				if why := kubeversion.KubeProxySkew(hop, k, hop); why != "" {
					far = append(far, n.Name)
					if oldest.IsZero() || k.Less(oldest) {
						oldest = k
					}
				}
			}
			if len(far) == 0 {
				continue
			}
			f := c.finding(in.hopSeverity(hop), "Addon", "", "kube-proxy",
				fmt.Sprintf("the kube-proxy add-on (%s) updated for %s (%s) would be %s newer than kubelet %s on %s (%s), beyond the skew policy: the add-on update is refused, and kube-proxy stays behind the control plane",
					a.Version, hop, latestAddon("kube-proxy", hop), plural(hop.Sub(oldest), "minor"), oldest, plural(len(far), "node"), strings.Join(firstN(far, 3), ", ")),
				fmt.Sprintf("Upgrade those nodes to %s or later before updating kube-proxy for %s.", kubeversion.Minor{Major: hop.Major, Minor: hop.Minor - kubeversion.MaxKubeletSkew(hop)}, hop))
			out = append(out, in.atHop(f, hop))
			break
		}
	}
	return out
}

// latestAddon is the newest build of an add-on the embedded table knows
// for a minor, or "the latest build" when it knows none.
func latestAddon(addon string, minor kubeversion.Minor) string {
	if v, ok := catalog.LatestAddon(addon, minor.String()); ok {
		return v.Version
	}
	return "the latest " + minor.String() + " build"
}

// firstN returns the first n strings, with "…" when there are more.
func firstN(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(append([]string(nil), s[:n]...), fmt.Sprintf("and %d more", len(s)-n))
}
