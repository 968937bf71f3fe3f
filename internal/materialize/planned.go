package materialize

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// Planned is what Apply creates for a scenario, read without an API
// server: the twin's starting cluster, its nodes as KWOK nodes, and every
// other object in apply order. Pods are not among them: the API server's
// controllers make those.
type Planned struct {
	Snapshot *twinbuild.Snapshot
	Nodes    []*corev1.Node
	Objects  []*unstructured.Unstructured
}

// Plan lists what Apply would create for sc. sc must have passed Validate.
func Plan(sc *scenario.Scenario) (*Planned, error) {
	snap, err := twinbuild.Start(sc)
	if err != nil {
		return nil, err
	}
	docs, _, err := documents(sc)
	if err != nil {
		return nil, err
	}
	p, err := planObjects(snap, docs)
	if err != nil {
		return nil, err
	}
	out := &Planned{Snapshot: snap}
	for _, n := range snap.Nodes {
		out.Nodes = append(out.Nodes, KWOKNode(n))
	}
	for _, d := range p.docs {
		out.Objects = append(out.Objects, d.obj)
	}
	return out, nil
}
