package inventory

import (
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// FromScenario inventories a scenario's starting cluster as the twins build
// it (twinbuild.Start): the same nodes, labels and pods `ladder lab up
// --scenario` materializes, read by the same rules as a live cluster.
func FromScenario(sc *scenario.Scenario) (*Inventory, error) {
	snap, err := twinbuild.Start(sc)
	if err != nil {
		return nil, err
	}
	return FromSnapshot(sc.Metadata.Name, snap), nil
}

// FromSnapshot inventories a snapshot of the twin.
func FromSnapshot(name string, snap *twinbuild.Snapshot) *Inventory {
	in := Input{Nodes: snap.Nodes}
	for _, p := range snap.Pods {
		w := Workload{Namespace: p.Pod.Namespace, Kind: p.Workload.Kind, Name: p.Workload.Name}
		if w.Kind == "" {
			w.Kind, w.Name = "Pod", p.Pod.Name
		}
		in.Pods = append(in.Pods, Pod{Pod: p.Pod, Workload: w})
	}
	return Build(Source{Kind: "scenario", Name: name, Cluster: snap.Cluster.Name}, in)
}
