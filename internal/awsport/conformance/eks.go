package conformance

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

func eksCases() []namedCase[EKSEnv] {
	return []namedCase[EKSEnv]{
		{"eks/not-found", eksNotFound},
		{"eks/cluster-version-update", eksClusterUpdate},
		{"eks/nodegroup-version-update", eksNodegroupUpdate},
		{"eks/addon-update", eksAddonUpdate},
		{"eks/pagination", eksPagination},
	}
}

// eksNotFound: unknown cluster, node group, add-on and update are
// ResourceNotFoundException, with EKS's messages (aws-apis.md §2.2).
func eksNotFound(ctx context.Context, env EKSEnv) error {
	api, cluster := env.EKS(), env.Cluster()
	_, err := api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(cluster + "-missing")})
	rnf, err := wantError[*ekstypes.ResourceNotFoundException]("DescribeCluster of a missing cluster", err)
	if err != nil {
		return err
	}
	if want := "No cluster found for name: " + cluster + "-missing."; aws.ToString(rnf.Message) != want {
		return fmt.Errorf("DescribeCluster of a missing cluster: message %q, want %q", aws.ToString(rnf.Message), want)
	}
	_, err = api.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: &cluster, NodegroupName: aws.String("missing")})
	if rnf, err = wantError[*ekstypes.ResourceNotFoundException]("DescribeNodegroup of a missing group", err); err != nil {
		return err
	}
	if want := "No node group found for name: missing."; aws.ToString(rnf.Message) != want {
		return fmt.Errorf("DescribeNodegroup of a missing group: message %q, want %q", aws.ToString(rnf.Message), want)
	}
	_, err = api.DescribeAddon(ctx, &eks.DescribeAddonInput{ClusterName: &cluster, AddonName: aws.String("missing")})
	if _, err = wantError[*ekstypes.ResourceNotFoundException]("DescribeAddon of a missing add-on", err); err != nil {
		return err
	}
	_, err = api.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: &cluster, UpdateId: aws.String("00000000-0000-0000-0000-000000000000")})
	if rnf, err = wantError[*ekstypes.ResourceNotFoundException]("DescribeUpdate of a missing update", err); err != nil {
		return err
	}
	if want := "No update found for ID: 00000000-0000-0000-0000-000000000000"; aws.ToString(rnf.Message) != want {
		return fmt.Errorf("DescribeUpdate of a missing update: message %q, want %q", aws.ToString(rnf.Message), want)
	}
	return nil
}

// describeVersion reads the cluster's version and status.
func describeVersion(ctx context.Context, env EKSEnv) (kubeversion.Minor, ekstypes.ClusterStatus, error) {
	out, err := env.EKS().DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(env.Cluster())})
	if err != nil {
		return kubeversion.Minor{}, "", err
	}
	v, err := kubeversion.Parse(aws.ToString(out.Cluster.Version))
	return v, out.Cluster.Status, err
}

// waitUpdate polls DescribeUpdate until the update leaves InProgress and
// returns it.
func waitUpdate(ctx context.Context, env EKSEnv, in *eks.DescribeUpdateInput) (*ekstypes.Update, error) {
	var last *ekstypes.Update
	err := env.Wait(ctx, updateTimeout, func(ctx context.Context) (bool, error) {
		out, err := env.EKS().DescribeUpdate(ctx, in)
		if err != nil {
			return false, err
		}
		last = out.Update
		return last.Status != ekstypes.UpdateStatusInProgress, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for update %s: %w", aws.ToString(in.UpdateId), err)
	}
	return last, nil
}

// upgradeControlPlane runs UpdateClusterVersion to the next minor to the
// end and returns it.
func upgradeControlPlane(ctx context.Context, env EKSEnv) (kubeversion.Minor, error) {
	from, _, err := describeVersion(ctx, env)
	if err != nil {
		return from, err
	}
	to := from.Next()
	out, err := env.EKS().UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: aws.String(env.Cluster()), Version: aws.String(to.String())})
	if err != nil {
		return to, fmt.Errorf("UpdateClusterVersion %s → %s: %w", from, to, err)
	}
	u, err := waitUpdate(ctx, env, &eks.DescribeUpdateInput{Name: aws.String(env.Cluster()), UpdateId: out.Update.Id})
	if err != nil {
		return to, err
	}
	if u.Status != ekstypes.UpdateStatusSuccessful {
		return to, fmt.Errorf("control-plane update to %s ended %s: %+v", to, u.Status, u.Errors)
	}
	return to, nil
}

