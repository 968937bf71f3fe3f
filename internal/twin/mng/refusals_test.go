package mng_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	"github.com/ladder-eks/ladder/internal/twin/mng"
)

// What UpdateNodegroupVersion refuses (semantics.md §B), with EKS's
// exception names.
func TestUpdateRefusals(t *testing.T) {
	lt := func(id, version, image string) *nodegroup.LaunchTemplate {
		return &nodegroup.LaunchTemplate{ID: id, Version: version, ImageID: image}
	}
	for _, c := range []struct {
		name     string
		cp       string
		group    nodegroup.Spec
		req      nodegroup.UpdateRequest
		code     string
		contains string
	}{
		{"version greater than the control plane's", "1.30", group("g", 3, atVersion("1.30")),
			nodegroup.UpdateRequest{Version: "1.31"}, nodegroup.InvalidParameterException, "greater than the cluster's Kubernetes version 1.30"},
		{"downgrade of the Kubernetes version", "1.31", group("g", 3, atVersion("1.31")),
			nodegroup.UpdateRequest{Version: "1.30"}, nodegroup.InvalidParameterException, "can't be rolled back"},
		{"downgrade of the AMI release", "1.30", group("g", 3, atVersion("1.30")),
			nodegroup.UpdateRequest{ReleaseVersion: "1.30.12-20250610"}, nodegroup.InvalidParameterException, "can't be rolled back to an earlier AMI version"},
		{"release of another Kubernetes version", "1.31", group("g", 3, atVersion("1.30")),
			nodegroup.UpdateRequest{Version: "1.30", ReleaseVersion: release131}, nodegroup.InvalidParameterException, "Requested release version 1.31.14-20260320 is not valid for kubernetes version 1.30."},
		{"nothing to do: already at the control plane's newest AMI", "1.30", group("g", 3, atVersion("1.30")),
			nodegroup.UpdateRequest{}, nodegroup.InvalidParameterException, "nothing to update"},
		{"version on a custom-AMI group", "1.31", group("custom-Y", 3, withLaunchTemplate("lt-0123456789abcdef0", "1", ami130)),
			nodegroup.UpdateRequest{Version: "1.31"}, nodegroup.InvalidParameterException, "version and releaseVersion can't be specified"},
		{"releaseVersion on a custom-AMI group", "1.31", group("custom-Y", 3, withLaunchTemplate("lt-0123456789abcdef0", "1", ami130)),
			nodegroup.UpdateRequest{ReleaseVersion: release131}, nodegroup.InvalidParameterException, "version and releaseVersion can't be specified"},
		{"launch template on a group created without one", "1.31", group("g", 3, atVersion("1.30")),
			nodegroup.UpdateRequest{LaunchTemplate: lt("lt-0123456789abcdef0", "2", "")}, nodegroup.InvalidParameterException, "originally deployed with a launch template"},
		{"another launch template", "1.31", group("g", 3, withLaunchTemplate("lt-0123456789abcdef0", "1", ami130)),
			nodegroup.UpdateRequest{LaunchTemplate: lt("lt-0fedcba9876543210", "2", ami131)}, nodegroup.InvalidParameterException, "does not match"},
		{"switching to a custom AMI", "1.31", group("g", 3, atVersion("1.30"), withLaunchTemplate("lt-0123456789abcdef0", "1", "")),
			nodegroup.UpdateRequest{LaunchTemplate: lt("lt-0123456789abcdef0", "2", ami131)}, nodegroup.InvalidParameterException, "create a new node group"},
		{"the same launch template version again", "1.31", group("custom-Y", 3, withLaunchTemplate("lt-0123456789abcdef0", "1", ami130)),
			nodegroup.UpdateRequest{LaunchTemplate: lt("lt-0123456789abcdef0", "1", "")}, nodegroup.InvalidParameterException, "nothing to update"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tw := newTwin(t, withControlPlane(c.cp))
			tw.adopt(c.group)
			tw.Settle()
			before := tw.status(c.group.Name)
			err := tw.mng.UpdateVersion(c.group.Name, c.req, nil)
			if !nodegroup.IsCode(err, c.code) || !strings.Contains(err.Error(), c.contains) {
				t.Fatalf("err = %v; want %s containing %q", err, c.code, c.contains)
			}
			tw.runUntil(time.Hour, func() bool { return false })
			if after := tw.status(c.group.Name); after.Status != mng.StatusActive || len(after.Updates) != 0 || strings.Join(after.Nodes, ",") != strings.Join(before.Nodes, ",") {
				t.Errorf("a refused update changed the group: %+v", after)
			}
		})
	}
}

func TestUpdateRefusedWhileOneIsInProgress(t *testing.T) {
	tw := rolling(t, nil)
	if err := tw.mng.UpdateVersion("initial", nodegroup.UpdateRequest{}, nil); err != nil {
		t.Fatal(err)
	}
	if st := tw.status("initial"); st.Status != mng.StatusUpdating {
		t.Fatalf("status %s after UpdateNodegroupVersion, want UPDATING", st.Status)
	}
	err := tw.mng.UpdateVersion("initial", nodegroup.UpdateRequest{}, nil)
	if !nodegroup.IsCode(err, nodegroup.ResourceInUseException) {
		t.Fatalf("second update: %v, want ResourceInUseException", err)
	}
	if err := tw.mng.Delete("initial", nil); !nodegroup.IsCode(err, nodegroup.ResourceInUseException) {
		t.Fatalf("delete during the update: %v, want ResourceInUseException", err)
	}
	if err := tw.mng.UpdateVersion("nope", nodegroup.UpdateRequest{}, nil); !nodegroup.IsCode(err, nodegroup.ResourceNotFoundException) {
		t.Fatalf("update of an unknown group: %v, want ResourceNotFoundException", err)
	}
}

// A release-only update: same Kubernetes version, newer AMI.
func TestReleaseUpdateWithinAVersion(t *testing.T) {
	tw := newTwin(t, withControlPlane("1.30"))
	tw.adopt(group("initial", 2, atVersion("1.30"), atRelease("1.30.12-20250610"), inZones("us-west-2a", "us-west-2b")))
	tw.Settle()
	if st := tw.status("initial"); st.AMI != ami130Older || st.ReleaseVersion != "1.30.12-20250610" {
		t.Fatalf("adopted group runs %s (%s), want %s", st.AMI, st.ReleaseVersion, ami130Older)
	}
	u := tw.update("initial", nodegroup.UpdateRequest{}, 2*time.Hour)
	if u.Status != mng.UpdateSuccessful || u.ToAMI != ami130 || u.ToVersion != kubeversion.MustParse("1.30") || u.Surge != 4 {
		t.Fatalf("update %s to %s %s with surge %d; want Successful to %s 1.30 with surge 4 (2 × 2 AZs)", u.Status, u.ToAMI, u.ToVersion, u.Surge, ami130)
	}
	for _, n := range tw.groupNodes("initial") {
		if n.Status.NodeInfo.KubeletVersion != kubelet130 || n.Labels[mng.LabelNodegroupImage] != ami130 {
			t.Errorf("node %s: %s on %s", n.Name, n.Status.NodeInfo.KubeletVersion, n.Labels[mng.LabelNodegroupImage])
		}
	}
}
