package insights

import (
	"fmt"
	"strings"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/addon"
)

func init() { Register(addonCompatibility{}) }

// addonCompatibility compares each installed EKS add-on with the newest
// build the embedded, dated table (internal/catalog/addons.csv, eks-data.md
// §1c) knows for each hop. EKS does not update add-ons with the control
// plane, and updates them one minor version at a time (semantics.md §E;
// addon.CheckUpdate): an add-on several minors behind takes
// several updates. WARNING; ERROR for a kube-proxy add-on beyond the skew
// policy at the next hop (§D.4). Add-ons the table has no row for
// (aws-ebs-csi-driver, vpc-cni from 1.34) are not judged: only
// DescribeAddonVersions knows them.
type addonCompatibility struct{}

func (addonCompatibility) Info() Info {
	return Info{
		ID:    "addon-compatibility",
		Title: "EKS add-ons to update with each hop",
		Help: "EKS does not update add-ons when it updates the control plane, and an add-on moves one minor version per update. " +
			"Each installed add-on is compared with the newest build Ladder's dated table knows for each hop (kube-proxy, coredns, vpc-cni): WARNING with the updates to make, in order; " +
			"ERROR when the kube-proxy add-on would be beyond the version skew policy at the next hop. Add-ons without table rows (aws-ebs-csi-driver) need DescribeAddonVersions.",
		Needs: NeedsCurrent | NeedsCluster,
	}
}

func (addonCompatibility) Run(in *Input) []Finding {
	c := in.Cluster
	var out []Finding
	for _, a := range c.Addons {
		installed, err := addon.ParseVersion(a.Version)
		if err != nil {
			continue
		}
		if a.Name == "kube-proxy" {
			proxy := kubeversion.Minor{Major: installed.Major, Minor: installed.Minor}
			first := in.FirstHop()
			if why := kubeversion.KubeProxySkew(first, first, proxy); why != "" && first.Sub(proxy) > 0 {
				out = append(out, c.finding(Error, "Addon", "", a.Name,
					fmt.Sprintf("the kube-proxy add-on %s is built for %s: after the control plane goes to %s, %s", a.Version, proxy, first, why),
					fmt.Sprintf("Update kube-proxy one minor at a time to the control plane's %s (%s) before the hop.", in.Current, latestAddon("kube-proxy", in.Current))))
				continue
			}
		}
		var steps []string
		var firstHop kubeversion.Minor
		cur := installed
		for _, hop := range in.Hops() {
			row, ok := catalog.LatestAddon(a.Name, hop.String())
			if !ok {
				break // no data for this hop (nor, usually, later ones)
			}
			latest, err := addon.ParseVersion(row.Version)
			if err != nil || latest.Compare(cur) <= 0 {
				continue
			}
			if firstHop.IsZero() {
				firstHop = hop
			}
			path := minorPath(a.Name, cur, latest)
			steps = append(steps, fmt.Sprintf("at %s: %s", hop, strings.Join(path, " → ")))
			cur = latest
		}
		if len(steps) == 0 {
			continue
		}
		many := ""
		if n := strings.Count(strings.Join(steps, " "), "→"); n > len(steps) {
			many = fmt.Sprintf(" (%d updates: one minor version at a time)", n)
		}
		f := c.finding(Warning, "Addon", "", a.Name,
			fmt.Sprintf("EKS add-on %s runs %s; EKS does not update it with the control plane, and the newest known builds are newer — update it after each control-plane update%s: %s",
				a.Name, a.Version, many, strings.Join(steps, "; ")),
			fmt.Sprintf("After each control-plane update, run aws eks update-addon --addon-name %s --addon-version VERSION --resolve-conflicts PRESERVE with the versions above (check aws eks describe-addon-versions --kubernetes-version %s --addon-name %s for the current list).",
				a.Name, firstHop, a.Name))
		out = append(out, in.atHop(f, firstHop))
	}
	return out
}

// minorPath lists the updates from one add-on version to another, one
// minor at a time: "v1.28.15-eksbuild.31 → v1.29.15-eksbuild.16 →
// v1.30.14-eksbuild.28" (kube-proxy's minors are Kubernetes minors, so the
// table names each step; other add-ons' steps are "v1.12.x").
func minorPath(name string, from, to addon.Version) []string {
	path := []string{from.String()}
	if from.Major == to.Major {
		for m := from.Minor + 1; m < to.Minor; m++ {
			step := fmt.Sprintf("v%d.%d.x", from.Major, m)
			if name == "kube-proxy" {
				if row, ok := catalog.LatestAddon(name, fmt.Sprintf("%d.%d", from.Major, m)); ok {
					step = row.Version
				}
			}
			path = append(path, step)
		}
	}
	return append(path, to.String())
}
