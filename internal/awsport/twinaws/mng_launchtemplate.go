package twinaws

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/twin/mng"
)

// The launch templates behind managed node groups (semantics.md §B "Custom
// launch template / AMI"; aws-apis.md §4). A custom-AMI group is upgraded
// by a new version of its launch template with the new ImageId, then
// UpdateNodegroupVersion with launchTemplate {id or name, version}; EKS
// reads the image from that version. The EKS port keeps these templates'
// versions — each group's current one, then those CreateLaunchTemplateVersion
// adds — and resolves the version UpdateNodegroupVersion and CreateNodegroup
// name to its image for the managed node group twin. A template is
// addressed by id or name; one given by name only has the id its nodes'
// eks.amazonaws.com/sourceLaunchTemplateId label shows.

// mngTemplate is one launch template behind managed node groups.
type mngTemplate struct {
	id, name string
	versions []ltVersion // by number
}

// mngTemplate finds a template by id or name, seeding it from the node
// groups that run it.
func (e *EKS) mngTemplate(id, name string) (*mngTemplate, bool) {
	if e.opts.Nodegroups == nil || (id == "" && name == "") {
		return nil, false
	}
	for _, t := range e.templates {
		if (id != "" && t.id == id) || (id == "" && t.name == name) {
			return t, true
		}
	}
	var t *mngTemplate
	for _, lt := range e.opts.Nodegroups.LaunchTemplates() {
		if (id != "" && lt.ID != id) || (id == "" && lt.Name != name) {
			continue
		}
		if t == nil {
			t = &mngTemplate{id: lt.ID, name: lt.Name}
		}
		// A group that names no version number ($Default, $Latest, none)
		// runs the template's only version the twin knows of: 1.
		n, err := strconv.ParseInt(lt.Version, 10, 64)
		if err != nil {
			n = 1
		}
		if !containsVersion(t.versions, n) {
			t.versions = append(t.versions, ltVersion{number: n, imageID: lt.ImageID})
		}
	}
	if t == nil {
		return nil, false
	}
	sort.Slice(t.versions, func(i, j int) bool { return t.versions[i].number < t.versions[j].number })
	e.templates = append(e.templates, t)
	return t, true
}

// resolveLaunchTemplate is the node group twin's launch template for a
// request's: the version named (default: the template's default version)
// and its image. A template no node group runs is passed on as asked, for
// the twin to refuse.
func (e *EKS) resolveLaunchTemplate(group string, in *ekstypes.LaunchTemplateSpecification) (*mng.LaunchTemplate, error) {
	lt := &mng.LaunchTemplate{ID: aws.ToString(in.Id), Name: aws.ToString(in.Name), Version: aws.ToString(in.Version)}
	t, ok := e.mngTemplate(lt.ID, lt.Name)
	if !ok {
		return lt, nil
	}
	version := lt.Version
	if version == "" {
		version = "$Default"
	}
	v, err := resolveVersion(t.name, t.versions, version)
	if err != nil {
		return nil, &ekstypes.InvalidParameterException{ClusterName: &e.opts.Cluster, NodegroupName: &group,
			Message: ptr(fmt.Sprintf("Launch template %s version %s does not exist", t.ref(), version))}
	}
	lt.Version, lt.ImageID = strconv.FormatInt(v.number, 10), v.imageID
	return lt, nil
}

func (t *mngTemplate) ref() string {
	if t.name != "" {
		return t.name
	}
	return t.id
}

// LaunchTemplates returns EC2's launch template API over the templates
// behind managed node groups; other templates go to fallback (nil: none).
func (e *EKS) LaunchTemplates(fallback awsport.LaunchTemplates) awsport.LaunchTemplates {
	if fallback == nil {
		fallback = noTemplates{}
	}
	return nodegroupTemplates{e: e, fallback: fallback}
}

// noTemplates is an EC2 account with no other launch template.
type noTemplates struct{}

func (noTemplates) CreateLaunchTemplateVersion(context.Context, *ec2.CreateLaunchTemplateVersionInput, ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateVersionOutput, error) {
	return nil, launchTemplateNotFound()
}

func (noTemplates) DescribeLaunchTemplateVersions(context.Context, *ec2.DescribeLaunchTemplateVersionsInput, ...func(*ec2.Options)) (*ec2.DescribeLaunchTemplateVersionsOutput, error) {
	return nil, launchTemplateNotFound()
}

type nodegroupTemplates struct {
	e        *EKS
	fallback awsport.LaunchTemplates
}

var _ awsport.LaunchTemplates = nodegroupTemplates{}

// CreateLaunchTemplateVersion implements awsport.LaunchTemplates: a copy
// of SourceVersion (default $Latest) with LaunchTemplateData's ImageId, as
// the next version number.
func (n nodegroupTemplates) CreateLaunchTemplateVersion(ctx context.Context, in *ec2.CreateLaunchTemplateVersionInput, optFns ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateVersionOutput, error) {
	t, ok := n.e.mngTemplate(aws.ToString(in.LaunchTemplateId), aws.ToString(in.LaunchTemplateName))
	if !ok {
		return n.fallback.CreateLaunchTemplateVersion(ctx, in, optFns...)
	}
	src, err := resolveVersion(t.ref(), t.versions, aws.ToString(in.SourceVersion))
	if err != nil {
		return nil, err
	}
	v := ltVersion{number: t.versions[len(t.versions)-1].number + 1, imageID: src.imageID}
	if d := in.LaunchTemplateData; d != nil && d.ImageId != nil {
		v.imageID = *d.ImageId
	}
	t.versions = append(t.versions, v)
	return &ec2.CreateLaunchTemplateVersionOutput{LaunchTemplateVersion: t.describe(v)}, nil
}

// DescribeLaunchTemplateVersions implements awsport.LaunchTemplates: the
// versions asked for ($Latest, $Default, numbers) or all, by number.
func (n nodegroupTemplates) DescribeLaunchTemplateVersions(ctx context.Context, in *ec2.DescribeLaunchTemplateVersionsInput, optFns ...func(*ec2.Options)) (*ec2.DescribeLaunchTemplateVersionsOutput, error) {
	t, ok := n.e.mngTemplate(aws.ToString(in.LaunchTemplateId), aws.ToString(in.LaunchTemplateName))
	if !ok {
		return n.fallback.DescribeLaunchTemplateVersions(ctx, in, optFns...)
	}
	asked := map[int64]bool{}
	for _, want := range in.Versions {
		v, err := resolveVersion(t.ref(), t.versions, want)
		if err != nil {
			return nil, err
		}
		asked[v.number] = true
	}
	out := []ec2types.LaunchTemplateVersion{}
	for _, v := range t.versions {
		if len(asked) == 0 || asked[v.number] {
			d := t.describe(v)
			d.DefaultVersion = ptr(v == t.versions[0])
			out = append(out, *d)
		}
	}
	return &ec2.DescribeLaunchTemplateVersionsOutput{LaunchTemplateVersions: out}, nil
}

func (t *mngTemplate) describe(v ltVersion) *ec2types.LaunchTemplateVersion {
	d := &ec2types.LaunchTemplateVersion{LaunchTemplateId: ptr(t.id), VersionNumber: ptr(v.number),
		LaunchTemplateData: &ec2types.ResponseLaunchTemplateData{}}
	if t.name != "" {
		d.LaunchTemplateName = ptr(t.name)
	}
	if v.imageID != "" {
		d.LaunchTemplateData.ImageId = ptr(v.imageID)
	}
	return d
}
