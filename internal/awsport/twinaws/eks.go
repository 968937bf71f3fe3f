// Package twinaws implements the AWS ports (internal/awsport) over Ladder's
// twins: the EKS control plane (internal/twin/eks), managed node groups
// (twin/mng), Fargate (twin/fargate), self-managed Auto Scaling groups
// (twin/asg) and the embedded catalog of EKS-optimized AMIs, add-on
// versions and the EKS release calendar (internal/catalog).
//
// Every call is synchronous in virtual time: an update is accepted (or
// refused with the SDK's typed error) at once and runs as the twin's engine
// advances, which happens in the Kubernetes port's Wait
// (kubeport/twinport). A caller polls DescribeUpdate or
// DescribeInstanceRefreshes inside that Wait, as it would poll AWS.
// docs/ports.md lists what each operation models and what it leaves out.
package twinaws

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	"github.com/ladder-eks/ladder/internal/sim"
	twineks "github.com/ladder-eks/ladder/internal/twin/eks"
	"github.com/ladder-eks/ladder/internal/twin/fargate"
	"github.com/ladder-eks/ladder/internal/twin/mng"
)

// eksMaxResults is EKS's page limit and default (aws-apis.md §2.13).
const eksMaxResults = 100

// Addon is an installed EKS add-on.
type Addon struct {
	Name    string
	Version string
	// Versions are the versions EKS offers this add-on at, by Kubernetes
	// minor, beyond the embedded table (the scenario's spec.addons[].versions):
	// DescribeAddonVersions lists each as its minor's default.
	Versions map[string]string
}

// EKSOptions wire the EKS port to a rehearsal's twins.
type EKSOptions struct {
	Engine       *sim.Engine
	Cluster      string
	Region       string
	Account      string // default 111122223333
	ControlPlane *twineks.ControlPlane
	Nodegroups   *mng.Service     // nil: no managed node groups
	Fargate      *fargate.Fargate // nil: no Fargate profiles
	Addons       []Addon          // the installed add-ons
	// ApplyAddon carries out an accepted UpdateAddon on the cluster (new
	// images in the add-on's workloads) and returns a function that reports
	// when the rollout has finished. nil: an update succeeds at once.
	ApplyAddon func(name, version string) (rolledOut func() bool, err error)
	// Insights are the cluster's EKS upgrade insights, for ListInsights and
	// the readiness check of UpdateClusterVersion. nil: none.
	Insights func() []ekstypes.InsightSummary
	// EnforceInsights refuses UpdateClusterVersion without force while an
	// UPGRADE_READINESS insight for the target is ERROR (InvalidStateException,
	// aws-apis.md §2.5 step 6).
	EnforceInsights bool
}

// EKS is awsport.EKS on the twins.
type EKS struct {
	opts EKSOptions
	// updates are the control plane's updates, oldest first.
	updates []*ekstypes.Update
	// tokens maps a clientRequestToken to the update it started.
	tokens map[string]*ekstypes.Update
	// ngUpdates holds each node group update as last built for
	// DescribeUpdate, rebuilt only when its status or errors change: the
	// executor polls an update after every twin event.
	ngUpdates map[[2]string]builtUpdate // by node group and update ID
	addons    map[string]*addonState
	// nodeRoles are the IAM roles node groups were created with, by name.
	nodeRoles map[string]string
	// lts is the account's launch templates (launchtemplates.go), those
	// behind managed node groups among them.
	lts *launchTemplates
}

type addonState struct {
	version   string
	versions  map[string]string // offered beyond the table, by minor
	updates   []*ekstypes.Update
	to        string
	rolledOut func() bool
}

var _ awsport.EKS = (*EKS)(nil)
var _ awsport.ClusterLister = (*EKS)(nil)

