package asg_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/twin/asg"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// Create starts the group's instances on its launch template, balanced over
// its zones, Ready, created age ago, labelled as self-managed nodes.
func TestCreateExistingInstances(t *testing.T) {
	tw := newTwin(t, 1)
	tw.create(groupSpec("ng", 5, func(s *asg.Spec) { s.Labels = map[string]string{"team": "web"} }))
	st := tw.status("ng")
	perZone := map[string]int{}
	for _, in := range st.Instances {
		perZone[in.Zone]++
		n := tw.Kube.Node(in.Node)
		if n == nil || !kube.IsNodeReady(n) || !n.CreationTimestamp.Time.Equal(t0.Add(-24*time.Hour)) {
			t.Fatalf("instance %s: node %v", in.ID, n)
		}
		if n.Labels[asg.LabelNodegroupName] != "ng" || n.Labels[asg.LabelLifecycle] != "self-managed" || n.Labels["team"] != "web" {
			t.Fatalf("node labels %v", n.Labels)
		}
		if in.State != asg.InService || in.LaunchTemplate != (asg.LaunchTemplate{Name: "ng", Version: "1", ImageID: ami130}) || in.KubeletVersion != kubelet130 {
			t.Fatalf("instance %+v", in)
		}
	}
	if perZone["us-west-2a"] != 2 || perZone["us-west-2b"] != 2 || perZone["us-west-2c"] != 1 {
		t.Fatalf("instances per zone %v, want 2/2/1", perZone)
	}
	if st.MinInService != 5 || st.MaxSurge != 0 || st.Launched != 0 || tw.asg.Busy() {
		t.Fatalf("fresh group status %+v", st)
	}
}

func TestCreateValidation(t *testing.T) {
	for _, c := range []struct {
		name    string
		spec    asg.Spec
		wantErr string
	}{
		{"unknown instance type", groupSpec("ng", 2, func(s *asg.Spec) { s.InstanceType = "m99.huge" }), "not in the catalog"},
		{"desired above max", groupSpec("ng", 2, func(s *asg.Spec) { s.Max = 1 }), "min (0) <= desired (2) <= max (1)"},
		{"desired below min", groupSpec("ng", 2, func(s *asg.Spec) { s.Min = 3; s.Max = 4 }), "min (3) <= desired (2)"},
		{"unknown AMI", groupSpec("ng", 2, func(s *asg.Spec) { s.LaunchTemplate.ImageID = "ami-0123456789abcdef0" }), "not in the catalog"},
		{"arm64 AMI on m5", groupSpec("ng", 2, func(s *asg.Spec) { s.LaunchTemplate.ImageID = amiARM130 }), "is arm64 but m5.large is amd64"},
		{"zone outside the cluster", groupSpec("ng", 2, withZones("eu-west-1a")), "not one of the cluster's zones"},
		{"heartbeat timeout below 30 s", groupSpec("ng", 2, withHook(10*time.Second, "")), "HeartbeatTimeout must be between 30 and 7200"},
		{"heartbeat timeout above 7200 s", groupSpec("ng", 2, withHook(7201*time.Second, "")), "HeartbeatTimeout must be between 30 and 7200"},
		{"bad default result", groupSpec("ng", 2, withHook(0, "RETRY")), "CONTINUE or ABANDON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tw := newTwin(t, 1)
			err := tw.asg.Create(c.spec, 0)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, c.wantErr)
			}
		})
	}
	tw := newTwin(t, 1)
	tw.create(groupSpec("ng", 1))
	if err := tw.asg.Create(groupSpec("ng", 1), 0); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("duplicate group: %v", err)
	}
}

// SetLaunchTemplate makes a new version: numbered after the last one unless
// given, keeping the template's name and image unless given; running
// instances keep theirs.
func TestSetLaunchTemplateVersions(t *testing.T) {
	tw := newTwin(t, 1)
	tw.create(groupSpec("ng", 2))
	tw.upgrade("ng", ami131)
	if lt := tw.status("ng").LaunchTemplate; lt != (asg.LaunchTemplate{Name: "ng", Version: "2", ImageID: ami131}) {
		t.Fatalf("after the first change: %+v", lt)
	}
	if err := tw.asg.SetLaunchTemplate("ng", asg.LaunchTemplate{Version: "7"}); err != nil {
		t.Fatal(err)
	}
	tw.upgrade("ng", amiWorkshop131)
	st := tw.status("ng")
	if st.LaunchTemplate != (asg.LaunchTemplate{Name: "ng", Version: "8", ImageID: amiWorkshop131}) || st.KubeletVersion != kubeletWorkshop131 {
		t.Fatalf("after three changes: %+v %s", st.LaunchTemplate, st.KubeletVersion)
	}
	for _, in := range st.Instances {
		if in.LaunchTemplate.Version != "1" || in.ImageID != ami130 {
			t.Fatalf("running instance changed: %+v", in)
		}
	}
	if err := tw.asg.SetLaunchTemplate("ng", asg.LaunchTemplate{ImageID: amiARM130}); err == nil {
		t.Fatal("an arm64 image for m5.large was accepted")
	}
	if err := tw.asg.SetLaunchTemplate("nope", asg.LaunchTemplate{ImageID: ami131}); err == nil {
		t.Fatal("unknown group accepted")
	}
}
