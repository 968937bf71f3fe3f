package executor

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/kubeport/twinport"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/controlplane"
)

// fakeEKS has no managed node groups.
func (f *fakeEKS) ListNodegroups(context.Context, *eks.ListNodegroupsInput, ...func(*eks.Options)) (*eks.ListNodegroupsOutput, error) {
	return &eks.ListNodegroupsOutput{}, nil
}

func (f *fakeEKS) DescribeNodegroup(_ context.Context, in *eks.DescribeNodegroupInput, _ ...func(*eks.Options)) (*eks.DescribeNodegroupOutput, error) {
	return nil, &ekstypes.ResourceNotFoundException{Message: aws.String("No node group found for name: " + aws.ToString(in.NodegroupName) + ".")}
}

// groupsEKS is fakeEKS with managed node groups at versions, listed one
// per page, as a client must follow nextToken.
type groupsEKS struct {
	*fakeEKS
	groups map[string]string
}

func (g groupsEKS) ListNodegroups(_ context.Context, in *eks.ListNodegroupsInput, _ ...func(*eks.Options)) (*eks.ListNodegroupsOutput, error) {
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range g.groups {
			if !yield(n) {
				return
			}
		}
	})
	i := 0
	if in.NextToken != nil {
		i, _ = strconv.Atoi(*in.NextToken)
	}
	out := &eks.ListNodegroupsOutput{Nodegroups: names[i : i+1]}
	if i+1 < len(names) {
		out.NextToken = aws.String(strconv.Itoa(i + 1))
	}
	return out, nil
}

func (g groupsEKS) DescribeNodegroup(_ context.Context, in *eks.DescribeNodegroupInput, _ ...func(*eks.Options)) (*eks.DescribeNodegroupOutput, error) {
	v := g.groups[aws.ToString(in.NodegroupName)]
	return &eks.DescribeNodegroupOutput{Nodegroup: &ekstypes.Nodegroup{NodegroupName: in.NodegroupName, Version: aws.String(v)}}, nil
}

// TestPreChecks: the executor reads the cluster's version, every managed
// node group's (over pages of ListNodegroups) and every node's kubelet
// through the ports, and holds a hop to the control plane's precondition
// (semantics.md §E, §D.4) before anything changes.
func TestPreChecks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		groups  map[string]string
		kubelet string // a second node's
		pre     controlplane.Precondition
		want    string
	}{
		{name: "groups at the control plane's minor", groups: map[string]string{"a": "1.30", "b": "1.30"}, kubelet: "v1.28.15-eks-1",
			want: "event Normal PreChecksPassed: pre-checks for 1.31 passed: managed node groups at 1.30, every kubelet within the skew policy of 1.31"},
		{name: "a group behind, on the second page", groups: map[string]string{"a": "1.30", "b": "1.29"}, kubelet: "v1.29.15-eks-1",
			want: "pre-check for 1.31: InvalidRequestException: node group b is at Kubernetes 1.29; all managed node groups must be at the cluster's version 1.30 before it can be updated (update the node group first, or relax the precondition as the EKS user guide allows for kubelets within the skew policy)"},
		{name: "relaxed: the group may trail", groups: map[string]string{"a": "1.30", "b": "1.29"}, kubelet: "v1.29.15-eks-1", pre: controlplane.Relaxed,
			want: "event Normal PreChecksPassed: pre-checks for 1.31 passed: managed node groups at 1.30, every kubelet within the skew policy of 1.31"},
		{name: "relaxed: a kubelet beyond the skew policy", groups: map[string]string{"a": "1.30"}, kubelet: "v1.27.16-eks-1", pre: controlplane.Relaxed,
			want: "pre-check for 1.31: node n2 runs kubelet v1.27.16-eks-1, more than 3 minor versions behind Kubernetes 1.31 (version skew policy): upgrade its node group to 1.28 or later first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			ex, api := executor(t, rec, time.Hour)
			ex.Ports.EKS = groupsEKS{fakeEKS: api, groups: tc.groups}
			ex.Precondition = tc.pre
			n2 := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}, Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: tc.kubelet}}}
			if err := ex.Ports.Kube.(*twinport.Port).Cluster().AddNode(n2, true); err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprint(ex.PreChecks(context.Background(), kubeversion.MustParse("1.31")))
			if got == "<nil>" && len(rec.lines) == 1 {
				got = rec.lines[0][5:]
			}
			if got != tc.want {
				t.Errorf("PreChecks:\n got  %s\n want %s", got, tc.want)
			}
		})
	}
}