// NewEKS returns the EKS port of the twins in opts.
func NewEKS(opts EKSOptions) *EKS {
	if opts.Account == "" {
		opts.Account = "111122223333"
	}
	e := &EKS{opts: opts, tokens: map[string]*ekstypes.Update{}, ngUpdates: map[[2]string]builtUpdate{}, addons: map[string]*addonState{}, nodeRoles: map[string]string{}}
	e.lts = newLaunchTemplates(e.nodegroupTemplates)
	if opts.Engine != nil {
		e.lts.now = opts.Engine.Now
	}
	for _, a := range opts.Addons {
		e.addons[a.Name] = &addonState{version: a.Version, versions: a.Versions}
	}
	return e
}

func (e *EKS) now() time.Time { return e.opts.Engine.Now() }

func (e *EKS) cluster(name *string) error {
	if aws.ToString(name) != e.opts.Cluster {
		return clusterNotFound(aws.ToString(name))
	}
	return nil
}

// ListClusters implements awsport.ClusterLister: the twin holds one
// cluster. The list fits one page, so MaxResults and NextToken change
// nothing.
func (e *EKS) ListClusters(_ context.Context, _ *eks.ListClustersInput, _ ...func(*eks.Options)) (*eks.ListClustersOutput, error) {
	return &eks.ListClustersOutput{Clusters: []string{e.opts.Cluster}}, nil
}

// DescribeCluster implements awsport.EKS.
func (e *EKS) DescribeCluster(_ context.Context, in *eks.DescribeClusterInput, _ ...func(*eks.Options)) (*eks.DescribeClusterOutput, error) {
	if err := e.cluster(in.Name); err != nil {
		return nil, err
	}
	cp := e.opts.ControlPlane
	status := ekstypes.ClusterStatusActive
	if cp.Updating() {
		status = ekstypes.ClusterStatusUpdating
	}
	return &eks.DescribeClusterOutput{Cluster: &ekstypes.Cluster{
		Name:     &e.opts.Cluster,
		Arn:      ptr(fmt.Sprintf("arn:aws:eks:%s:%s:cluster/%s", e.opts.Region, e.opts.Account, e.opts.Cluster)),
		Version:  ptr(cp.Version().String()),
		Status:   status,
		Endpoint: ptr(cp.Endpoint()),
		Identity: &ekstypes.Identity{Oidc: &ekstypes.OIDC{Issuer: ptr(cp.OIDCIssuer())}},
	}}, nil
}

