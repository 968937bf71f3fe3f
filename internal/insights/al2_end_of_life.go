package insights

import (
	"fmt"
	"time"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

func init() { Register(al2EndOfLife{}) }

// al2EOLDate is when EKS-optimized AL2 AMIs reached end of support
// (eks-data.md §1d: "AL2 EKS AMIs reached end of support on 2025-11-26,
// and 1.32 is the last Kubernetes version with AL2 AMIs").
var al2EOLDate = time.Date(2025, 11, 26, 0, 0, 0, 0, time.UTC)

// al2EndOfLife finds node groups on Amazon Linux 2 (amiType AL2_*, or AMIs
// of the AL2 family) when the upgrade goes to 1.33 or later: there are no
// AL2 AMIs for those minors (catalog.LastAL2Minor), so the groups cannot
// follow and "an upgrade tool must block 1.33+ while AL2 node groups
// remain" (eks-data.md §1d). ERROR when the next hop is 1.33 or later;
// WARNING when a later hop is, or when the upgrade stays at 1.32 or below
// but AL2 is past its end of support (no more patches).
type al2EndOfLife struct{}

func (al2EndOfLife) Info() Info {
	return Info{
		ID:    "al2-end-of-life",
		Title: "Amazon Linux 2 nodes and Kubernetes 1.33+",
		Help: "EKS publishes no AL2 AMIs for Kubernetes 1.33 and later (1.32 is the last), and AL2 EKS AMIs reached end of support on 2025-11-26. " +
			"ERROR for node groups on AL2 when the next hop is 1.33 or later; WARNING when a later hop is, or when they are past end of support. Move them to AL2023 or Bottlerocket (user data differs).",
		Needs: NeedsCluster,
	}
}

func (al2EndOfLife) Run(in *Input) []Finding {
	c := in.Cluster
	last := kubeversion.MustParse(catalog.LastAL2Minor)
	var out []Finding
	for i := range c.NodeGroups {
		g := &c.NodeGroups[i]
		if g.AMIFamily != catalog.FamilyAL2 {
			continue
		}
		what := fmt.Sprintf("%s runs Amazon Linux 2", groupText(g))
		if g.AMIType != "" && g.AMIType != "CUSTOM" {
			what = fmt.Sprintf("%s runs Amazon Linux 2 (amiType %s)", groupText(g), g.AMIType)
		}
		rec := fmt.Sprintf("Move %s to AL2023 (amiType AL2023_x86_64_STANDARD or AL2023_ARM_64_STANDARD; nodeadm replaces bootstrap.sh in user data) or Bottlerocket — for a managed group, a new node group and a drain of the old one (blue/green) — before the upgrade to %s.", g.Name, last.Next())
		fired := false
		for _, hop := range in.Hops() {
			if !last.Less(hop) {
				continue
			}
			f := c.groupFinding(in.hopSeverity(hop), g,
				fmt.Sprintf("%s: there are no AL2 AMIs for Kubernetes %s (the last are for %s), so the group cannot be upgraded to %s and stays at %s or older — blocking the control plane's next update after it and, three minors on, the skew policy",
					what, hop, last, hop, last), rec)
			out = append(out, in.atHop(f, hop))
			fired = true
			break
		}
		if !fired && !in.Now.Before(al2EOLDate) {
			out = append(out, c.groupFinding(Warning, g,
				fmt.Sprintf("%s: EKS-optimized AL2 AMIs reached end of support on %s (no security patches since), and Kubernetes %s is the last minor with AL2 AMIs",
					what, al2EOLDate.Format(time.DateOnly), last), rec))
		}
	}
	return out
}
