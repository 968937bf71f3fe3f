package twinbuild

import (
	"fmt"

	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twin/asg"
	"github.com/ladder-eks/ladder/internal/twin/fargate"
)

// The starting nodes of each kind of node group: Karpenter adopts the
// NodeClaims the scenario lists, a managed node group (internal/twin/mng)
// and a self-managed Auto Scaling group (internal/twin/asg) are created
// with their instances already running, and a Fargate profile
// (semantics.md §E) is registered before the manifests are applied, so the
// pods it selects are handed to the Fargate scheduler at admission.

// createNodes starts each node group with the nodes it has at the start.
func (tw *Twin) createNodes() error {
	sc := tw.Scenario
	start := tw.Engine.Now()
	for gi, g := range sc.Spec.NodeGroups {
		switch g.Type {
		case scenario.Karpenter:
			for ni, n := range g.Karpenter.Nodes {
				count := n.Count
				if count == 0 {
					count = 1
				}
				for i := 0; i < count; i++ {
					if _, err := tw.Karpenter.Adopt(g.Karpenter.NodePool, n.InstanceType, n.Zone, n.CapacityType, n.AMI, start.Add(-n.Age.Get(0))); err != nil {
						return fmt.Errorf("%s: spec.nodeGroups[%d].karpenter.nodes[%d]: %v", sc.Path, gi, ni, err)
					}
				}
			}
		case scenario.Managed:
			if err := tw.MNG.Adopt(ManagedSpec(g.Name, g.Managed), g.Managed.Age.Get(0)); err != nil {
				return fmt.Errorf("%s: spec.nodeGroups[%d].managed: %v", sc.Path, gi, err)
			}
		case scenario.SelfManaged:
			if err := tw.ASG.Create(selfManagedSpec(g), g.SelfManaged.Age.Get(0)); err != nil {
				return fmt.Errorf("%s: spec.nodeGroups[%d]: %v", sc.Path, gi, err)
			}
		}
	}
	return nil
}

// ManagedSpec converts a scenario's managed node group for the twin.
func ManagedSpec(name string, m *scenario.ManagedGroup) nodegroup.Spec {
	spec := nodegroup.Spec{
		Name: name, InstanceTypes: m.InstanceTypes, CapacityType: m.CapacityType,
		Desired: m.Desired, Min: m.Min, Max: m.Max, Zones: m.Zones,
		AMIType: m.AMIType, Version: m.Version, ReleaseVersion: m.ReleaseVersion,
		Labels: m.Labels, Taints: m.Taints, UpdateStrategy: m.UpdateStrategy,
	}
	if lt := m.LaunchTemplate; lt != nil {
		spec.LaunchTemplate = &nodegroup.LaunchTemplate{Name: lt.Name, Version: lt.Version, ImageID: lt.ImageID}
	}
	if uc := m.UpdateConfig; uc != nil {
		spec.UpdateConfig = nodegroup.UpdateConfig{MaxUnavailable: uc.MaxUnavailable, MaxUnavailablePercentage: uc.MaxUnavailablePercentage}
	}
	return spec
}

// selfManagedSpec converts a scenario's self-managed node group for the
// twin: its launch template is named after the group and at version 1
// unless the scenario says otherwise.
func selfManagedSpec(g scenario.NodeGroup) asg.Spec {
	s := g.SelfManaged
	spec := asg.Spec{
		Name: g.Name, InstanceType: s.InstanceType, Desired: s.Desired, Min: s.Min, Max: s.Max, Zones: s.Zones,
		LaunchTemplate:  asg.LaunchTemplate{Name: s.LaunchTemplate.Name, Version: s.LaunchTemplate.Version, ImageID: s.LaunchTemplate.ImageID},
		Labels:          s.Labels,
		Taints:          s.Taints,
		TerminationHook: s.TerminationHook,
	}
	if spec.LaunchTemplate.Name == "" {
		spec.LaunchTemplate.Name = g.Name
	}
	if spec.LaunchTemplate.Version == "" {
		spec.LaunchTemplate.Version = "1"
	}
	return spec
}

// addFargateProfiles registers the scenario's Fargate profiles.
func (tw *Twin) addFargateProfiles() error {
	for gi, g := range tw.Scenario.Spec.NodeGroups {
		if g.Type != scenario.Fargate {
			continue
		}
		p := fargate.Profile{Name: g.Name}
		for _, s := range g.Fargate.Selectors {
			p.Selectors = append(p.Selectors, fargate.Selector{Namespace: s.Namespace, Labels: s.Labels})
		}
		if err := tw.Fargate.AddProfile(p); err != nil {
			return fmt.Errorf("%s: spec.nodeGroups[%d]: %v", tw.Scenario.Path, gi, err)
		}
	}
	return nil
}
