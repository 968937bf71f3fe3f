package insights

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
)

func init() { Register(drainTimeoutRisk{}) }

// drainTimeoutRisk finds managed node groups whose pods cannot all be
// evicted within EKS's limits, from the drain prediction (drain-blocked):
// an in-place update gives each node 15 minutes, then fails with
// PodEvictionFailure unless the update is forced (semantics.md §B upgrade
// phase step 3; nodegroup.UpgradeDrainLimit); deleting the old group of a
// blue/green upgrade gives each node 5 minutes, then terminates it with
// its pods (nodegroup.DeleteDrainLimit). ERROR when an in-place update fails;
// WARNING when force or the deletion would kill pods a budget protects,
// and when a drain takes more than two thirds of the 15 minutes.
type drainTimeoutRisk struct{}

func (drainTimeoutRisk) Info() Info {
	return Info{
		ID:    "drain-timeout-risk",
		Title: "Managed node groups whose pods cannot all be evicted within EKS's 15 minutes",
		Help: "EKS drains each node of a managed node group for at most 15 minutes during an update, then fails it with PodEvictionFailure (or, with force, deletes the pods); deleting a group (the blue of a blue/green upgrade) waits 5 minutes, then terminates the node. " +
			"From the drain prediction: ERROR when an in-place update would fail; WARNING when force or the deletion would kill pods a budget protects, or a drain takes more than 10 of the 15 minutes. Needs the drain prediction (a scenario or a live cluster).",
		Needs: NeedsCluster | NeedsDrains,
	}
}

func (drainTimeoutRisk) Run(in *Input) []Finding {
	c := in.Cluster
	byGroup := map[string][]NodeDrain{}
	for _, d := range c.Drains {
		if d.GroupType.Managed() {
			byGroup[d.Group] = append(byGroup[d.Group], d)
		}
	}
	names := make([]string, 0, len(byGroup))
	for n := range byGroup {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Finding
	for _, name := range names {
		g := c.Group(name)
		if g == nil {
			g = &NodeGroup{Name: name, Type: GroupManaged}
		}
		var stuck, slow, deleteKills []string
		var pdbs []string
		seenPDB := map[string]bool{}
		for _, d := range byGroup[name] {
			for _, b := range d.Blocks {
				if b.PDB != "" && !seenPDB[b.PDB] && (b.Outcome == "blocked" || b.For >= nodegroup.DeleteDrainLimit) {
					seenPDB[b.PDB] = true
					pdbs = append(pdbs, b.PDB)
				}
				if g.Replacement != nil && b.For >= nodegroup.DeleteDrainLimit {
					deleteKills = append(deleteKills, fmt.Sprintf("%s on %s (held %s by %s)", blockedWho(b), d.Node, dur(b.For), b.PDB))
				}
			}
			switch {
			case !d.Finished && hasBlocked(d):
				var pods []string
				for _, b := range d.Blocks {
					if b.Outcome == "blocked" {
						pods = append(pods, fmt.Sprintf("%s (%s)", blockedWho(b), b.PDB))
					}
				}
				stuck = append(stuck, fmt.Sprintf("%s: %s", d.Node, strings.Join(pods, ", ")))
			case d.Finished && d.Duration > nodegroup.UpgradeDrainLimit*2/3:
				slow = append(slow, fmt.Sprintf("%s takes %s", d.Node, dur(d.Duration)))
			}
		}
		fixPDB := "Let the budgets allow a disruption (more replicas than minAvailable, or maxUnavailable: 1)"
		if len(pdbs) > 0 {
			fixPDB = fmt.Sprintf("Let %s allow a disruption (more replicas than minAvailable, or maxUnavailable: 1)", strings.Join(pdbs, ", "))
		}
		if len(stuck) > 0 && g.Replacement == nil {
			if g.Force {
				out = append(out, c.groupFinding(Warning, g,
					fmt.Sprintf("%s: pods on %s cannot be evicted within EKS's %s — %s; the update is forced, so EKS deletes them after %s per node, without their budget: an outage until their replacements are Ready",
						groupText(g), plural(len(stuck), "node"), dur(nodegroup.UpgradeDrainLimit), strings.Join(stuck, "; "), dur(nodegroup.UpgradeDrainLimit)),
					fixPDB+", so the update needs no force."))
			} else {
				out = append(out, c.groupFinding(Error, g,
					fmt.Sprintf("%s: pods on %s cannot be evicted within EKS's %s — %s: the node group update fails with PodEvictionFailure",
						groupText(g), plural(len(stuck), "node"), dur(nodegroup.UpgradeDrainLimit), strings.Join(stuck, "; ")),
					fixPDB+"; or update with --force, which deletes the pods after 15 minutes regardless of their budget."))
			}
		}
		if len(deleteKills) > 0 {
			out = append(out, c.groupFinding(Warning, g,
				fmt.Sprintf("%s is replaced blue/green by %s: deleting it drains each node for %s, then terminates it regardless of PodDisruptionBudgets, and %s",
					groupText(g), g.Replacement.Name, dur(nodegroup.DeleteDrainLimit), strings.Join(deleteKills, "; ")+" would be killed"),
				fixPDB+", or move the pods to "+g.Replacement.Name+" (kubectl drain) before deleting "+g.Name+"."))
		}
		if len(slow) > 0 {
			out = append(out, c.groupFinding(Warning, g,
				fmt.Sprintf("%s: drains come close to EKS's %s limit — %s", groupText(g), dur(nodegroup.UpgradeDrainLimit), strings.Join(slow, "; ")),
				"Shorten what the drain waits for (readiness of the replacements, terminationGracePeriodSeconds) so a slower day does not fail the update."))
		}
	}
	return out
}

func hasBlocked(d NodeDrain) bool {
	for _, b := range d.Blocks {
		if b.Outcome == "blocked" {
			return true
		}
	}
	return false
}

func blockedWho(b DrainBlock) string {
	if b.Workload != "" {
		return b.Workload + " pod " + b.Pod
	}
	return "pod " + b.Pod
}
