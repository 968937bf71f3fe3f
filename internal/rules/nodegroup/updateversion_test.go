package nodegroup

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// What UpdateNodegroupVersion refuses, rule by rule (semantics.md §B), with
// EKS's exception names. The twin's own refusal test runs the same rules
// through UpdateNodegroupVersion.
func TestUpdateVersionRules(t *testing.T) {
	v := kubeversion.MustParse
	day := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }
	lt := &LaunchTemplate{ID: "lt-0123456789abcdef0", Name: "workers", Version: "1"}
	custom := &LaunchTemplate{ID: "lt-0123456789abcdef0", Version: "1", ImageID: "ami-0custom"}
	cases := []struct {
		name     string
		err      error
		code     string
		contains string // "" = accepted
	}{
		{name: "ACTIVE, no update running", err: CheckUpdatable("g", "ACTIVE", "")},
		{name: "DEGRADED may be updated", err: CheckUpdatable("g", "DEGRADED", "")},
		{name: "an update in progress", err: CheckUpdatable("g", "UPDATING", "u-1"),
			code: ResourceInUseException, contains: "Nodegroup g is already being updated (update u-1 is InProgress)"},
		{name: "CREATING", err: CheckUpdatable("g", "CREATING", ""),
			code: ResourceInUseException, contains: "Nodegroup g is CREATING; only an ACTIVE node group can be updated"},

		{name: "launch template by id, new version", err: CheckLaunchTemplate("g", lt, lt.ID, &LaunchTemplate{ID: lt.ID, Version: "2"})},
		{name: "launch template by name", err: CheckLaunchTemplate("g", lt, lt.ID, &LaunchTemplate{Name: "workers", Version: "2"})},
		{name: "group created without one", err: CheckLaunchTemplate("g", nil, "", &LaunchTemplate{ID: lt.ID, Version: "2"}),
			code: InvalidParameterException, contains: "originally deployed with a launch template"},
		{name: "another template", err: CheckLaunchTemplate("g", lt, lt.ID, &LaunchTemplate{ID: "lt-0fedcba9876543210", Version: "2"}),
			code: InvalidParameterException, contains: "The launch template lt-0fedcba9876543210 does not match the node group's launch template lt-0123456789abcdef0."},
		{name: "another name", err: CheckLaunchTemplate("g", lt, lt.ID, &LaunchTemplate{Name: "other", Version: "2"}),
			code: InvalidParameterException, contains: "The launch template other does not match"},
		{name: "no version", err: CheckLaunchTemplate("g", lt, lt.ID, &LaunchTemplate{ID: lt.ID}),
			code: InvalidParameterException, contains: "launchTemplate.version"},
		{name: "switching to a custom AMI", err: CheckLaunchTemplate("g", lt, lt.ID, &LaunchTemplate{ID: lt.ID, Version: "2", ImageID: "ami-0new"}),
			code: InvalidParameterException, contains: "create a new node group to switch"},
		{name: "custom AMI group, new image", err: CheckLaunchTemplate("g", custom, custom.ID, &LaunchTemplate{ID: custom.ID, Version: "2", ImageID: "ami-0new"})},

		{name: "custom AMI, launch template only", err: CheckCustomAMIRequest("custom-Y", "ami-0custom", UpdateRequest{LaunchTemplate: custom})},
		{name: "custom AMI, version", err: CheckCustomAMIRequest("custom-Y", "ami-0custom", UpdateRequest{Version: "1.31"}),
			code: InvalidParameterException, contains: "Nodegroup custom-Y uses a launch template with a custom AMI (ami-0custom): version and releaseVersion can't be specified"},
		{name: "custom AMI, release version", err: CheckCustomAMIRequest("custom-Y", "ami-0custom", UpdateRequest{ReleaseVersion: "1.31.14-20260320"}),
			code: InvalidParameterException, contains: "version and releaseVersion can't be specified"},

		{name: "same release date", err: CheckRelease("g", v("1.30"), v("1.30"), Release{"1.30.14-20260320", day(20)}, Release{"1.30.14-20260320", day(20)})},
		{name: "older release, same minor", err: CheckRelease("g", v("1.30"), v("1.30"), Release{"1.30.14-20260320", day(20)}, Release{"1.30.12-20260310", day(10)}),
			code: InvalidParameterException, contains: "Requested release version 1.30.12-20260310 is older than node group g's release version 1.30.14-20260320"},
		{name: "older release date, newer minor", err: CheckRelease("g", v("1.30"), v("1.31"), Release{"1.30.14-20260320", day(20)}, Release{"1.31.7-20260310", day(10)})},

		{name: "new AMI", err: CheckChange("g", v("1.30"), "ami-a", Configuration{AMI: "ami-a"}, Configuration{AMI: "ami-b"}, 0)},
		{name: "same AMI, old instances left by a failed update", err: CheckChange("g", v("1.30"), "ami-a", Configuration{AMI: "ami-b"}, Configuration{AMI: "ami-b"}, 2)},
		{name: "nothing to update", err: CheckChange("g", v("1.30"), "ami-a", Configuration{AMI: "ami-a"}, Configuration{AMI: "ami-a"}, 0),
			code: InvalidParameterException, contains: "Nodegroup g is already at Kubernetes version 1.30, AMI ami-a; there is nothing to update."},
		{name: "nothing to update, launch template version", err: CheckChange("g", v("1.30"), "ami-a", Configuration{"ami-a", "3"}, Configuration{"ami-a", "3"}, 0),
			code: InvalidParameterException, contains: "AMI ami-a, launch template version 3; there is nothing to update."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkRefusal(t, tc.err, tc.code, tc.contains) })
	}
}

