package twinaws

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/smithy-go"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	"github.com/ladder-eks/ladder/internal/twin/asg"
)

// EC2's launch templates (aws-apis.md §4), one store for the account: the
// templates behind self-managed groups (twin/asg, addressed by name: they
// have no ids) and behind managed node groups (twin/mng, by id or name; one
// given by name only has the id its nodes'
// eks.amazonaws.com/sourceLaunchTemplateId label shows). The store learns a
// template's versions from the groups that run it — the version each runs
// with its image — the first time it is asked for; then
// CreateLaunchTemplateVersion adds versions. StartInstanceRefresh's
// DesiredConfiguration and UpdateNodegroupVersion/CreateNodegroup's
// launchTemplate resolve against it, so the twins roll out the image of the
// version named.

// ltVersion is one version of a launch template.
type ltVersion struct {
	number  int64
	imageID string
	// created is when CreateLaunchTemplateVersion made the version; zero
	// for a version learned from a group, whose creation the twin does not
	// know.
	created time.Time
}

// ec2Template is one template and its versions, by number. Its default
// version is the oldest the store knows: the twin has no
// ModifyLaunchTemplate, so the default never moves.
type ec2Template struct {
	id, name string
	versions []ltVersion
}

// templateSeed is a group's launch template: what the store learns a
// template from. version is the group's version as its API spells it.
type templateSeed struct {
	id, name, version, imageID string
}

// ec2LTMaxResults bounds DescribeLaunchTemplateVersions' pages.
const ec2LTMaxResults = 200

// launchTemplates is the account's launch template store, awsport.LaunchTemplates.
type launchTemplates struct {
	// seeds list the launch templates the groups run now, one source per
	// twin (the managed node groups, the Auto Scaling groups).
	seeds     []func() []templateSeed
	templates []*ec2Template // in the order first asked for
	tokens    map[string]ltVersion
	// now is the twin's clock, for the CreateTime of created versions;
	// nil leaves it out.
	now func() time.Time
}

var _ awsport.LaunchTemplates = (*launchTemplates)(nil)

func newLaunchTemplates(seeds func() []templateSeed) *launchTemplates {
	return &launchTemplates{seeds: []func() []templateSeed{seeds}, tokens: map[string]ltVersion{}}
}

// join makes o's templates s's: afterwards both twins' ports answer from s.
func (s *launchTemplates) join(o *launchTemplates) {
	if o == s {
		return
	}
	s.seeds = append(s.seeds, o.seeds...)
	if s.now == nil {
		s.now = o.now
	}
	s.templates = append(s.templates, o.templates...)
	for k, v := range o.tokens {
		s.tokens[k] = v
	}
}

// find returns the template with id (or, without one, name), learning it
// from the groups that run it; ok is false for a template no group runs.
func (s *launchTemplates) find(id, name string) (*ec2Template, bool) {
	if id == "" && name == "" {
		return nil, false
	}
	matches := func(tid, tname string) bool {
		if id != "" {
			return tid == id || (tid == "" && templateID(tname) == id)
		}
		return tname == name
	}
	for _, t := range s.templates {
		if matches(t.id, t.name) {
			return t, true
		}
	}
	var t *ec2Template
	for _, seeds := range s.seeds {
		for _, sd := range seeds() {
			if !matches(sd.id, sd.name) {
				continue
			}
			if t == nil {
				t = &ec2Template{id: sd.id, name: sd.name}
				if t.id == "" {
					t.id = templateID(sd.name)
				}
			}
			// A group that names no version number ($Default, $Latest,
			// none) runs the template's only version the twin knows of: 1.
			n, err := strconv.ParseInt(sd.version, 10, 64)
			if err != nil {
				n = 1
			}
			if !t.has(n) {
				t.versions = append(t.versions, ltVersion{number: n, imageID: sd.imageID})
			}
		}
	}
	if t == nil {
		return nil, false
	}
	sort.Slice(t.versions, func(i, j int) bool { return t.versions[i].number < t.versions[j].number })
	s.templates = append(s.templates, t)
	return t, true
}

// templateID is the id of a template the groups name only by name (the
// self-managed groups'): every EC2 template has one, which the model
// requires in its versions (aws-apis.md §4), and callers may address it by.
// Derived from the name, so that it is the same on every run.
func templateID(name string) string {
	sum := sha256.Sum256([]byte(name))
	return "lt-" + hex.EncodeToString(sum[:])[:17]
}

func (t *ec2Template) has(n int64) bool {
	for _, v := range t.versions {
		if v.number == n {
			return true
		}
	}
	return false
}

// ref is how EC2's messages name the template.
func (t *ec2Template) ref() string {
	if t.name != "" {
		return t.name
	}
	return t.id
}

