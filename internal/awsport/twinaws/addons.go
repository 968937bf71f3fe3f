package twinaws

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/rules/addon"
	twineks "github.com/ladder-eks/ladder/internal/twin/eks"
)

// Add-ons (aws-apis.md §2.9): the port keeps each installed add-on's
// version and updates. UpdateAddon is checked with the EKS twin's rule
// (rules/addon.CheckUpdate: one minor at a time, kube-proxy's skew),
// then EKSOptions.ApplyAddon rolls the new images out; the update is
// InProgress (the add-on UPDATING) until that rollout reports done.

// ListAddons implements awsport.EKS: names in order, paginated.
func (e *EKS) ListAddons(_ context.Context, in *eks.ListAddonsInput, _ ...func(*eks.Options)) (*eks.ListAddonsOutput, error) {
	if err := e.cluster(in.ClusterName); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(e.addons))
	for n := range e.addons {
		names = append(names, n)
	}
	items, next, err := e.pageNames(names, in.MaxResults, in.NextToken)
	if err != nil {
		return nil, err
	}
	return &eks.ListAddonsOutput{Addons: items, NextToken: next}, nil
}

// DescribeAddon implements awsport.EKS.
func (e *EKS) DescribeAddon(_ context.Context, in *eks.DescribeAddonInput, _ ...func(*eks.Options)) (*eks.DescribeAddonOutput, error) {
	name := aws.ToString(in.AddonName)
	a, err := e.addon(in.ClusterName, name)
	if err != nil {
		return nil, err
	}
	status := ekstypes.AddonStatusActive
	if a.rolledOut != nil {
		status = ekstypes.AddonStatusUpdating
	}
	return &eks.DescribeAddonOutput{Addon: &ekstypes.Addon{
		AddonName:    &name,
		ClusterName:  &e.opts.Cluster,
		AddonVersion: ptr(a.version),
		Status:       status,
		AddonArn:     ptr(fmt.Sprintf("arn:aws:eks:%s:%s:addon/%s/%s/%s", e.opts.Region, e.opts.Account, e.opts.Cluster, name, uuid(e.opts.Cluster, "/addon/", name))),
		Health:       &ekstypes.AddonHealth{Issues: []ekstypes.AddonIssue{}},
	}}, nil
}

// DescribeAddonVersions implements awsport.EKS from the embedded catalog,
// which knows the latest version of each add-on per Kubernetes minor: each
// is listed as that minor's default (compatibilities[].defaultVersion).
func (e *EKS) DescribeAddonVersions(_ context.Context, in *eks.DescribeAddonVersionsInput, _ ...func(*eks.Options)) (*eks.DescribeAddonVersionsOutput, error) {
	byAddon := map[string]*ekstypes.AddonInfo{}
	var order []string
	offer := func(addon, minor, version string) {
		if in.AddonName != nil && *in.AddonName != addon {
			return
		}
		if in.KubernetesVersion != nil && *in.KubernetesVersion != minor {
			return
		}
		info, ok := byAddon[addon]
		if !ok {
			info = &ekstypes.AddonInfo{AddonName: ptr(addon), Type: ptr(addonType(addon)), Owner: ptr("aws"), Publisher: ptr("eks")}
			byAddon[addon] = info
			order = append(order, addon)
		}
		info.AddonVersions = append(info.AddonVersions, ekstypes.AddonVersionInfo{
			AddonVersion:    ptr(version),
			Compatibilities: []ekstypes.Compatibility{{ClusterVersion: ptr(minor), DefaultVersion: true}},
		})
	}
	// An installed add-on's own versions (a scenario's pins) come first
	// and stand for the table's row of their minor.
	pinned := map[[2]string]bool{}
	for _, name := range slices.Sorted(maps.Keys(e.addons)) {
		a := e.addons[name]
		for _, minor := range slices.Sorted(maps.Keys(a.versions)) {
			offer(name, minor, a.versions[minor])
			pinned[[2]string{name, minor}] = true
		}
	}
	for _, row := range catalog.AddonVersions() {
		if row.Version == "" || row.KubernetesMinor == "*" || pinned[[2]string{row.Addon, row.KubernetesMinor}] {
			continue
		}
		offer(row.Addon, row.KubernetesMinor, row.Version)
	}
	sort.Strings(order)
	out := make([]ekstypes.AddonInfo, 0, len(order))
	for _, n := range order {
		out = append(out, *byAddon[n])
	}
	items, next, err := page(out, in.MaxResults, in.NextToken, eksMaxResults)
	if err != nil {
		return nil, &ekstypes.InvalidParameterException{Message: ptr(err.Error())}
	}
	return &eks.DescribeAddonVersionsOutput{Addons: items, NextToken: next}, nil
}

