package cli

import (
	"maps"
	"testing"

	"github.com/ladder-eks/ladder/internal/awsport/twinaws"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// A captured cluster has no pins: an add-on the embedded table has no row
// for (aws-ebs-csi-driver) gets the version DescribeAddonVersions marks
// default for each minor of the upgrade that EKS offers one for; the
// table's add-ons (kube-proxy) and the pins already there are left alone.
func TestOfferAddonVersions(t *testing.T) {
	api := twinaws.NewEKS(twinaws.EKSOptions{Cluster: "c", Region: "us-west-2", Addons: []twinaws.Addon{
		{Name: "aws-ebs-csi-driver", Version: "v1.35.0-eksbuild.1", Versions: map[string]string{"1.31": "v1.36.0-eksbuild.1", "1.32": "v1.37.0-eksbuild.1"}},
		{Name: "kube-proxy", Version: "v1.30.14-eksbuild.28", Versions: map[string]string{"1.31": "v1.31.14-eksbuild.9"}},
	}})
	sc := &scenario.Scenario{}
	sc.Spec.Cluster.Version = "1.30"
	sc.Spec.Addons = []scenario.Addon{
		{Name: "aws-ebs-csi-driver", Version: "v1.35.0-eksbuild.1", Versions: map[string]string{"1.32": "v1.37.1-eksbuild.2"}},
		{Name: "kube-proxy", Version: "v1.30.14-eksbuild.28"},
	}
	if err := offerAddonVersions(t.Context(), api, sc, kubeversion.MustParse("1.33")); err != nil {
		t.Fatal(err)
	}
	for i, want := range []map[string]string{
		{"1.31": "v1.36.0-eksbuild.1", "1.32": "v1.37.1-eksbuild.2"}, // 1.33: EKS offers none
		nil,
	} {
		if got := sc.Spec.Addons[i].Versions; !maps.Equal(got, want) {
			t.Errorf("%s: versions %v, want %v", sc.Spec.Addons[i].Name, got, want)
		}
	}
}