// resolve finds "$Latest" (also for no version), "$Default" or a version
// number.
func (t *ec2Template) resolve(version string) (ltVersion, error) {
	switch version {
	case "$Latest", "":
		return t.versions[len(t.versions)-1], nil
	case "$Default":
		return t.versions[0], nil
	}
	n, err := strconv.ParseInt(version, 10, 64)
	for _, v := range t.versions {
		if err == nil && v.number == n {
			return v, nil
		}
	}
	return ltVersion{}, &smithy.GenericAPIError{Code: "InvalidLaunchTemplateId.VersionNotFound",
		Message: fmt.Sprintf("Could not find launch template version %s for launch template %s.", version, t.ref())}
}

func (t *ec2Template) describe(v ltVersion) *ec2types.LaunchTemplateVersion {
	d := &ec2types.LaunchTemplateVersion{VersionNumber: ptr(v.number), DefaultVersion: ptr(v == t.versions[0]),
		LaunchTemplateData: &ec2types.ResponseLaunchTemplateData{}}
	if t.id != "" {
		d.LaunchTemplateId = ptr(t.id)
	}
	if t.name != "" {
		d.LaunchTemplateName = ptr(t.name)
	}
	if v.imageID != "" {
		d.LaunchTemplateData.ImageId = ptr(v.imageID)
	}
	if !v.created.IsZero() {
		d.CreateTime = ptr(v.created)
	}
	return d
}

func launchTemplateNotFound() error {
	return &smithy.GenericAPIError{Code: "InvalidLaunchTemplateName.NotFoundException",
		Message: "At least one of the launch templates specified in the request does not exist."}
}

// template is the template a request names, or EC2's error for it.
func (s *launchTemplates) template(id, name *string) (*ec2Template, error) {
	switch {
	case id != nil:
		if t, ok := s.find(*id, ""); ok {
			return t, nil
		}
		return nil, &smithy.GenericAPIError{Code: "InvalidLaunchTemplateId.NotFound",
			Message: fmt.Sprintf("The specified launch template, with template ID %s, does not exist.", *id)}
	case name == nil:
		return nil, &smithy.GenericAPIError{Code: "MissingParameter", Message: "The request must contain the parameter LaunchTemplateName or LaunchTemplateId."}
	}
	t, ok := s.find("", *name)
	if !ok {
		return nil, launchTemplateNotFound()
	}
	return t, nil
}

// CreateLaunchTemplateVersion implements awsport.LaunchTemplates: a copy
// of SourceVersion (default $Latest) with LaunchTemplateData's ImageId, as
// the next version number. A ClientToken already used returns the version
// it created.
func (s *launchTemplates) CreateLaunchTemplateVersion(_ context.Context, in *ec2.CreateLaunchTemplateVersionInput, _ ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateVersionOutput, error) {
	t, err := s.template(in.LaunchTemplateId, in.LaunchTemplateName)
	if err != nil {
		return nil, err
	}
	token := t.ref() + "/" + aws.ToString(in.ClientToken)
	if v, ok := s.tokens[token]; ok && in.ClientToken != nil {
		return &ec2.CreateLaunchTemplateVersionOutput{LaunchTemplateVersion: t.describe(v)}, nil
	}
	src, err := t.resolve(aws.ToString(in.SourceVersion))
	if err != nil {
		return nil, err
	}
	v := ltVersion{number: t.versions[len(t.versions)-1].number + 1, imageID: src.imageID}
	if s.now != nil {
		v.created = s.now()
	}
	if d := in.LaunchTemplateData; d != nil && d.ImageId != nil {
		v.imageID = *d.ImageId
	}
	t.versions = append(t.versions, v)
	if in.ClientToken != nil {
		s.tokens[token] = v
	}
	return &ec2.CreateLaunchTemplateVersionOutput{LaunchTemplateVersion: t.describe(v)}, nil
}

// DescribeLaunchTemplateVersions implements awsport.LaunchTemplates: the
// versions asked for ($Latest, $Default, numbers) or all the store knows,
// by number, paginated.
func (s *launchTemplates) DescribeLaunchTemplateVersions(_ context.Context, in *ec2.DescribeLaunchTemplateVersionsInput, _ ...func(*ec2.Options)) (*ec2.DescribeLaunchTemplateVersionsOutput, error) {
	t, err := s.template(in.LaunchTemplateId, in.LaunchTemplateName)
	if err != nil {
		return nil, err
	}
	asked := map[int64]bool{}
	for _, want := range in.Versions {
		v, err := t.resolve(want)
		if err != nil {
			return nil, err
		}
		asked[v.number] = true
	}
	out := make([]ec2types.LaunchTemplateVersion, 0, len(t.versions))
	for _, v := range t.versions {
		if len(asked) == 0 || asked[v.number] {
			out = append(out, *t.describe(v))
		}
	}
	items, next, err := page(out, in.MaxResults, in.NextToken, ec2LTMaxResults)
	if err != nil {
		return nil, &smithy.GenericAPIError{Code: "InvalidPaginationToken", Message: err.Error()}
	}
	return &ec2.DescribeLaunchTemplateVersionsOutput{LaunchTemplateVersions: items, NextToken: next}, nil
}

