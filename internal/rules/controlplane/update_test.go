package controlplane

import (
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// TestCheckVersionStep: one minor at a time, never down (semantics.md §E).
func TestCheckVersionStep(t *testing.T) {
	cases := []struct {
		from, to string
		wantErr  string // substring; "" = accepted
	}{
		{from: "1.30", to: "1.31"},
		{from: "1.30", to: "1.30", wantErr: "the cluster is already at Kubernetes 1.30"},
		{from: "1.30", to: "1.29", wantErr: "from 1.30 to 1.29: Amazon EKS clusters cannot be downgraded"},
		{from: "1.30", to: "1.32", wantErr: "one minor version at a time (update to 1.31 first)"},
	}
	for _, tc := range cases {
		t.Run(tc.from+"→"+tc.to, func(t *testing.T) {
			checkErr(t, CheckVersionStep(kubeversion.MustParse(tc.from), kubeversion.MustParse(tc.to)), tc.wantErr)
		})
	}
}

// TestCheckPrecondition: Strict wants every managed node group at the
// control plane's minor (§E, the API reference); both modes want every
// kubelet within the skew policy of the new version: at most three minors
// behind, two for kubelets older than 1.25 (§D.4), never newer. The first
// offender in name order is named.
func TestCheckPrecondition(t *testing.T) {
	cases := []struct {
		name     string
		from, to string
		groups   map[string]string
		kubelets map[string]string
		pre      Precondition
		wantErr  string // substring; "" = accepted
	}{
		{name: "nothing to check", from: "1.30", to: "1.31"},
		{name: "1.28 kubelet, 1.30 → 1.31: 3 behind, allowed", from: "1.30", to: "1.31",
			kubelets: map[string]string{"a": "v1.28.15-eks-1"}},
		{name: "1.27 kubelet, 1.30 → 1.31: 4 behind", from: "1.30", to: "1.31",
			kubelets: map[string]string{"b": "v1.30.14-eks-1", "a": "v1.27.16-eks-1"},
			wantErr:  "node a runs kubelet v1.27.16-eks-1, more than 3 minor versions behind Kubernetes 1.31 (version skew policy): upgrade its node group to 1.28 or later first"},
		{name: "1.24 kubelet, 1.26 → 1.27: 3 behind but pre-1.25 allows 2", from: "1.26", to: "1.27",
			kubelets: map[string]string{"old": "v1.24.17-eks-1"},
			wantErr:  "node old runs kubelet v1.24.17-eks-1, more than 2 minor versions behind Kubernetes 1.27 (version skew policy): upgrade its node group to 1.25 or later first"},
		{name: "kubelet newer than the target", from: "1.30", to: "1.31",
			kubelets: map[string]string{"new": "v1.32.1-eks-1"}, wantErr: "node new runs kubelet v1.32.1-eks-1"},
		{name: "unparseable kubelet", from: "1.30", to: "1.31",
			kubelets: map[string]string{"x": "banana"}, wantErr: `node x reports kubelet "banana"`},
		{name: "strict: groups at the control plane's minor", from: "1.31", to: "1.32",
			groups: map[string]string{"a": "1.31"}, kubelets: map[string]string{"n": "v1.31.7-eks-1"}},
		{name: "strict: a managed group one minor behind blocks", from: "1.31", to: "1.32",
			groups: map[string]string{"zeta": "1.30", "alpha": "1.30"}, kubelets: map[string]string{"n": "v1.30.14-eks-1"},
			wantErr: "InvalidRequestException: node group alpha is at Kubernetes 1.30; all managed node groups must be at the cluster's version 1.31 before it can be updated"},
		{name: "relaxed: the same group may trail within the skew", from: "1.31", to: "1.32", pre: Relaxed,
			groups: map[string]string{"zeta": "1.30", "alpha": "1.30"}, kubelets: map[string]string{"n": "v1.30.14-eks-1"}},
		{name: "relaxed still enforces the skew", from: "1.32", to: "1.33", pre: Relaxed,
			groups: map[string]string{"g": "1.29"}, kubelets: map[string]string{"n": "v1.29.15-eks-1"},
			wantErr: "more than 3 minor versions behind Kubernetes 1.33"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nodes := DataPlane{Kubelets: tc.kubelets}
			if tc.groups != nil {
				nodes.NodeGroups = map[string]kubeversion.Minor{}
				for k, v := range tc.groups {
					nodes.NodeGroups[k] = kubeversion.MustParse(v)
				}
			}
			checkErr(t, CheckPrecondition(kubeversion.MustParse(tc.from), kubeversion.MustParse(tc.to), nodes, tc.pre), tc.wantErr)
		})
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("refused: %v", err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Fatalf("err = %v, want %q", err, want)
	}
}