// UpdateClusterVersion implements awsport.EKS with the control plane's
// rules (semantics.md §E): one minor up, no update in progress, the node
// precondition; then the readiness insights unless force. A
// clientRequestToken already used returns the update it started.
func (e *EKS) UpdateClusterVersion(_ context.Context, in *eks.UpdateClusterVersionInput, _ ...func(*eks.Options)) (*eks.UpdateClusterVersionOutput, error) {
	if err := e.cluster(in.Name); err != nil {
		return nil, err
	}
	if u, ok := e.tokens[aws.ToString(in.ClientRequestToken)]; ok && in.ClientRequestToken != nil {
		return &eks.UpdateClusterVersionOutput{Update: copyUpdate(u)}, nil
	}
	cp := e.opts.ControlPlane
	if cp.Updating() {
		running := e.updates[len(e.updates)-1]
		return nil, &ekstypes.ResourceInUseException{ClusterName: &e.opts.Cluster,
			Message: ptr(fmt.Sprintf("Cannot VersionUpdate because cluster %s currently has update %s in progress", e.opts.Cluster, aws.ToString(running.Id)))}
	}
	target, ok := catalog.NormalizeMinor(aws.ToString(in.Version))
	if !ok {
		return nil, invalidParameter(e.opts.Cluster, "unsupported Kubernetes version")
	}
	if _, known := catalog.LookupRelease(target); !known {
		return nil, invalidParameter(e.opts.Cluster, "unsupported Kubernetes version")
	}
	if e.opts.EnforceInsights && !in.Force && e.opts.Insights != nil {
		for _, ins := range e.opts.Insights() {
			if ins.Category == ekstypes.CategoryUpgradeReadiness && aws.ToString(ins.KubernetesVersion) == target &&
				ins.InsightStatus != nil && ins.InsightStatus.Status == ekstypes.InsightStatusValueError {
				return nil, &ekstypes.InvalidStateException{ClusterName: &e.opts.Cluster,
					Message: ptr("Upgrade readiness issues detected. Call the EKS ListInsights API to view upgrade blocking issues detected by EKS. Pass the force flag to override upgrade readiness errors and proceed with upgrade.")}
			}
		}
	}
	minor, err := kubeversion.Parse(target)
	if err != nil {
		return nil, invalidParameter(e.opts.Cluster, err.Error())
	}
	u := &ekstypes.Update{
		Id:        ptr(uuid(e.opts.Cluster, "/cluster/", len(e.updates))),
		Status:    ekstypes.UpdateStatusInProgress,
		Type:      ekstypes.UpdateTypeVersionUpdate,
		Params:    []ekstypes.UpdateParam{{Type: ekstypes.UpdateParamTypeVersion, Value: ptr(target)}},
		CreatedAt: ptr(e.now()),
		Errors:    []ekstypes.ErrorDetail{},
	}
	if err := cp.Update(minor, func() { u.Status = ekstypes.UpdateStatusSuccessful }); err != nil {
		return nil, eksError(e.opts.Cluster, "", err)
	}
	e.updates = append(e.updates, u)
	if in.ClientRequestToken != nil {
		e.tokens[*in.ClientRequestToken] = u
	}
	return &eks.UpdateClusterVersionOutput{Update: copyUpdate(u)}, nil
}

// DescribeUpdate implements awsport.EKS. Updates are scoped (aws-apis.md
// §2.6): a node group's or an add-on's update is found only with its
// NodegroupName or AddonName.
func (e *EKS) DescribeUpdate(_ context.Context, in *eks.DescribeUpdateInput, _ ...func(*eks.Options)) (*eks.DescribeUpdateOutput, error) {
	if err := e.cluster(in.Name); err != nil {
		return nil, err
	}
	id := aws.ToString(in.UpdateId)
	var list []*ekstypes.Update
	switch {
	case in.NodegroupName != nil:
		// Read the one update record, not the group's status: the
		// executor polls this after every twin event.
		if e.opts.Nodegroups != nil {
			if u, ok := e.opts.Nodegroups.UpdateRecord(*in.NodegroupName, id); ok {
				key := [2]string{*in.NodegroupName, id}
				b, ok := e.ngUpdates[key]
				if !ok || b.status != u.Status || b.errors != len(u.Errors) {
					b = builtUpdate{status: u.Status, errors: len(u.Errors), update: nodegroupUpdate(u)}
					e.ngUpdates[key] = b
				}
				return &eks.DescribeUpdateOutput{Update: copyUpdate(b.update)}, nil
			}
		}
		if _, ok := e.nodegroup(*in.NodegroupName); !ok {
			return nil, nodegroupNotFound(e.opts.Cluster, *in.NodegroupName)
		}
	case in.AddonName != nil:
		a, err := e.addon(in.Name, *in.AddonName)
		if err != nil {
			return nil, err
		}
		list = a.updates
	default:
		list = e.updates
	}
	for _, u := range list {
		if aws.ToString(u.Id) == id {
			return &eks.DescribeUpdateOutput{Update: copyUpdate(u)}, nil
		}
	}
	return nil, updateNotFound(id)
}

// builtUpdate is a node group update as DescribeUpdate last returned it,
// with the record's status and error count it was built from.
type builtUpdate struct {
	status string
	errors int
	update *ekstypes.Update
}

