package mng_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	"github.com/ladder-eks/ladder/internal/twin/mng"
)

// CreateNodegroup and DeleteNodegroup: the workshop seed §6.2 blue/green
// migration — create green-mng at 1.31, move the workload, delete
// blue-mng.

func TestCreateIsActiveWhenEveryNodeIsReady(t *testing.T) {
	tw := newTwin(t)
	var created error = errNotYet
	if err := tw.mng.Create(group("green-mng", 3, withLabels("type", "OrdersMng")), func(err error) { created = err }); err != nil {
		t.Fatal(err)
	}
	if st := tw.status("green-mng"); st.Status != mng.StatusCreating || !tw.mng.Busy() {
		t.Fatalf("status %s (busy %v) right after CreateNodegroup, want CREATING", st.Status, tw.mng.Busy())
	}
	tw.runUntil(time.Hour, func() bool { return created != errNotYet })
	if tw.mng.Busy() {
		t.Fatal("busy once the group is ACTIVE")
	}
	if created != nil || tw.Eng.Now().Sub(t0) != nodeReadyAfter {
		t.Fatalf("created: %v after %s, want nil after %s (launch + register + ready)", created, tw.Eng.Now().Sub(t0), nodeReadyAfter)
	}
	st := tw.status("green-mng")
	if st.Status != mng.StatusActive || st.Version != kubeversion.MustParse("1.31") || st.AMI != ami131 || len(st.Nodes) != 3 {
		t.Fatalf("status %+v, want ACTIVE at 1.31 on %s with 3 nodes", st, ami131)
	}
	perZone := map[string]int{}
	for _, n := range tw.groupNodes("green-mng") {
		perZone[n.Labels["topology.kubernetes.io/zone"]]++
		if n.Labels["type"] != "OrdersMng" || n.Labels[mng.LabelNodegroupImage] != ami131 {
			t.Errorf("node %s labels %v", n.Name, n.Labels)
		}
	}
	if len(perZone) != 3 {
		t.Errorf("nodes per zone %v, want one in each zone", perZone)
	}
}

var errNotYet = &nodegroup.Error{Code: "not yet"}

func TestCreateRefusals(t *testing.T) {
	for _, c := range []struct {
		name     string
		spec     nodegroup.Spec
		code     string
		contains string
	}{
		{"a version other than the control plane's", group("g", 2, atVersion("1.30")), nodegroup.InvalidParameterException, "only be created at the cluster's Kubernetes version 1.31"},
		{"maxUnavailable above maxSize", group("g", 2, withMaxUnavailable(3)), nodegroup.InvalidParameterException, "higher than maxSize"},
		{"maxUnavailable above the quota", group("g", 2, withMax(200), withMaxUnavailable(101)), nodegroup.InvalidParameterException, "outside 1-100"},
		{"both maxUnavailable and a percentage", group("g", 2, withMaxUnavailable(1), withMaxUnavailablePct(10)), nodegroup.InvalidParameterException, "not both"},
		{"a custom AMI with a version", group("g", 2, atVersion("1.31"), withLaunchTemplate("lt-0123456789abcdef0", "1", ami131)), nodegroup.InvalidParameterException, "can't be specified"},
		{"an unknown instance type", nodegroup.Spec{Name: "g", InstanceTypes: []string{"z9.huge"}, Desired: 1}, nodegroup.InvalidParameterException, "z9.huge"},
		{"a zone outside the cluster", group("g", 1, inZones("eu-west-1a")), nodegroup.InvalidParameterException, "eu-west-1a"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tw := newTwin(t)
			err := tw.mng.Create(c.spec, nil)
			if !nodegroup.IsCode(err, c.code) || !strings.Contains(err.Error(), c.contains) {
				t.Fatalf("err = %v; want %s containing %q", err, c.code, c.contains)
			}
		})
	}
	tw := newTwin(t)
	tw.adopt(group("blue-mng", 1, atVersion("1.30")))
	if err := tw.mng.Create(group("blue-mng", 1), nil); !nodegroup.IsCode(err, nodegroup.ResourceInUseException) {
		t.Fatalf("duplicate name: %v, want ResourceInUseException", err)
	}
}

func TestBlueGreenDeleteDrainsEveryNode(t *testing.T) {
	tw := newTwin(t)
	tw.adopt(group("blue-mng", 3, atVersion("1.30")))
	tw.apply(deployment("orders", 6, "250m"))
	tw.Settle()
	blue := tw.status("blue-mng").Nodes

	created := false
	if err := tw.mng.Create(group("green-mng", 3), func(err error) { created = err == nil }); err != nil {
		t.Fatal(err)
	}
	tw.runUntil(time.Hour, func() bool { return created })

	deleted := false
	if err := tw.mng.Delete("blue-mng", func() { deleted = true }); err != nil {
		t.Fatal(err)
	}
	if st := tw.status("blue-mng"); st.Status != mng.StatusDeleting || st.Desired != 0 || st.Max != 0 {
		t.Fatalf("after DeleteNodegroup: %s desired %d max %d, want DELETING 0 0", st.Status, st.Desired, st.Max)
	}
	start := tw.Eng.Now()
	if !tw.runUntil(time.Hour, func() bool { return deleted }) {
		t.Fatalf("blue-mng not deleted\n%s", tw.dumpLog())
	}
	for _, name := range blue {
		if tw.Kube.Node(name) != nil {
			t.Errorf("blue node %s still exists", name)
		}
		if _, ok := tw.first(mng.ReasonDrainStarted, name); !ok {
			t.Errorf("blue node %s was not drained", name)
		}
	}
	if d := tw.Eng.Now().Sub(start); d >= nodegroup.DeleteDrainLimit {
		t.Errorf("deletion took %s; nothing blocked the drains, so no node should wait for the 5-minute limit", d)
	}
	if len(tw.Kube.Killed()) != 0 {
		t.Errorf("pods killed without eviction: %v", tw.Kube.Killed())
	}
	tw.runUntil(5*time.Minute, func() bool { return false })
	for _, p := range tw.PodsOf("orders") {
		if g, _ := tw.mng.Nodegroup(p.Spec.NodeName); g != "green-mng" {
			t.Errorf("orders pod %s on %q (group %q), want green-mng", p.Name, p.Spec.NodeName, g)
		}
	}
	if st := tw.status("blue-mng"); st.Status != mng.StatusDeleted || len(st.Nodes) != 0 {
		t.Errorf("blue-mng status %s with %d nodes, want DELETED with none", st.Status, len(st.Nodes))
	}
	if v := tw.mng.Versions(); len(v) != 1 || v["green-mng"] != kubeversion.MustParse("1.31") {
		t.Errorf("versions %v, want only green-mng at 1.31", v)
	}
}

func TestDeleteTerminatesABlockedNodeAfterFiveMinutes(t *testing.T) {
	tw, node, pod := pdbBlocked(t)
	if err := tw.mng.Delete("initial", nil); err != nil {
		t.Fatal(err)
	}
	tw.runUntil(time.Hour, func() bool { return tw.status("initial").Status == mng.StatusDeleted })
	drain, _ := tw.first(mng.ReasonDrainStarted, node)
	term, ok := tw.first(mng.ReasonNodeTerminating, node)
	if !ok || term.At.Sub(drain.At) != 5*time.Minute {
		t.Fatalf("termination request %v after the drain began (found %t), want exactly 5m0s", term.At.Sub(drain.At), ok)
	}
	killed := tw.Kube.Killed()
	if len(killed) != 1 || "default/"+killed[0].Name != pod {
		t.Errorf("killed %v, want %s killed with its node", killed, pod)
	}
}
