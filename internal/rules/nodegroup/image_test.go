package nodegroup_test

import (
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
)

// The image CreateNodegroup picks for a group, or the field of its
// refusal (semantics.md §B, CreateNodegroup API reference).
func TestResolveImage(t *testing.T) {
	now := time.Date(2026, 3, 30, 10, 0, 0, 0, time.UTC)
	lt := func(name, image string) *nodegroup.LaunchTemplate {
		return &nodegroup.LaunchTemplate{Name: name, Version: "1", ImageID: image}
	}
	for _, c := range []struct {
		name     string
		spec     nodegroup.Spec
		it       string
		cp       string
		existing bool
		// Either the image's family, architecture and version, or the
		// refused field.
		family, arch, version string
		field                 string
	}{
		{name: "default amiType is AL2023 of the instance's arch", spec: nodegroup.Spec{}, it: "m7g.large", cp: "1.31",
			family: catalog.FamilyAL2023, arch: catalog.ArchARM64, version: "1.31"},
		{name: "AL2 at its last minor", spec: nodegroup.Spec{AMIType: "AL2_x86_64"}, it: "m5.large", cp: "1.32",
			family: catalog.FamilyAL2, arch: catalog.ArchX8664, version: "1.32"},
		{name: "an existing group trails the control plane", spec: nodegroup.Spec{Version: "1.30"}, it: "m5.large", cp: "1.31", existing: true,
			family: catalog.FamilyAL2023, arch: catalog.ArchX8664, version: "1.30"},
		{name: "custom AMI sets the version", spec: nodegroup.Spec{AMIType: nodegroup.AMITypeCustom, LaunchTemplate: lt("lt", "ami-0f676a166352f02ab")}, it: "m5.large", cp: "1.31",
			version: "1.30"},
		{name: "a new group trails the control plane", spec: nodegroup.Spec{Version: "1.30"}, it: "m5.large", cp: "1.31", field: "version"},
		{name: "ahead of the control plane", spec: nodegroup.Spec{Version: "1.32"}, it: "m5.large", cp: "1.31", existing: true, field: "version"},
		{name: "amiType of the other arch", spec: nodegroup.Spec{AMIType: "AL2023_ARM_64_STANDARD"}, it: "m5.large", cp: "1.31", field: "amiType"},
		{name: "AL2 after its last minor", spec: nodegroup.Spec{AMIType: "AL2_x86_64"}, it: "m5.large", cp: "1.33", field: "amiType"},
		{name: "amiType not modelled", spec: nodegroup.Spec{AMIType: "WINDOWS_CORE_2022_x86_64"}, it: "m5.large", cp: "1.31", field: "amiType"},
		{name: "CUSTOM without an image", spec: nodegroup.Spec{AMIType: nodegroup.AMITypeCustom, LaunchTemplate: lt("lt", "")}, it: "m5.large", cp: "1.31", field: "amiType"},
		{name: "release the catalog lacks", spec: nodegroup.Spec{ReleaseVersion: "1.31.0-20200101"}, it: "m5.large", cp: "1.31", field: "releaseVersion"},
		{name: "launch template without id or name", spec: nodegroup.Spec{LaunchTemplate: lt("", "")}, it: "m5.large", cp: "1.31", field: "launchTemplate"},
		{name: "custom AMI unknown", spec: nodegroup.Spec{LaunchTemplate: lt("lt", "ami-00000000000000000")}, it: "m5.large", cp: "1.31", field: "launchTemplate.imageId"},
		{name: "custom AMI of the other arch", spec: nodegroup.Spec{LaunchTemplate: lt("lt", "ami-24fd2cff8dae19a97")}, it: "m5.large", cp: "1.31", field: "launchTemplate.imageId"},
		{name: "custom AMI and a version", spec: nodegroup.Spec{Version: "1.30", LaunchTemplate: lt("lt", "ami-0f676a166352f02ab")}, it: "m5.large", cp: "1.31", field: "version"},
	} {
		t.Run(c.name, func(t *testing.T) {
			it, ok := catalog.LookupInstanceType(c.it)
			if !ok {
				t.Fatalf("no instance type %s", c.it)
			}
			img, err := nodegroup.ResolveImage(c.spec, it, kubeversion.MustParse(c.cp), nil, now, c.existing)
			if c.field != "" {
				imgErr, ok := err.(*nodegroup.ImageError)
				if !ok || imgErr.Field != c.field || !nodegroup.IsCode(err, nodegroup.InvalidParameterException) {
					t.Fatalf("got %+v, %v; want an InvalidParameterException about %s", img, err, c.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if img.Family != c.family || img.Arch != c.arch || img.Version.String() != c.version || img.AMI.KubeArch() != it.Arch {
				t.Fatalf("got %s %s %s (AMI %s, %s); want %s %s %s", img.Family, img.Arch, img.Version, img.AMI.ID, img.AMI.Arch, c.family, c.arch, c.version)
			}
		})
	}
}