func copyUpdate(u *ekstypes.Update) *ekstypes.Update {
	c := *u
	c.Params = append([]ekstypes.UpdateParam(nil), u.Params...)
	c.Errors = append([]ekstypes.ErrorDetail{}, u.Errors...)
	return &c
}

// nodegroup is a node group as DescribeNodegroup shows it, without its
// nodes and updates (O(1) in its size: a wait polls it after every twin
// event); a deleted group is gone, as in EKS.
func (e *EKS) nodegroup(name string) (mng.Status, bool) {
	if e.opts.Nodegroups == nil {
		return mng.Status{}, false
	}
	st, ok := e.opts.Nodegroups.Describe(name)
	if !ok || st.Status == mng.StatusDeleted {
		return mng.Status{}, false
	}
	return st, true
}

// nodegroupUpdate is a node group update as DescribeUpdate returns it.
func nodegroupUpdate(u mng.Update) *ekstypes.Update {
	out := &ekstypes.Update{
		Id:        ptr(u.ID),
		Status:    ekstypes.UpdateStatus(u.Status),
		Type:      ekstypes.UpdateTypeVersionUpdate,
		CreatedAt: ptr(u.CreatedAt),
		Errors:    []ekstypes.ErrorDetail{},
	}
	if u.ToVersion != (u.FromVersion) || u.ToReleaseVersion != "" {
		out.Params = append(out.Params, ekstypes.UpdateParam{Type: ekstypes.UpdateParamTypeVersion, Value: ptr(u.ToVersion.String())})
	}
	if u.ToReleaseVersion != "" {
		out.Params = append(out.Params, ekstypes.UpdateParam{Type: ekstypes.UpdateParamTypeReleaseVersion, Value: ptr(u.ToReleaseVersion)})
	}
	if u.ToLaunchTemplateVersion != "" {
		out.Params = append(out.Params, ekstypes.UpdateParam{Type: ekstypes.UpdateParamTypeLaunchTemplateVersion, Value: ptr(u.ToLaunchTemplateVersion)})
	}
	for _, f := range u.Errors {
		out.Errors = append(out.Errors, ekstypes.ErrorDetail{ErrorCode: ekstypes.ErrorCode(f.Code), ErrorMessage: ptr(f.Message), ResourceIds: append([]string{}, f.ResourceIDs...)})
	}
	return out
}

// ListNodegroups implements awsport.EKS: names in order, paginated.
func (e *EKS) ListNodegroups(_ context.Context, in *eks.ListNodegroupsInput, _ ...func(*eks.Options)) (*eks.ListNodegroupsOutput, error) {
	if err := e.cluster(in.ClusterName); err != nil {
		return nil, err
	}
	names := []string{}
	if e.opts.Nodegroups != nil {
		for _, st := range e.opts.Nodegroups.Statuses() {
			if st.Status != mng.StatusDeleted {
				names = append(names, st.Name)
			}
		}
	}
	items, next, err := e.pageNames(names, in.MaxResults, in.NextToken)
	if err != nil {
		return nil, err
	}
	return &eks.ListNodegroupsOutput{Nodegroups: items, NextToken: next}, nil
}

// DescribeNodegroup implements awsport.EKS.
func (e *EKS) DescribeNodegroup(_ context.Context, in *eks.DescribeNodegroupInput, _ ...func(*eks.Options)) (*eks.DescribeNodegroupOutput, error) {
	if err := e.cluster(in.ClusterName); err != nil {
		return nil, err
	}
	st, ok := e.nodegroup(aws.ToString(in.NodegroupName))
	if !ok {
		return nil, nodegroupNotFound(e.opts.Cluster, aws.ToString(in.NodegroupName))
	}
	return &eks.DescribeNodegroupOutput{Nodegroup: e.describeNodegroup(st)}, nil
}

