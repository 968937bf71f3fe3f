package mng_test

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
)

// Describe is what DescribeNodegroup reads on every poll of a wait: the
// group's configuration and state as Status shows them — with the fields
// CreateNodegroup set (subnets' zones, labels, taints, instance types) —
// without the nodes and updates that grow with the group; a caller
// changing what it got does not change the group.
func TestDescribeIsStatusWithoutNodesAndUpdates(t *testing.T) {
	tw := newTwin(t)
	spec := group("blue", 2, atVersion("1.30"), inZones("us-west-2a", "us-west-2b"))
	spec.Labels = map[string]string{"type": "OrdersMng"}
	spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "OrdersApp", Effect: corev1.TaintEffectNoSchedule}}
	tw.adopt(spec)
	tw.Settle()
	if err := tw.mng.UpdateVersion("blue", nodegroup.UpdateRequest{Version: "1.31"}, nil); err != nil {
		t.Fatalf("UpdateVersion: %v", err)
	}
	d, ok := tw.mng.Describe("blue")
	if !ok {
		t.Fatal("Describe: no group blue")
	}
	st := tw.status("blue")
	if d.Nodes != nil || d.Updates != nil {
		t.Errorf("Describe carries %d nodes and %d updates", len(d.Nodes), len(d.Updates))
	}
	st.Nodes, st.Updates = nil, nil
	if !reflect.DeepEqual(d, st) {
		t.Errorf("Describe %+v\nStatus   %+v", d, st)
	}
	if !reflect.DeepEqual(d.Zones, spec.Zones) || d.Labels["type"] != "OrdersMng" || len(d.Taints) != 1 || !reflect.DeepEqual(d.InstanceTypes, spec.InstanceTypes) {
		t.Errorf("Describe: zones %v, labels %v, taints %v, instance types %v; want the group's", d.Zones, d.Labels, d.Taints, d.InstanceTypes)
	}
	d.Labels["type"] = "changed"
	d.Zones[0] = "changed"
	if again, _ := tw.mng.Describe("blue"); again.Labels["type"] != "OrdersMng" || again.Zones[0] != "us-west-2a" {
		t.Errorf("a caller's change reached the group: %v %v", again.Labels, again.Zones)
	}
	if _, ok := tw.mng.Describe("no-such-group"); ok {
		t.Errorf("Describe of an unknown group: ok")
	}
}