// TargetVersion: the request's version, by default the control plane's;
// never newer than the control plane, never older than the group (§B).
func TestTargetVersion(t *testing.T) {
	cases := []struct {
		name                 string
		group, cp, requested string
		want, code, contains string
	}{
		{name: "default: the control plane's", group: "1.30", cp: "1.31", want: "1.31"},
		{name: "requested, behind the control plane", group: "1.29", cp: "1.31", requested: "1.30", want: "1.30"},
		{name: "same version (a new AMI release)", group: "1.30", cp: "1.30", want: "1.30"},
		{name: "newer than the control plane", group: "1.30", cp: "1.30", requested: "1.31",
			code: InvalidParameterException, contains: "Requested Kubernetes version 1.31 is greater than the cluster's Kubernetes version 1.30"},
		{name: "rollback", group: "1.31", cp: "1.31", requested: "1.30",
			code: InvalidParameterException, contains: "Requested Kubernetes version 1.30 is older than node group g's version 1.31; node groups can't be rolled back"},
		{name: "not a version", group: "1.31", cp: "1.31", requested: "one.thirty",
			code: InvalidParameterException, contains: "version: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := TargetVersion("g", kubeversion.MustParse(tc.group), kubeversion.MustParse(tc.cp), tc.requested)
			checkRefusal(t, err, tc.code, tc.contains)
			if err == nil && got.String() != tc.want {
				t.Fatalf("TargetVersion = %s, want %s", got, tc.want)
			}
		})
	}
}

// NodegroupUpdateConfig's ranges (§B updateConfig).
func TestValidateUpdateConfig(t *testing.T) {
	n := func(v int) *int { return &v }
	cases := []struct {
		name     string
		cfg      UpdateConfig
		maxSize  int
		contains string // "" = accepted
	}{
		{name: "neither", maxSize: 3},
		{name: "maxUnavailable 1", cfg: UpdateConfig{MaxUnavailable: n(1)}, maxSize: 3},
		{name: "maxUnavailable at maxSize", cfg: UpdateConfig{MaxUnavailable: n(3)}, maxSize: 3},
		{name: "percentage 100", cfg: UpdateConfig{MaxUnavailablePercentage: n(100)}, maxSize: 3},
		{name: "both", cfg: UpdateConfig{MaxUnavailable: n(1), MaxUnavailablePercentage: n(10)}, maxSize: 3, contains: "not both"},
		{name: "maxUnavailable 0", cfg: UpdateConfig{MaxUnavailable: n(0)}, maxSize: 3, contains: "updateConfig.maxUnavailable 0 is outside 1-100"},
		{name: "maxUnavailable 101", cfg: UpdateConfig{MaxUnavailable: n(101)}, maxSize: 500, contains: "updateConfig.maxUnavailable 101 is outside 1-100"},
		{name: "maxUnavailable above maxSize", cfg: UpdateConfig{MaxUnavailable: n(4)}, maxSize: 3, contains: "updateConfig.maxUnavailable 4 is higher than maxSize 3"},
		{name: "percentage 0", cfg: UpdateConfig{MaxUnavailablePercentage: n(0)}, maxSize: 3, contains: "maxUnavailablePercentage 0 is outside 1-100"},
		{name: "percentage 101", cfg: UpdateConfig{MaxUnavailablePercentage: n(101)}, maxSize: 3, contains: "maxUnavailablePercentage 101 is outside 1-100"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code := ""
			if tc.contains != "" {
				code = InvalidParameterException
			}
			checkRefusal(t, ValidateUpdateConfig(tc.cfg, tc.maxSize), code, tc.contains)
		})
	}
}

func checkRefusal(t *testing.T, err error, code, contains string) {
	t.Helper()
	switch {
	case contains == "" && err != nil:
		t.Fatalf("refused: %v", err)
	case contains != "" && (!IsCode(err, code) || !strings.Contains(err.Error(), contains)):
		t.Fatalf("err = %v; want %s containing %q", err, code, contains)
	}
}