func (e *EKS) describeNodegroup(st mng.Status) *ekstypes.Nodegroup {
	ng := &ekstypes.Nodegroup{
		NodegroupName: ptr(st.Name),
		ClusterName:   &e.opts.Cluster,
		NodegroupArn:  ptr(fmt.Sprintf("arn:aws:eks:%s:%s:nodegroup/%s/%s/%s", e.opts.Region, e.opts.Account, e.opts.Cluster, st.Name, uuid(e.opts.Cluster, "/nodegroup/", st.Name))),
		Version:       ptr(st.Version.String()),
		Status:        ekstypes.NodegroupStatus(st.Status),
		CapacityType:  ekstypes.CapacityTypes(st.CapacityType),
		ScalingConfig: &ekstypes.NodegroupScalingConfig{MinSize: ptr(int32(st.Min)), MaxSize: ptr(int32(st.Max)), DesiredSize: ptr(int32(st.Desired))},
		Health:        &ekstypes.NodegroupHealth{Issues: []ekstypes.Issue{}},
	}
	if st.ReleaseVersion != "" {
		ng.ReleaseVersion = ptr(st.ReleaseVersion)
	}
	if len(st.InstanceTypes) > 0 {
		ng.InstanceTypes = st.InstanceTypes
	}
	if st.AMIType != "" {
		ng.AmiType = ekstypes.AMITypes(st.AMIType)
	}
	ng.Subnets = e.subnetIDs(st.Zones)
	ng.NodeRole = ptr(e.nodeRole(st.Name))
	ng.Labels = st.Labels
	for _, t := range st.Taints {
		ng.Taints = append(ng.Taints, ekstypes.Taint{Key: ptr(t.Key), Value: ptr(t.Value), Effect: awsport.EKSTaintEffect(t.Effect)})
	}
	ng.UpdateConfig = &ekstypes.NodegroupUpdateConfig{UpdateStrategy: ekstypes.NodegroupUpdateStrategies(st.UpdateStrategy)}
	if n := st.UpdateConfig.MaxUnavailable; n != nil {
		ng.UpdateConfig.MaxUnavailable = ptr(int32(*n))
	}
	if n := st.UpdateConfig.MaxUnavailablePercentage; n != nil {
		ng.UpdateConfig.MaxUnavailablePercentage = ptr(int32(*n))
	}
	if lt := st.LaunchTemplate; lt != nil {
		ng.LaunchTemplate = &ekstypes.LaunchTemplateSpecification{Version: ptr(lt.Version)}
		if lt.ID != "" {
			ng.LaunchTemplate.Id = ptr(lt.ID)
		}
		if lt.Name != "" {
			ng.LaunchTemplate.Name = ptr(lt.Name)
		}
	}
	for _, f := range st.Health {
		ng.Health.Issues = append(ng.Health.Issues, ekstypes.Issue{Code: ekstypes.NodegroupIssueCode(f.Code), Message: ptr(f.Message), ResourceIds: append([]string{}, f.ResourceIDs...)})
	}
	return ng
}

// UpdateNodegroupVersion implements awsport.EKS with the managed node
// group twin's rules (semantics.md §B); the update runs in virtual time
// and is read back with DescribeUpdate and the group's NodegroupName. A
// clientRequestToken already used returns the update it started.
func (e *EKS) UpdateNodegroupVersion(_ context.Context, in *eks.UpdateNodegroupVersionInput, _ ...func(*eks.Options)) (*eks.UpdateNodegroupVersionOutput, error) {
	if err := e.cluster(in.ClusterName); err != nil {
		return nil, err
	}
	name := aws.ToString(in.NodegroupName)
	if _, ok := e.nodegroup(name); !ok {
		return nil, nodegroupNotFound(e.opts.Cluster, name)
	}
	key := "nodegroup/" + name + "/" + aws.ToString(in.ClientRequestToken)
	if u, ok := e.tokens[key]; ok && in.ClientRequestToken != nil {
		st, _ := e.opts.Nodegroups.Status(name)
		for _, mu := range st.Updates {
			if mu.ID == aws.ToString(u.Id) {
				return &eks.UpdateNodegroupVersionOutput{Update: nodegroupUpdate(mu)}, nil
			}
		}
	}
	req := nodegroup.UpdateRequest{Version: aws.ToString(in.Version), ReleaseVersion: aws.ToString(in.ReleaseVersion), Force: in.Force}
	if in.LaunchTemplate != nil {
		lt, err := e.resolveLaunchTemplate(name, in.LaunchTemplate)
		if err != nil {
			return nil, err
		}
		req.LaunchTemplate = lt
	}
	if err := e.opts.Nodegroups.UpdateVersion(name, req, nil); err != nil {
		return nil, eksError(e.opts.Cluster, name, err)
	}
	st, _ := e.opts.Nodegroups.Status(name)
	u := nodegroupUpdate(st.Updates[len(st.Updates)-1])
	if in.ClientRequestToken != nil {
		e.tokens[key] = u
	}
	return &eks.UpdateNodegroupVersionOutput{Update: u}, nil
}

