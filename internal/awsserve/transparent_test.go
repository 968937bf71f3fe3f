package awsserve_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/smithy-go"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/awsport/twinaws"
	"github.com/ladder-eks/ladder/internal/awsserve"
)

// The wire adds nothing and loses nothing: every EKS operation, called
// with the same input on two identical twins — one directly, one through
// the SDK's client and the server — answers the same output or the same
// error code and message. The inputs use every way restJson1 carries a
// member: path labels, scalar and repeated query parameters, and bodies
// with nested structures, maps and lists.
func TestEKSWireIsTransparent(t *testing.T) {
	_, direct := newTwinEKS(t)
	_, behind := newTwinEKS(t)
	srv := serve(t, map[string]http.Handler{awsserve.ServiceEKS: awsserve.NewEKS(behind)}, nil)
	wire := eksClient(srv.URL, staticCredentials(accessKey, secretKey))

	cluster := aws.String("wire")
	subnet := twinaws.SubnetID("wire", region+"a")
	calls := []struct {
		name string
		call func(context.Context, awsport.EKS) (any, error)
	}{
		{"DescribeCluster", func(ctx context.Context, api awsport.EKS) (any, error) {
			return api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: cluster})
		}},
		{"ListNodegroups", func(ctx context.Context, api awsport.EKS) (any, error) {
			return api.ListNodegroups(ctx, &eks.ListNodegroupsInput{ClusterName: cluster, MaxResults: aws.Int32(1)})
		}},
		{"CreateNodegroup", func(ctx context.Context, api awsport.EKS) (any, error) {
			return api.CreateNodegroup(ctx, &eks.CreateNodegroupInput{
				ClusterName: cluster, NodegroupName: aws.String("batch"), NodeRole: aws.String("arn:aws:iam::111122223333:role/node"),
				Subnets: []string{subnet}, InstanceTypes: []string{"m5.large"}, CapacityType: ekstypes.CapacityTypesOnDemand,
				ScalingConfig:      &ekstypes.NodegroupScalingConfig{MinSize: aws.Int32(1), DesiredSize: aws.Int32(1), MaxSize: aws.Int32(3)},
				UpdateConfig:       &ekstypes.NodegroupUpdateConfig{MaxUnavailable: aws.Int32(1)},
				Labels:             map[string]string{"workload": "batch"},
				Taints:             []ekstypes.Taint{{Key: aws.String("batch"), Value: aws.String("true"), Effect: ekstypes.TaintEffectNoSchedule}},
				ClientRequestToken: aws.String("create-batch"),
			})
		}},
		{"CreateNodegroup with an unknown subnet", func(ctx context.Context, api awsport.EKS) (any, error) {
			return api.CreateNodegroup(ctx, &eks.CreateNodegroupInput{ClusterName: cluster, NodegroupName: aws.String("other"),
				NodeRole: aws.String("arn:aws:iam::111122223333:role/node"), Subnets: []string{"subnet-missing"}})
		}},
		{"DescribeNodegroup", func(ctx context.Context, api awsport.EKS) (any, error) {
			return api.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: cluster, NodegroupName: aws.String("batch")})
		}},
		{"DeleteNodegroup", func(ctx context.Context, api awsport.EKS) (any, error) {
			return api.DeleteNodegroup(ctx, &eks.DeleteNodegroupInput{ClusterName: cluster, NodegroupName: aws.String("batch")})
		}},
		{"UpdateNodegroupVersion behind the control plane", func(ctx context.Context, api awsport.EKS) (any, error) {
			return api.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: cluster, NodegroupName: aws.String("system"),
				Version: aws.String("1.31"), Force: true, ClientRequestToken: aws.String("ng")})
		}},
		{"ListAddons", func(ctx context.Context, api awsport.EKS) (any, error) {
			return api.ListAddons(ctx, &eks.ListAddonsInput{ClusterName: cluster})
		}},
		{"DescribeAddon", func(ctx context.Context, api awsport.EKS) (any, error) {
			return api.DescribeAddon(ctx, &eks.DescribeAddonInput{ClusterName: cluster, AddonName: aws.String("vpc-cni")})
		}},
		{"DescribeAddonVersions", func(ctx context.Context, api awsport.EKS) (any, error) {
			return api.DescribeAddonVersions(ctx, &eks.DescribeAddonVersionsInput{KubernetesVersion: aws.String("1.31"),
				AddonName: aws.String("vpc-cni"), Types: []string{"networking", "storage"}, MaxResults: aws.Int32(5)})
		}},
		{"UpdateAddon", func(ctx context.Context, api awsport.EKS) (any, error) {
			return api.UpdateAddon(ctx, &eks.UpdateAddonInput{ClusterName: cluster, AddonName: aws.String("vpc-cni"),
				AddonVersion: aws.String("v1.19.2-eksbuild.1"), ResolveConflicts: ekstypes.ResolveConflictsPreserve, ClientRequestToken: aws.String("addon")})
		}},
		{"ListFargateProfiles", func(ctx context.Context, api awsport.EKS) (any, error) {
			return api.ListFargateProfiles(ctx, &eks.ListFargateProfilesInput{ClusterName: cluster})
		}},
		{"ListInsights", func(ctx context.Context, api awsport.EKS) (any, error) {
			return api.ListInsights(ctx, &eks.ListInsightsInput{ClusterName: cluster,
				Filter: &ekstypes.InsightsFilter{KubernetesVersions: []string{"1.31"}, Categories: []ekstypes.Category{ekstypes.CategoryUpgradeReadiness}}})
		}},
		{"DescribeClusterVersions", func(ctx context.Context, api awsport.EKS) (any, error) {
			return api.DescribeClusterVersions(ctx, &eks.DescribeClusterVersionsInput{ClusterVersions: []string{"1.30", "1.31"}, IncludeAll: aws.Bool(true)})
		}},
		{"UpdateClusterVersion", func(ctx context.Context, api awsport.EKS) (any, error) {
			return api.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: cluster, Version: aws.String("1.31"), ClientRequestToken: aws.String("cp")})
		}},
		{"DescribeUpdate without its node group", func(ctx context.Context, api awsport.EKS) (any, error) {
			return api.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: cluster, UpdateId: aws.String("00000000-0000-0000-0000-000000000000"), NodegroupName: aws.String("system")})
		}},
	}
	for _, c := range calls {
		want, wantErr := c.call(t.Context(), direct)
		got, gotErr := c.call(t.Context(), wire)
		if w, g := errorOf(wantErr), errorOf(gotErr); w != g {
			t.Errorf("%s: error over the wire %q, directly %q", c.name, g, w)
			continue
		}
		if wantErr != nil {
			continue
		}
		if w, g := canonical(reflect.ValueOf(want)), canonical(reflect.ValueOf(got)); !reflect.DeepEqual(w, g) {
			wj, _ := json.Marshal(w)
			gj, _ := json.Marshal(g)
			t.Errorf("%s: over the wire\n%s\ndirectly\n%s", c.name, gj, wj)
		}
	}
}

// errorOf is an error's code and message, "" for none.
func errorOf(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode() + ": " + ae.ErrorMessage()
	}
	if err != nil {
		return "not an API error: " + err.Error()
	}
	return ""
}

// canonical is v as plain values for comparison: exported fields by name,
// without ResultMetadata; nil and empty slices, maps and pointers alike
// absent; times as milliseconds, the wire's precision.
func canonical(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return canonical(v.Elem())
	case reflect.Struct:
		if t, ok := v.Interface().(time.Time); ok {
			return t.UnixMilli()
		}
		out := map[string]any{}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Name == "ResultMetadata" {
				continue
			}
			if c := canonical(v.Field(i)); c != nil {
				out[f.Name] = c
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case reflect.Slice:
		if v.Len() == 0 {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = canonical(v.Index(i))
		}
		return out
	case reflect.Map:
		if v.Len() == 0 {
			return nil
		}
		out := map[string]any{}
		for it := v.MapRange(); it.Next(); {
			out[it.Key().String()] = canonical(it.Value())
		}
		return out
	}
	if v.IsZero() && v.Kind() != reflect.Bool {
		return nil
	}
	return v.Interface()
}