func addonType(name string) string {
	switch name {
	case "vpc-cni", "coredns", "kube-proxy":
		return "networking"
	case "aws-ebs-csi-driver":
		return "storage"
	}
	return "other"
}

// UpdateAddon implements awsport.EKS. A second update while one runs is
// ResourceInUseException; a version the twin's rule refuses is
// InvalidParameterException. A clientRequestToken already used returns the
// update it started.
func (e *EKS) UpdateAddon(_ context.Context, in *eks.UpdateAddonInput, _ ...func(*eks.Options)) (*eks.UpdateAddonOutput, error) {
	name := aws.ToString(in.AddonName)
	a, err := e.addon(in.ClusterName, name)
	if err != nil {
		return nil, err
	}
	key := "addon/" + name + "/" + aws.ToString(in.ClientRequestToken)
	if u, ok := e.tokens[key]; ok && in.ClientRequestToken != nil {
		return &eks.UpdateAddonOutput{Update: copyUpdate(u)}, nil
	}
	if a.rolledOut != nil {
		running := a.updates[len(a.updates)-1]
		return nil, &ekstypes.ResourceInUseException{ClusterName: &e.opts.Cluster, AddonName: &name,
			Message: ptr(fmt.Sprintf("Cannot AddonUpdate because addon %s currently has update %s in progress", name, aws.ToString(running.Id)))}
	}
	to := aws.ToString(in.AddonVersion)
	if to == "" {
		latest, ok := catalog.LatestAddon(name, e.opts.ControlPlane.Version().String())
		if !ok {
			return nil, &ekstypes.InvalidParameterException{ClusterName: &e.opts.Cluster, AddonName: &name, Message: ptr("Addon version specified is not supported")}
		}
		to = latest.Version
	}
	if err := addon.CheckUpdate(name, a.version, to, e.opts.ControlPlane.Version(), kubelets(e.opts.ControlPlane)); err != nil {
		return nil, &ekstypes.InvalidParameterException{ClusterName: &e.opts.Cluster, AddonName: &name, Message: ptr(err.Error())}
	}
	u := &ekstypes.Update{
		Id:        ptr(uuid(e.opts.Cluster, "/addon/", name, "/", len(a.updates))),
		Status:    ekstypes.UpdateStatusInProgress,
		Type:      ekstypes.UpdateTypeAddonUpdate,
		Params:    []ekstypes.UpdateParam{{Type: ekstypes.UpdateParamTypeAddonVersion, Value: ptr(to)}},
		CreatedAt: ptr(e.now()),
		Errors:    []ekstypes.ErrorDetail{},
	}
	if in.ResolveConflicts != "" {
		u.Params = append(u.Params, ekstypes.UpdateParam{Type: ekstypes.UpdateParamTypeResolveConflicts, Value: ptr(string(in.ResolveConflicts))})
	}
	done := func() bool { return true }
	if e.opts.ApplyAddon != nil {
		var err error
		if done, err = e.opts.ApplyAddon(name, to); err != nil {
			return nil, &ekstypes.InvalidRequestException{ClusterName: &e.opts.Cluster, AddonName: &name, Message: ptr(err.Error())}
		}
	}
	a.updates = append(a.updates, u)
	a.to, a.rolledOut = to, done
	if in.ClientRequestToken != nil {
		e.tokens[key] = u
	}
	out := copyUpdate(u)
	e.progress(a)
	return &eks.UpdateAddonOutput{Update: out}, nil
}

// addon is an installed add-on of the cluster, with its update's progress
// brought up to date.
func (e *EKS) addon(cluster *string, name string) (*addonState, error) {
	if err := e.cluster(cluster); err != nil {
		return nil, err
	}
	a, ok := e.addons[name]
	if !ok {
		return nil, addonNotFound(e.opts.Cluster, name)
	}
	e.progress(a)
	return a, nil
}

// progress finishes an add-on's update once its rollout is done.
func (e *EKS) progress(a *addonState) {
	if a.rolledOut == nil || !a.rolledOut() {
		return
	}
	a.updates[len(a.updates)-1].Status = ekstypes.UpdateStatusSuccessful
	a.version, a.rolledOut = a.to, nil
}

// kubelets is the control plane's view of every node's kubelet.
func kubelets(cp *twineks.ControlPlane) map[string]string {
	if cp.Kubelets == nil {
		return nil
	}
	return cp.Kubelets()
}