// CreateNodegroup implements awsport.EKS: the group is CREATING until its
// nodes are Ready, then ACTIVE (or CREATE_FAILED). Its subnets are the
// zones its nodes spread over; a launch template version's image makes it
// a custom-AMI group.
func (e *EKS) CreateNodegroup(_ context.Context, in *eks.CreateNodegroupInput, _ ...func(*eks.Options)) (*eks.CreateNodegroupOutput, error) {
	if err := e.cluster(in.ClusterName); err != nil {
		return nil, err
	}
	name := aws.ToString(in.NodegroupName)
	if e.opts.Nodegroups == nil {
		return nil, &ekstypes.InvalidRequestException{ClusterName: &e.opts.Cluster, NodegroupName: &name, Message: ptr("the twin has no managed node group service")}
	}
	spec := nodegroup.Spec{
		Name:           name,
		InstanceTypes:  in.InstanceTypes,
		CapacityType:   string(in.CapacityType),
		AMIType:        string(in.AmiType),
		Version:        aws.ToString(in.Version),
		ReleaseVersion: aws.ToString(in.ReleaseVersion),
		Labels:         in.Labels,
	}
	zones, err := e.subnetZones(name, in.Subnets)
	if err != nil {
		return nil, err
	}
	spec.Zones = zones
	if sc := in.ScalingConfig; sc != nil {
		spec.Desired, spec.Min, spec.Max = int(aws.ToInt32(sc.DesiredSize)), int(aws.ToInt32(sc.MinSize)), int(aws.ToInt32(sc.MaxSize))
	}
	if uc := in.UpdateConfig; uc != nil {
		if uc.MaxUnavailable != nil {
			spec.UpdateConfig.MaxUnavailable = ptr(int(*uc.MaxUnavailable))
		}
		if uc.MaxUnavailablePercentage != nil {
			spec.UpdateConfig.MaxUnavailablePercentage = ptr(int(*uc.MaxUnavailablePercentage))
		}
		spec.UpdateStrategy = string(uc.UpdateStrategy)
	}
	if in.LaunchTemplate != nil {
		if spec.LaunchTemplate, err = e.resolveLaunchTemplate(name, in.LaunchTemplate); err != nil {
			return nil, err
		}
	}
	for _, t := range in.Taints {
		spec.Taints = append(spec.Taints, corev1.Taint{Key: aws.ToString(t.Key), Value: aws.ToString(t.Value), Effect: awsport.KubeTaintEffect(t.Effect)})
	}
	if err := e.opts.Nodegroups.Create(spec, nil); err != nil {
		return nil, eksError(e.opts.Cluster, name, err)
	}
	e.nodeRoles[name] = aws.ToString(in.NodeRole)
	st, _ := e.opts.Nodegroups.Status(name)
	return &eks.CreateNodegroupOutput{Nodegroup: e.describeNodegroup(st)}, nil
}

