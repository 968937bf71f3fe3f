package twinaws

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/twin/asg"
)

// Launch templates (aws-apis.md §4) are the Auto Scaling twin's: each group
// runs one launch template (by name) at a version with an image. The port
// keeps the versions it learns of — each group's current one, then those
// CreateLaunchTemplateVersion adds — and StartInstanceRefresh resolves a
// DesiredConfiguration against them, so the refresh rolls out that
// version's image. Templates are addressed by name: the twin's have no ids.

var _ awsport.LaunchTemplates = (*AutoScaling)(nil)

// ltVersion is one version of a launch template.
type ltVersion struct {
	number  int64
	imageID string
}

// ec2LTMaxResults bounds DescribeLaunchTemplateVersions' pages.
const ec2LTMaxResults = 200

// versions returns a launch template's versions, oldest first, seeding
// them from the groups that run it; ok is false for a template no group
// runs.
func (a *AutoScaling) versions(name string) ([]ltVersion, bool) {
	if vs, ok := a.templates[name]; ok {
		return vs, true
	}
	var vs []ltVersion
	for _, g := range a.asg.Groups() {
		st, err := a.asg.Status(g)
		if err != nil || st.LaunchTemplate.Name != name {
			continue
		}
		n, err := strconv.ParseInt(st.LaunchTemplate.Version, 10, 64)
		if err == nil && !containsVersion(vs, n) {
			vs = append(vs, ltVersion{number: n, imageID: st.LaunchTemplate.ImageID})
		}
	}
	if len(vs) == 0 {
		return nil, false
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].number < vs[j].number })
	a.templates[name] = vs
	return vs, true
}

func containsVersion(vs []ltVersion, n int64) bool {
	for _, v := range vs {
		if v.number == n {
			return true
		}
	}
	return false
}

// resolveVersion finds "$Latest", "$Default" (the oldest version the port
// knows) or a version number.
func resolveVersion(name string, vs []ltVersion, version string) (ltVersion, error) {
	switch version {
	case "$Latest", "":
		return vs[len(vs)-1], nil
	case "$Default":
		return vs[0], nil
	}
	n, err := strconv.ParseInt(version, 10, 64)
	for _, v := range vs {
		if err == nil && v.number == n {
			return v, nil
		}
	}
	return ltVersion{}, &smithy.GenericAPIError{Code: "InvalidLaunchTemplateId.VersionNotFound",
		Message: fmt.Sprintf("Could not find launch template version %s for launch template %s.", version, name)}
}

func launchTemplateNotFound() error {
	return &smithy.GenericAPIError{Code: "InvalidLaunchTemplateName.NotFoundException",
		Message: "At least one of the launch templates specified in the request does not exist."}
}

func (a *AutoScaling) template(id, name *string) (string, []ltVersion, error) {
	if id != nil {
		return "", nil, &smithy.GenericAPIError{Code: "InvalidLaunchTemplateId.NotFound",
			Message: fmt.Sprintf("The specified launch template, with template ID %s, does not exist (the twin addresses launch templates by name).", *id)}
	}
	if name == nil {
		return "", nil, &smithy.GenericAPIError{Code: "MissingParameter", Message: "The request must contain the parameter LaunchTemplateName or LaunchTemplateId."}
	}
	vs, ok := a.versions(*name)
	if !ok {
		return "", nil, launchTemplateNotFound()
	}
	return *name, vs, nil
}

// CreateLaunchTemplateVersion implements awsport.LaunchTemplates: a copy
// of SourceVersion (default $Latest) with LaunchTemplateData's ImageId, as
// the next version number. A ClientToken already used returns the version
// it created.
func (a *AutoScaling) CreateLaunchTemplateVersion(_ context.Context, in *ec2.CreateLaunchTemplateVersionInput, _ ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateVersionOutput, error) {
	name, vs, err := a.template(in.LaunchTemplateId, in.LaunchTemplateName)
	if err != nil {
		return nil, err
	}
	token := name + "/" + aws.ToString(in.ClientToken)
	if v, ok := a.ltTokens[token]; ok && in.ClientToken != nil {
		return &ec2.CreateLaunchTemplateVersionOutput{LaunchTemplateVersion: describeLTVersion(name, v)}, nil
	}
	src, err := resolveVersion(name, vs, aws.ToString(in.SourceVersion))
	if err != nil {
		return nil, err
	}
	v := ltVersion{number: vs[len(vs)-1].number + 1, imageID: src.imageID}
	if d := in.LaunchTemplateData; d != nil && d.ImageId != nil {
		v.imageID = *d.ImageId
	}
	a.templates[name] = append(vs, v)
	if in.ClientToken != nil {
		a.ltTokens[token] = v
	}
	return &ec2.CreateLaunchTemplateVersionOutput{LaunchTemplateVersion: describeLTVersion(name, v)}, nil
}

func describeLTVersion(name string, v ltVersion) *ec2types.LaunchTemplateVersion {
	return &ec2types.LaunchTemplateVersion{
		LaunchTemplateName: ptr(name),
		VersionNumber:      ptr(v.number),
		LaunchTemplateData: &ec2types.ResponseLaunchTemplateData{ImageId: ptr(v.imageID)},
	}
}

// DescribeLaunchTemplateVersions implements awsport.LaunchTemplates: the
// versions asked for ($Latest, $Default, numbers) or all the port knows,
// by number, paginated.
func (a *AutoScaling) DescribeLaunchTemplateVersions(_ context.Context, in *ec2.DescribeLaunchTemplateVersionsInput, _ ...func(*ec2.Options)) (*ec2.DescribeLaunchTemplateVersionsOutput, error) {
	name, vs, err := a.template(in.LaunchTemplateId, in.LaunchTemplateName)
	if err != nil {
		return nil, err
	}
	sel := vs
	if len(in.Versions) > 0 {
		sel = nil
		for _, want := range in.Versions {
			v, err := resolveVersion(name, vs, want)
			if err != nil {
				return nil, err
			}
			if !containsVersion(sel, v.number) {
				sel = append(sel, v)
			}
		}
		sort.Slice(sel, func(i, j int) bool { return sel[i].number < sel[j].number })
	}
	out := make([]ec2types.LaunchTemplateVersion, 0, len(sel))
	for _, v := range sel {
		d := describeLTVersion(name, v)
		d.DefaultVersion = ptr(v.number == vs[0].number)
		out = append(out, *d)
	}
	items, next, err := page(out, in.MaxResults, in.NextToken, ec2LTMaxResults)
	if err != nil {
		return nil, &smithy.GenericAPIError{Code: "InvalidPaginationToken", Message: err.Error()}
	}
	return &ec2.DescribeLaunchTemplateVersionsOutput{LaunchTemplateVersions: items, NextToken: next}, nil
}

// desiredLaunchTemplate resolves a refresh's DesiredConfiguration against
// the versions the port knows, so the group gets that version's image.
func (a *AutoScaling) desiredLaunchTemplate(name, version string) (asg.LaunchTemplate, error) {
	vs, ok := a.versions(name)
	if !ok {
		return asg.LaunchTemplate{}, launchTemplateNotFound()
	}
	v, err := resolveVersion(name, vs, version)
	if err != nil {
		return asg.LaunchTemplate{}, err
	}
	return asg.LaunchTemplate{Name: name, Version: strconv.FormatInt(v.number, 10), ImageID: v.imageID}, nil
}