// eksClusterUpdate: the control plane's update state machine (aws-apis.md
// §2.3, §2.5). Two minors at once is InvalidParameterException; the next
// minor is accepted InProgress, the cluster UPDATING; the same
// clientRequestToken returns the same update; another request meanwhile is
// ResourceInUseException; the update ends Successful, the cluster ACTIVE
// at the new version.
func eksClusterUpdate(ctx context.Context, env EKSEnv) error {
	api, cluster := env.EKS(), env.Cluster()
	from, status, err := describeVersion(ctx, env)
	if err != nil {
		return err
	}
	if status != ekstypes.ClusterStatusActive {
		return fmt.Errorf("the fixture's cluster is %s, want ACTIVE", status)
	}
	_, err = api.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: &cluster, Version: aws.String(from.Next().Next().String())})
	if _, err := wantError[*ekstypes.InvalidParameterException]("UpdateClusterVersion two minors up", err); err != nil {
		return err
	}
	to := from.Next()
	in := &eks.UpdateClusterVersionInput{Name: &cluster, Version: aws.String(to.String()), ClientRequestToken: aws.String("conformance-1")}
	first, err := api.UpdateClusterVersion(ctx, in)
	if err != nil {
		return fmt.Errorf("UpdateClusterVersion %s → %s: %w", from, to, err)
	}
	u := first.Update
	if u.Status != ekstypes.UpdateStatusInProgress || u.Type != ekstypes.UpdateTypeVersionUpdate || aws.ToString(u.Id) == "" || len(u.Errors) != 0 {
		return fmt.Errorf("accepted update: %+v, want an id, InProgress, VersionUpdate, no errors", u)
	}
	if !slices.ContainsFunc(u.Params, func(p ekstypes.UpdateParam) bool {
		return p.Type == ekstypes.UpdateParamTypeVersion && aws.ToString(p.Value) == to.String()
	}) {
		return fmt.Errorf("accepted update's params %+v lack Version=%s", u.Params, to)
	}
	again, err := api.UpdateClusterVersion(ctx, in)
	if err != nil || aws.ToString(again.Update.Id) != aws.ToString(u.Id) {
		return fmt.Errorf("the same clientRequestToken again: %v, %v; want update %s", again, err, aws.ToString(u.Id))
	}
	_, err = api.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: &cluster, Version: aws.String(to.String())})
	riu, err := wantError[*ekstypes.ResourceInUseException]("UpdateClusterVersion while one is in progress", err)
	if err != nil {
		return err
	}
	if want := fmt.Sprintf("Cannot VersionUpdate because cluster %s currently has update %s in progress", cluster, aws.ToString(u.Id)); aws.ToString(riu.Message) != want {
		return fmt.Errorf("ResourceInUseException message %q, want %q", aws.ToString(riu.Message), want)
	}
	if _, status, err := describeVersion(ctx, env); err != nil || status != ekstypes.ClusterStatusUpdating {
		return fmt.Errorf("cluster during the update: %s, %v; want UPDATING", status, err)
	}
	done, err := waitUpdate(ctx, env, &eks.DescribeUpdateInput{Name: &cluster, UpdateId: u.Id})
	if err != nil {
		return err
	}
	if done.Status != ekstypes.UpdateStatusSuccessful || len(done.Errors) != 0 {
		return fmt.Errorf("finished update: %s %+v, want Successful without errors", done.Status, done.Errors)
	}
	v, status, err := describeVersion(ctx, env)
	if err != nil || v != to || status != ekstypes.ClusterStatusActive {
		return fmt.Errorf("cluster after the update: %s %s %v; want %s ACTIVE", v, status, err, to)
	}
	return nil
}