// nodeRole is a node group's IAM role: the one CreateNodegroup was given,
// else the role eksctl creates for a group of the scenario. DescribeNodegroup
// always returns one, and CreateNodegroup requires it, so a blue/green
// client copies blue's into green's.
func (e *EKS) nodeRole(group string) string {
	if r := e.nodeRoles[group]; r != "" {
		return r
	}
	return fmt.Sprintf("arn:aws:iam::%s:role/eksctl-%s-nodegroup-%s-NodeInstanceRole", e.opts.Account, e.opts.Cluster, group)
}

// DeleteNodegroup implements awsport.EKS: the group is DELETING while its
// nodes drain, then gone (ResourceNotFoundException).
func (e *EKS) DeleteNodegroup(_ context.Context, in *eks.DeleteNodegroupInput, _ ...func(*eks.Options)) (*eks.DeleteNodegroupOutput, error) {
	if err := e.cluster(in.ClusterName); err != nil {
		return nil, err
	}
	name := aws.ToString(in.NodegroupName)
	if _, ok := e.nodegroup(name); !ok {
		return nil, nodegroupNotFound(e.opts.Cluster, name)
	}
	if err := e.opts.Nodegroups.Delete(name, nil); err != nil {
		return nil, eksError(e.opts.Cluster, name, err)
	}
	st, _ := e.opts.Nodegroups.Status(name)
	return &eks.DeleteNodegroupOutput{Nodegroup: e.describeNodegroup(st)}, nil
}

// ListFargateProfiles implements awsport.EKS.
func (e *EKS) ListFargateProfiles(_ context.Context, in *eks.ListFargateProfilesInput, _ ...func(*eks.Options)) (*eks.ListFargateProfilesOutput, error) {
	if err := e.cluster(in.ClusterName); err != nil {
		return nil, err
	}
	names := []string{}
	if e.opts.Fargate != nil {
		for _, p := range e.opts.Fargate.Profiles() {
			names = append(names, p.Name)
		}
	}
	items, next, err := e.pageNames(names, in.MaxResults, in.NextToken)
	if err != nil {
		return nil, err
	}
	return &eks.ListFargateProfilesOutput{FargateProfileNames: items, NextToken: next}, nil
}

// DescribeFargateProfile implements awsport.EKS: the profile's selectors
// and subnets (aws-apis.md §2.10), ACTIVE.
func (e *EKS) DescribeFargateProfile(_ context.Context, in *eks.DescribeFargateProfileInput, _ ...func(*eks.Options)) (*eks.DescribeFargateProfileOutput, error) {
	if err := e.cluster(in.ClusterName); err != nil {
		return nil, err
	}
	name := aws.ToString(in.FargateProfileName)
	if e.opts.Fargate != nil {
		for _, p := range e.opts.Fargate.Profiles() {
			if p.Name != name {
				continue
			}
			fp := &ekstypes.FargateProfile{
				FargateProfileName: ptr(p.Name),
				FargateProfileArn:  ptr(fmt.Sprintf("arn:aws:eks:%s:%s:fargateprofile/%s/%s/%s", e.opts.Region, e.opts.Account, e.opts.Cluster, p.Name, uuid(e.opts.Cluster, "/fargateprofile/", p.Name))),
				ClusterName:        &e.opts.Cluster,
				Status:             ekstypes.FargateProfileStatusActive,
				Subnets:            e.subnetIDs(p.Zones),
				Selectors:          []ekstypes.FargateProfileSelector{},
			}
			for _, s := range p.Selectors {
				sel := ekstypes.FargateProfileSelector{Namespace: ptr(s.Namespace)}
				if len(s.Labels) > 0 {
					sel.Labels = maps.Clone(s.Labels)
				}
				fp.Selectors = append(fp.Selectors, sel)
			}
			return &eks.DescribeFargateProfileOutput{FargateProfile: fp}, nil
		}
	}
	return nil, fargateProfileNotFound(e.opts.Cluster, name)
}

