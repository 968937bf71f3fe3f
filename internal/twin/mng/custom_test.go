package mng_test

import (
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	"github.com/ladder-eks/ladder/internal/twin/mng"
)

// The workshop seed §6.1: group "initial" follows a version bump, the
// custom-AMI group "custom-Y" (launch template with an image id) does not,
// and is upgraded by a new launch template version with a 1.31 AMI
// (semantics.md §B Custom launch template / AMI).
func TestCustomAMIGroupNeedsANewLaunchTemplateVersion(t *testing.T) {
	const ltID = "lt-0123456789abcdef0"
	tw := newTwin(t)
	tw.adopt(group("initial", 3, atVersion("1.30")))
	tw.adopt(group("custom-Y", 3, withLaunchTemplate(ltID, "1", ami130), func(s *nodegroup.Spec) { s.AMIType = "AL2023_x86_64_STANDARD" }))
	tw.Settle()
	if v := tw.mng.Versions(); v["custom-Y"] != kubeversion.MustParse("1.30") || v["initial"] != kubeversion.MustParse("1.30") {
		t.Fatalf("versions %v, want both groups at 1.30", v)
	}

	// terraform apply with cluster_version = 1.31: initial rolls ...
	if u := tw.update("initial", nodegroup.UpdateRequest{Version: "1.31"}, 3*time.Hour); u.Status != mng.UpdateSuccessful {
		t.Fatalf("initial: %s %v", u.Status, u.Errors)
	}
	// ... custom-Y refuses the version and stays on its 1.30 AMI.
	if err := tw.mng.UpdateVersion("custom-Y", nodegroup.UpdateRequest{Version: "1.31"}, nil); !nodegroup.IsCode(err, nodegroup.InvalidParameterException) {
		t.Fatalf("version bump of custom-Y: %v, want InvalidParameterException", err)
	}
	if v := tw.mng.Versions(); v["custom-Y"] != kubeversion.MustParse("1.30") || v["initial"] != kubeversion.MustParse("1.31") {
		t.Fatalf("versions %v, want initial 1.31 and custom-Y 1.30", v)
	}

	// The fix: launch template version 2 with the 1.31 AMI.
	u := tw.update("custom-Y", nodegroup.UpdateRequest{LaunchTemplate: &nodegroup.LaunchTemplate{ID: ltID, Version: "2", ImageID: ami131}}, 3*time.Hour)
	if u.Status != mng.UpdateSuccessful || u.FromLaunchTemplateVersion != "1" || u.ToLaunchTemplateVersion != "2" || u.ToVersion != kubeversion.MustParse("1.31") {
		t.Fatalf("custom-Y update %s, launch template %s → %s, version %s; want Successful 1 → 2, 1.31", u.Status, u.FromLaunchTemplateVersion, u.ToLaunchTemplateVersion, u.ToVersion)
	}
	st := tw.status("custom-Y")
	if st.Version != kubeversion.MustParse("1.31") || st.AMI != ami131 || st.ReleaseVersion != "" || st.LaunchTemplate.Version != "2" || st.LaunchTemplate.ImageID != ami131 {
		t.Errorf("custom-Y status: %s %s release %q launch template %+v", st.Version, st.AMI, st.ReleaseVersion, st.LaunchTemplate)
	}
	nodes := tw.groupNodes("custom-Y")
	if len(nodes) != 3 {
		t.Fatalf("custom-Y has %d nodes, want 3", len(nodes))
	}
	for _, n := range nodes {
		l := n.Labels
		if n.Status.NodeInfo.KubeletVersion != kubelet131 || l[mng.LabelNodegroupImage] != ami131 ||
			l[mng.LabelSourceLaunchTemplateID] != ltID || l[mng.LabelSourceLaunchTemplateVersion] != "2" {
			t.Errorf("node %s: kubelet %s, labels %v; want 1.31 with the source launch template labels of version 2", n.Name, n.Status.NodeInfo.KubeletVersion, l)
		}
	}
}