// Self-managed groups: the Auto Scaling port is EC2's launch templates too
// (each group's, by name), and a refresh's DesiredConfiguration resolves
// against them.

func (a *AutoScaling) groupTemplates() []templateSeed {
	var out []templateSeed
	for _, g := range a.asg.Groups() {
		if st, err := a.asg.Status(g); err == nil {
			lt := st.LaunchTemplate
			out = append(out, templateSeed{name: lt.Name, version: lt.Version, imageID: lt.ImageID})
		}
	}
	return out
}

var _ awsport.LaunchTemplates = (*AutoScaling)(nil)

// CreateLaunchTemplateVersion implements awsport.LaunchTemplates on the
// account's store.
func (a *AutoScaling) CreateLaunchTemplateVersion(ctx context.Context, in *ec2.CreateLaunchTemplateVersionInput, optFns ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateVersionOutput, error) {
	return a.lts.CreateLaunchTemplateVersion(ctx, in, optFns...)
}

// DescribeLaunchTemplateVersions implements awsport.LaunchTemplates on the
// account's store.
func (a *AutoScaling) DescribeLaunchTemplateVersions(ctx context.Context, in *ec2.DescribeLaunchTemplateVersionsInput, optFns ...func(*ec2.Options)) (*ec2.DescribeLaunchTemplateVersionsOutput, error) {
	return a.lts.DescribeLaunchTemplateVersions(ctx, in, optFns...)
}

// desiredLaunchTemplate resolves a refresh's DesiredConfiguration, so the
// group gets that version's image.
func (a *AutoScaling) desiredLaunchTemplate(name, version string) (asg.LaunchTemplate, error) {
	t, err := a.lts.template(nil, &name)
	if err != nil {
		return asg.LaunchTemplate{}, err
	}
	v, err := t.resolve(version)
	if err != nil {
		return asg.LaunchTemplate{}, err
	}
	return asg.LaunchTemplate{Name: name, Version: strconv.FormatInt(v.number, 10), ImageID: v.imageID}, nil
}

// Managed node groups (semantics.md §B "Custom launch template / AMI"): a
// custom-AMI group is upgraded by a new version of its launch template with
// the new ImageId, then UpdateNodegroupVersion with launchTemplate {id or
// name, version}; EKS reads the image from that version.

func (e *EKS) nodegroupTemplates() []templateSeed {
	if e.opts.Nodegroups == nil {
		return nil
	}
	var out []templateSeed
	for _, lt := range e.opts.Nodegroups.LaunchTemplates() {
		out = append(out, templateSeed{id: lt.ID, name: lt.Name, version: lt.Version, imageID: lt.ImageID})
	}
	return out
}

// LaunchTemplates returns EC2's launch template API over the templates
// behind managed node groups and, when groups is not nil, those behind its
// Auto Scaling groups: one store, which groups' port answers from too.
func (e *EKS) LaunchTemplates(groups *AutoScaling) awsport.LaunchTemplates {
	if groups != nil {
		e.lts.join(groups.lts)
		groups.lts = e.lts
	}
	return e.lts
}

// resolveLaunchTemplate is the node group twin's launch template for a
// request's: the version named (default: the template's default version)
// and its image. A template no group runs is passed on as asked, for the
// twin to refuse.
func (e *EKS) resolveLaunchTemplate(group string, in *ekstypes.LaunchTemplateSpecification) (*nodegroup.LaunchTemplate, error) {
	lt := &nodegroup.LaunchTemplate{ID: aws.ToString(in.Id), Name: aws.ToString(in.Name), Version: aws.ToString(in.Version)}
	t, ok := e.lts.find(lt.ID, lt.Name)
	if !ok {
		return lt, nil
	}
	version := lt.Version
	if version == "" {
		version = "$Default"
	}
	v, err := t.resolve(version)
	if err != nil {
		return nil, &ekstypes.InvalidParameterException{ClusterName: &e.opts.Cluster, NodegroupName: &group,
			Message: ptr(fmt.Sprintf("Launch template %s version %s does not exist", t.ref(), version))}
	}
	lt.Version, lt.ImageID = strconv.FormatInt(v.number, 10), v.imageID
	return lt, nil
}