// ListInsights implements awsport.EKS over EKSOptions.Insights, with the
// request's filter (categories, Kubernetes versions, statuses).
func (e *EKS) ListInsights(_ context.Context, in *eks.ListInsightsInput, _ ...func(*eks.Options)) (*eks.ListInsightsOutput, error) {
	if err := e.cluster(in.ClusterName); err != nil {
		return nil, err
	}
	all := []ekstypes.InsightSummary{}
	if e.opts.Insights != nil {
		all = e.opts.Insights()
	}
	out := []ekstypes.InsightSummary{}
	for _, ins := range all {
		if f := in.Filter; f != nil {
			if len(f.Categories) > 0 && !contains(f.Categories, ins.Category) {
				continue
			}
			if len(f.KubernetesVersions) > 0 && !contains(f.KubernetesVersions, aws.ToString(ins.KubernetesVersion)) {
				continue
			}
			if len(f.Statuses) > 0 && (ins.InsightStatus == nil || !contains(f.Statuses, ins.InsightStatus.Status)) {
				continue
			}
		}
		out = append(out, ins)
	}
	items, next, err := page(out, in.MaxResults, in.NextToken, eksMaxResults)
	if err != nil {
		return nil, invalidParameter(e.opts.Cluster, err.Error())
	}
	return &eks.ListInsightsOutput{Insights: items, NextToken: next}, nil
}

// DescribeClusterVersions implements awsport.EKS from the embedded EKS
// release calendar, with both status spellings (aws-apis.md §2.12). Without
// includeAll it lists the versions still supported (standard or extended)
// at the twin's current time.
func (e *EKS) DescribeClusterVersions(_ context.Context, in *eks.DescribeClusterVersionsInput, _ ...func(*eks.Options)) (*eks.DescribeClusterVersionsOutput, error) {
	out := []ekstypes.ClusterVersionInformation{}
	for _, r := range catalog.Releases() {
		status, err := catalog.SupportStatus(r.Minor, e.now())
		if err != nil {
			continue // not released on EKS yet
		}
		if len(in.ClusterVersions) > 0 && !contains(in.ClusterVersions, r.Minor) {
			continue
		}
		if in.VersionStatus != "" && string(in.VersionStatus) != status {
			continue
		}
		if status == catalog.StatusUnsupported && !aws.ToBool(in.IncludeAll) && len(in.ClusterVersions) == 0 && in.VersionStatus == "" {
			continue
		}
		out = append(out, ekstypes.ClusterVersionInformation{
			ClusterVersion:           ptr(r.Minor),
			ClusterType:              ptr("eks"),
			ReleaseDate:              ptr(r.EKSRelease),
			EndOfStandardSupportDate: ptr(r.EndOfStandardSupport),
			EndOfExtendedSupportDate: ptr(r.EndOfExtendedSupport),
			VersionStatus:            ekstypes.VersionStatus(status),
			Status:                   ekstypes.ClusterVersionStatus(strings.ReplaceAll(strings.ToLower(status), "_", "-")),
		})
	}
	items, next, err := page(out, in.MaxResults, in.NextToken, eksMaxResults)
	if err != nil {
		return nil, &ekstypes.InvalidParameterException{Message: ptr(err.Error())}
	}
	return &eks.DescribeClusterVersionsOutput{ClusterVersions: items, NextToken: next}, nil
}

// pageNames is a List operation's page of names, in order; a bad page is
// InvalidParameterException.
func (e *EKS) pageNames(names []string, maxResults *int32, nextToken *string) ([]string, *string, error) {
	sort.Strings(names)
	items, next, err := page(names, maxResults, nextToken, eksMaxResults)
	if err != nil {
		return nil, nil, invalidParameter(e.opts.Cluster, err.Error())
	}
	return items, next, nil
}

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