// eksNodegroupUpdate: after the control plane, a node group's
// UpdateNodegroupVersion runs to Successful, read with DescribeUpdate and
// the group's name; without it the update is not found (aws-apis.md
// §2.6). A second update meanwhile is ResourceInUseException.
func eksNodegroupUpdate(ctx context.Context, env EKSEnv) error {
	api, cluster := env.EKS(), env.Cluster()
	to, err := upgradeControlPlane(ctx, env)
	if err != nil {
		return err
	}
	ng := env.Nodegroups()[0]
	out, err := api.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: &cluster, NodegroupName: &ng})
	if err != nil {
		return fmt.Errorf("UpdateNodegroupVersion %s: %w", ng, err)
	}
	u := out.Update
	if u.Status != ekstypes.UpdateStatusInProgress || u.Type != ekstypes.UpdateTypeVersionUpdate {
		return fmt.Errorf("accepted node group update: %+v, want InProgress VersionUpdate", u)
	}
	_, err = api.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: &cluster, NodegroupName: &ng})
	if _, err := wantError[*ekstypes.ResourceInUseException]("UpdateNodegroupVersion while one is in progress", err); err != nil {
		return err
	}
	desc, err := api.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: &cluster, NodegroupName: &ng})
	if err != nil || desc.Nodegroup.Status != ekstypes.NodegroupStatusUpdating {
		return fmt.Errorf("node group during its update: %v; want UPDATING", err)
	}
	_, err = api.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: &cluster, UpdateId: u.Id})
	if _, err := wantError[*ekstypes.ResourceNotFoundException]("DescribeUpdate of a node group update without nodegroupName", err); err != nil {
		return err
	}
	done, err := waitUpdate(ctx, env, &eks.DescribeUpdateInput{Name: &cluster, UpdateId: u.Id, NodegroupName: &ng})
	if err != nil {
		return err
	}
	if done.Status != ekstypes.UpdateStatusSuccessful {
		return fmt.Errorf("node group update ended %s: %+v", done.Status, done.Errors)
	}
	desc, err = api.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: &cluster, NodegroupName: &ng})
	if err != nil || aws.ToString(desc.Nodegroup.Version) != to.String() || desc.Nodegroup.Status != ekstypes.NodegroupStatusActive {
		return fmt.Errorf("node group after its update: %+v, %v; want %s ACTIVE", desc, err, to)
	}
	return nil
}

// eksAddonUpdate: UpdateAddon is an AddonUpdate InProgress, the add-on
// UPDATING; a second meanwhile is ResourceInUseException; read with
// addonName it ends Successful, the add-on ACTIVE at the new version.
func eksAddonUpdate(ctx context.Context, env EKSEnv) error {
	api, cluster := env.EKS(), env.Cluster()
	name, next := env.Addon()
	out, err := api.UpdateAddon(ctx, &eks.UpdateAddonInput{ClusterName: &cluster, AddonName: &name, AddonVersion: &next, ResolveConflicts: ekstypes.ResolveConflictsOverwrite})
	if err != nil {
		return fmt.Errorf("UpdateAddon %s to %s: %w", name, next, err)
	}
	u := out.Update
	if u.Status != ekstypes.UpdateStatusInProgress || u.Type != ekstypes.UpdateTypeAddonUpdate {
		return fmt.Errorf("accepted add-on update: %+v, want InProgress AddonUpdate", u)
	}
	_, err = api.UpdateAddon(ctx, &eks.UpdateAddonInput{ClusterName: &cluster, AddonName: &name, AddonVersion: &next})
	if _, err := wantError[*ekstypes.ResourceInUseException]("UpdateAddon while one is in progress", err); err != nil {
		return err
	}
	a, err := api.DescribeAddon(ctx, &eks.DescribeAddonInput{ClusterName: &cluster, AddonName: &name})
	if err != nil || a.Addon.Status != ekstypes.AddonStatusUpdating {
		return fmt.Errorf("add-on during its update: %+v, %v; want UPDATING", a, err)
	}
	done, err := waitUpdate(ctx, env, &eks.DescribeUpdateInput{Name: &cluster, UpdateId: u.Id, AddonName: &name})
	if err != nil {
		return err
	}
	if done.Status != ekstypes.UpdateStatusSuccessful {
		return fmt.Errorf("add-on update ended %s: %+v", done.Status, done.Errors)
	}
	a, err = api.DescribeAddon(ctx, &eks.DescribeAddonInput{ClusterName: &cluster, AddonName: &name})
	if err != nil || aws.ToString(a.Addon.AddonVersion) != next || a.Addon.Status != ekstypes.AddonStatusActive {
		return fmt.Errorf("add-on after its update: %+v, %v; want %s ACTIVE", a, err, next)
	}
	return nil
}

