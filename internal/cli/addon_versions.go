package cli

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// AddonVersionsAPI is EKS's DescribeAddonVersions (awsport.EKS).
type AddonVersionsAPI interface {
	DescribeAddonVersions(ctx context.Context, params *eks.DescribeAddonVersionsInput, optFns ...func(*eks.Options)) (*eks.DescribeAddonVersionsOutput, error)
}

// offerAddonVersions pins, for each minor of the upgrade from the
// scenario's version to `to`, the version EKS offers as default for an
// add-on the embedded table has no row for (aws-ebs-csi-driver: AWS
// publishes no table, only DescribeAddonVersions knows). A captured
// cluster has no spec.addons[].versions of its own, and without a target
// the plan would leave such an add-on where it is.
func offerAddonVersions(ctx context.Context, api AddonVersionsAPI, sc *scenario.Scenario, to kubeversion.Minor) error {
	from, err := kubeversion.Parse(sc.Spec.Cluster.Version)
	if err != nil {
		return err
	}
	for i := range sc.Spec.Addons {
		a := &sc.Spec.Addons[i]
		for m := from.Next(); !to.Less(m); m = m.Next() {
			minor := m.String()
			if _, pinned := a.Versions[minor]; pinned {
				continue
			}
			if _, ok := catalog.LatestAddon(a.Name, minor); ok {
				continue
			}
			v, err := defaultAddonVersion(ctx, api, a.Name, minor)
			if err != nil {
				return err
			}
			if v == "" {
				continue
			}
			if a.Versions == nil {
				a.Versions = map[string]string{}
			}
			a.Versions[minor] = v
		}
	}
	return nil
}

// defaultAddonVersion is the version DescribeAddonVersions marks default
// for an add-on at a Kubernetes minor ("" if none).
func defaultAddonVersion(ctx context.Context, api AddonVersionsAPI, addon, minor string) (string, error) {
	in := &eks.DescribeAddonVersionsInput{AddonName: aws.String(addon), KubernetesVersion: aws.String(minor)}
	for {
		out, err := api.DescribeAddonVersions(ctx, in)
		if err != nil {
			return "", fmt.Errorf("DescribeAddonVersions %s for %s: %w", addon, minor, err)
		}
		for _, info := range out.Addons {
			for _, v := range info.AddonVersions {
				for _, c := range v.Compatibilities {
					if c.DefaultVersion && aws.ToString(c.ClusterVersion) == minor {
						return aws.ToString(v.AddonVersion), nil
					}
				}
			}
		}
		if aws.ToString(out.NextToken) == "" {
			return "", nil
		}
		in.NextToken = out.NextToken
	}
}
