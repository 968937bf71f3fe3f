package insights

import (
	"fmt"
	"strings"
	"time"
)

func init() { Register(drainBlocked{}) }

// drainBlocked is the drain prediction: every EC2 node of the cluster is
// drained on its own from the starting state in the twin
// (internal/drainpredict.Scenario: kubectl drain --ignore-daemonsets
// --delete-emptydir-data --force through the Eviction API, a 429 retried
// every 5 s, semantics.md §D.3), and each pod that held a drain up is
// reported with the PodDisruptionBudget and for how long, as are the pods
// whose replacements fit no node. ERROR when a pod is still refused at the
// drain's limit (15 minutes for a managed node group, semantics.md §B; an
// hour for the others, whose drains wait forever) or its eviction fails;
// WARNING when a budget only delays the drain, or when pods go Pending.
type drainBlocked struct{}

func (drainBlocked) Info() Info {
	return Info{
		ID:    "drain-blocked",
		Title: "Pods that block or outlive a node's drain (predicted in the twin)",
		Help: "Each node is drained on its own, from the starting state, in Ladder's twin of the cluster — the Eviction API, PodDisruptionBudgets, the scheduler, Karpenter — and each pod whose eviction is refused is reported with its budget and how long it held the drain; " +
			"pods whose replacements fit no node (taints, selectors, an EBS volume's zone) are reported too. ERROR when a pod is still refused at the limit (15 minutes for a managed node group, an hour otherwise) " +
			"or its eviction fails; WARNING when a budget only delays the drain or pods go Pending. Needs the drain prediction (a scenario or a live cluster).",
		Needs: NeedsCluster | NeedsDrains,
	}
}

func (drainBlocked) Run(in *Input) []Finding {
	c := in.Cluster
	var out []Finding
	for _, d := range c.Drains {
		g := c.Group(d.Group)
		where := fmt.Sprintf("node %s (%s, %s)", d.Node, d.Group, d.Zone)
		if g != nil {
			where = fmt.Sprintf("node %s (%s, %s)", d.Node, groupText(g), d.Zone)
		}
		for _, b := range d.Blocks {
			who := b.Pod
			if b.Workload != "" {
				who = fmt.Sprintf("pod %s of %s", b.Pod, b.Workload)
			}
			by := "PodDisruptionBudget " + b.PDB
			if strings.Contains(b.PDB, ",") {
				by = "PodDisruptionBudgets " + b.PDB
			}
			switch b.Outcome {
			case "blocked":
				consequence := "the drain never finishes"
				if d.GroupType.Managed() {
					consequence = "EKS gives up after 15 minutes and the node group update fails with PodEvictionFailure"
				}
				out = append(out, c.finding(Error, "Node", "", d.Node,
					fmt.Sprintf("draining %s: every eviction of %s is refused by %s for the whole %s (%s): %s",
						where, who, by, dur(b.For), b.Message, consequence),
					fmt.Sprintf("Let %s allow a disruption while its pods are healthy: more replicas than minAvailable, or maxUnavailable: 1; or move the pod off %s first.", by, d.Group)))
			case "failed":
				out = append(out, c.finding(Error, "Node", "", d.Node,
					fmt.Sprintf("draining %s: the eviction of %s fails (%s), so the drain fails", where, who, b.Message),
					"Make exactly one PodDisruptionBudget select the pod (the Eviction API refuses pods with two), then drain again."))
			default:
				out = append(out, c.finding(Warning, "Node", "", d.Node,
					fmt.Sprintf("draining %s: %s is held by %s for %s before its eviction is allowed (%s)", where, who, by, dur(b.For), b.Message),
					"Nothing is broken: the budget waits for the pods it counts to be Ready elsewhere. Faster readiness, or more replicas, shortens the wait."))
			}
		}
		if d.Error != "" && len(d.Blocks) == 0 {
			out = append(out, c.finding(Error, "Node", "", d.Node,
				fmt.Sprintf("draining %s fails: %s", where, d.Error), "Fix what the drain names, then drain again."))
		}
		for _, p := range d.Pending {
			who := p.Pod
			if p.Workload != "" {
				who = fmt.Sprintf("%s (%s)", p.Workload, p.Pod)
			}
			zones := ""
			if len(p.VolumeZones) > 0 {
				zones = fmt.Sprintf("; its volumes bind it to %s", strings.Join(p.VolumeZones, ", "))
			}
			rec := "Give the pod somewhere to go before the drain: a node in its zone that matches its selectors and tolerations (an in-place managed update launches the new node in the old one's zone first), or relax its constraints."
			out = append(out, c.finding(Warning, "Node", "", d.Node,
				fmt.Sprintf("draining %s leaves %s Pending: %s%s", where, who, strings.TrimSuffix(p.Reason, "."), zones), rec))
		}
	}
	return out
}

// dur prints a predicted duration: "15m", "2m35s", "1h", "5s".
func dur(d time.Duration) string {
	d = d.Round(time.Second)
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