// eksPagination: maxResults 1 pages through the node groups one by one,
// the last page without nextToken; a token the service did not issue and
// maxResults 0 are InvalidParameterException (aws-apis.md §2.13).
func eksPagination(ctx context.Context, env EKSEnv) error {
	api, cluster := env.EKS(), env.Cluster()
	var got []string
	var token *string
	for pages := 0; ; pages++ {
		if pages > 2 {
			return fmt.Errorf("ListNodegroups with maxResults 1: more than two pages for two node groups (%v)", got)
		}
		out, err := api.ListNodegroups(ctx, &eks.ListNodegroupsInput{ClusterName: &cluster, MaxResults: aws.Int32(1), NextToken: token})
		if err != nil {
			return fmt.Errorf("ListNodegroups page %d: %w", pages+1, err)
		}
		if len(out.Nodegroups) > 1 {
			return fmt.Errorf("ListNodegroups with maxResults 1 returned %v", out.Nodegroups)
		}
		got = append(got, out.Nodegroups...)
		if out.NextToken == nil || *out.NextToken == "" {
			break
		}
		token = out.NextToken
	}
	want := env.Nodegroups()
	slices.Sort(want[:])
	if !slices.Equal(got, want[:]) {
		return fmt.Errorf("ListNodegroups pages: %v, want %v", got, want)
	}
	_, err := api.ListNodegroups(ctx, &eks.ListNodegroupsInput{ClusterName: &cluster, NextToken: aws.String("not-a-token")})
	if _, err := wantError[*ekstypes.InvalidParameterException]("ListNodegroups with a foreign nextToken", err); err != nil {
		return err
	}
	_, err = api.ListNodegroups(ctx, &eks.ListNodegroupsInput{ClusterName: &cluster, MaxResults: aws.Int32(0)})
	if _, err := wantError[*ekstypes.InvalidParameterException]("ListNodegroups with maxResults 0", err); err != nil {
		return err
	}
	// DescribeClusterVersions pages the same way, and lists the cluster's
	// next minor, which the fixture guarantees EKS offers.
	from, _, err := describeVersion(ctx, env)
	if err != nil {
		return err
	}
	var versions []string
	token = nil
	for {
		out, err := api.DescribeClusterVersions(ctx, &eks.DescribeClusterVersionsInput{MaxResults: aws.Int32(2), NextToken: token})
		if err != nil {
			return fmt.Errorf("DescribeClusterVersions: %w", err)
		}
		for _, v := range out.ClusterVersions {
			versions = append(versions, aws.ToString(v.ClusterVersion))
			if v.VersionStatus == "" || v.Status == "" {
				return fmt.Errorf("DescribeClusterVersions: %s lacks versionStatus or status (both spellings are filled)", aws.ToString(v.ClusterVersion))
			}
		}
		if out.NextToken == nil {
			break
		}
		token = out.NextToken
	}
	if !slices.Contains(versions, from.String()) || !slices.Contains(versions, from.Next().String()) {
		return fmt.Errorf("DescribeClusterVersions lists %v, want %s and %s among them", versions, from, from.Next())
	}
	return nil
}
