// Package plan turns a cluster's inventory and a target version into the
// upgrade playbook the seed's workshop follows: hops of one minor each
// (EKS updates one minor at a time, semantics.md §E), and in every hop the
// pre-checks, the control plane, the add-ons, then each node group with its
// own mechanism, so that every node has caught up before the next hop
// (the kubelet skew would otherwise grow past the policy, §D.4).
//
// It is pure: the same plan drives the twin (internal/rehearse) and, later,
// a real cluster.
package plan

import (
	"fmt"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// Inventory is what the plan needs to know about a cluster.
type Inventory struct {
	ControlPlane kubeversion.Minor
	Addons       []Addon
	// Groups in the order the cluster lists them.
	Groups []Group
}

// Addon is an EKS add-on and its version.
type Addon struct {
	Name    string
	Version string
	// Pins are versions to update to, by minor ("1.31"), over the embedded
	// table of latest versions.
	Pins map[string]string
}

// Group is a node group and how it is upgraded.
type Group struct {
	Name, Type, Strategy string
}

// None is the strategy of a group the plan leaves alone.
const None = "none"

// Step kinds.
const (
	PreChecks    = "pre-checks"
	ControlPlane = "control-plane"
	AddonUpdate  = "addon"
	NodeGroup    = "node-group"
)

// Step is one thing to do.
type Step struct {
	Kind string
	// Name is the add-on or node group.
	Name string
	// From and To are versions: minors for the control plane and node
	// groups, add-on versions for add-ons.
	From, To string
	// Strategy is the node group's mechanism.
	Strategy string
	// Note says why an add-on step has nothing to update to.
	Note string
}

// Hop is one minor version.
type Hop struct {
	From, To kubeversion.Minor
	Steps    []Step
}

// Plan is the hops to the target, in order.
type Plan struct {
	Hops []Hop
}

// Make plans the upgrade from the inventory to target. order lists node
// groups to upgrade first, in that order; the others follow in inventory
// order. Groups whose strategy is "none" are left out; an add-on already at
// its version for a hop has no step.
func Make(inv Inventory, target kubeversion.Minor, order []string) (Plan, error) {
	if !inv.ControlPlane.Less(target) {
		return Plan{}, fmt.Errorf("target %s is not newer than the control plane's %s", target, inv.ControlPlane)
	}
	groups, err := ordered(inv.Groups, order)
	if err != nil {
		return Plan{}, err
	}
	versions := map[string]string{}
	for _, a := range inv.Addons {
		versions[a.Name] = a.Version
	}
	var p Plan
	for from := inv.ControlPlane; from.Less(target); from = from.Next() {
		to := from.Next()
		hop := Hop{From: from, To: to}
		hop.Steps = append(hop.Steps,
			Step{Kind: PreChecks, From: from.String(), To: to.String()},
			Step{Kind: ControlPlane, From: from.String(), To: to.String()})
		for _, a := range inv.Addons {
			want, note := addonTarget(a, to.String())
			cur := versions[a.Name]
			switch {
			case want == "":
				hop.Steps = append(hop.Steps, Step{Kind: AddonUpdate, Name: a.Name, From: cur, To: cur, Note: note})
			case want != cur:
				hop.Steps = append(hop.Steps, Step{Kind: AddonUpdate, Name: a.Name, From: cur, To: want})
				versions[a.Name] = want
			}
		}
		for _, g := range groups {
			if g.Strategy == None {
				continue
			}
			hop.Steps = append(hop.Steps, Step{Kind: NodeGroup, Name: g.Name, From: from.String(), To: to.String(), Strategy: g.Strategy})
		}
		p.Hops = append(p.Hops, hop)
	}
	return p, nil
}

// addonTarget is the version an add-on goes to for a minor: the pin, else
// the embedded table's latest. With neither, it says so.
func addonTarget(a Addon, minor string) (version, note string) {
	if v, ok := a.Pins[minor]; ok {
		return v, ""
	}
	if row, ok := catalog.LatestAddon(a.Name, minor); ok {
		return row.Version, ""
	}
	return "", fmt.Sprintf("the embedded add-on table (%s) has no %s version for Kubernetes %s; pin one in spec.addons[].versions", catalog.DataDate, a.Name, minor)
}

func ordered(groups []Group, order []string) ([]Group, error) {
	byName := map[string]Group{}
	for _, g := range groups {
		byName[g.Name] = g
	}
	var out []Group
	taken := map[string]bool{}
	for _, name := range order {
		g, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("order names %q, which is not a node group", name)
		}
		if taken[name] {
			return nil, fmt.Errorf("order names %q twice", name)
		}
		taken[name] = true
		out = append(out, g)
	}
	for _, g := range groups {
		if !taken[g.Name] {
			out = append(out, g)
		}
	}
	return out, nil
}
