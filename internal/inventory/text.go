package inventory

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/ladder-eks/ladder/internal/termtext"
)

// WriteJSON writes the inventory as indented JSON (schema: docs/inventory.md).
func (inv *Inventory) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(inv)
}

// WriteText writes the inventory as an operator reads a cluster: one
// kubectl-style table of the node groups, then the workloads each carries.
// Every value is escaped (termtext): names come from the cluster.
func (inv *Inventory) WriteText(w io.Writer) error {
	nodes, pods := 0, 0
	for _, g := range inv.Groups {
		nodes += g.Nodes
		for _, wl := range g.Workloads {
			pods += wl.Pods
		}
	}
	pending := 0
	for _, wl := range inv.Unscheduled {
		pending += wl.Pods
	}
	termtext.Fprintf(w, "%s: %s, %s, %s on them", inv.Source.describe(), plural(len(inv.Groups), "node group"), plural(nodes, "node"), plural(pods, "pod"))
	if pending > 0 {
		termtext.Fprintf(w, ", %d pending", pending)
	}
	fmt.Fprint(w, "\n\n")

	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tTYPE\tNODES\tREADY\tZONES\tINSTANCE-TYPES\tCAPACITY\tKUBELET\tKUBE-PROXY\tAMI")
	for _, g := range inv.Groups {
		termtext.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", g.Name, g.Type, g.Nodes, g.ReadyNodes,
			names(g.Zones), counts(g.InstanceTypes), counts(g.CapacityTypes),
			counts(g.KubeletVersions), counts(g.KubeProxyVersions), counts(g.AMIs))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	for _, g := range inv.Groups {
		termtext.Fprintf(w, "\n%s (%s, %s): %s\n", g.Name, g.Type, plural(g.Nodes, "node"), g.Selector)
		for _, id := range sortedKeys(g.AMINames) {
			termtext.Fprintf(w, "  AMI %s is %s\n", id, g.AMINames[id])
		}
		writeWorkloads(w, g.Workloads, "  no pods")
	}
	if len(inv.Unscheduled) > 0 {
		termtext.Fprintf(w, "\nPENDING (bound to no node)\n")
		writeWorkloads(w, inv.Unscheduled, "")
	}
	return nil
}

func writeWorkloads(w io.Writer, wls []WorkloadPods, none string) {
	if len(wls) == 0 {
		if none != "" {
			fmt.Fprintln(w, none)
		}
		return
	}
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "  NAMESPACE\tKIND\tNAME\tPODS")
	for _, wl := range wls {
		termtext.Fprintf(tw, "  %s\t%s\t%s\t%d\n", wl.Namespace, wl.Kind, wl.Name, wl.Pods)
	}
	_ = tw.Flush()
}

func (s Source) describe() string {
	switch s.Kind {
	case "scenario":
		return fmt.Sprintf("Scenario %s (cluster %s, the twin's starting cluster)", s.Name, s.Cluster)
	default:
		out := "Cluster " + s.Name
		if s.Server != "" {
			out += " (" + s.Server + ")"
		}
		if s.ControlPlane != "" {
			out += fmt.Sprintf(", EKS cluster %s: control plane %s (%s)", s.Cluster, s.ControlPlane, s.ControlPlaneSource)
		}
		return out
	}
}

// names lists a count map's values: "us-west-2a,us-west-2b".
func names(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	return strings.Join(sortedKeys(m), ",")
}

// counts lists a count map's values, with the count of each when there is
// more than one value: "v1.30.14-eks-f69f56f(2),v1.31.14-eks-ecaa3a6(1)".
func counts(m map[string]int) string {
	keys := sortedKeys(m)
	switch len(keys) {
	case 0:
		return "-"
	case 1:
		return keys[0]
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s(%d)", k, m[k])
	}
	return strings.Join(parts, ",")
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
