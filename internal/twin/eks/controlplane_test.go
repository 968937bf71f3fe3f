package eks

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/sim"
)

func TestUpdateOneMinorAtATime(t *testing.T) {
	eng := sim.New(time.Date(2026, 3, 30, 0, 0, 0, 0, time.UTC), 1)
	cp := New(eng, "eksworkshop-eksctl", "us-west-2", kubeversion.MustParse("1.30"), 8*time.Minute)
	if err := cp.Update(kubeversion.MustParse("1.32"), nil); err == nil || !strings.Contains(err.Error(), "one minor version at a time") {
		t.Fatalf("n+2: err = %v, want the EKS one-minor refusal", err)
	}
	if err := cp.Update(kubeversion.MustParse("1.29"), nil); err == nil || !strings.Contains(err.Error(), "cannot be downgraded") {
		t.Fatalf("downgrade: err = %v", err)
	}
	done := false
	if err := cp.Update(kubeversion.MustParse("1.31"), func() { done = true }); err != nil {
		t.Fatal(err)
	}
	if err := cp.Update(kubeversion.MustParse("1.31"), nil); err == nil {
		t.Fatal("a second update while updating was accepted")
	}
	eng.Run(eng.Now().Add(7*time.Minute), nil)
	if done || cp.Version().String() != "1.30" || !cp.Updating() {
		t.Fatalf("after 7m: version %s updating %v", cp.Version(), cp.Updating())
	}
	eng.Run(eng.Now().Add(2*time.Minute), nil)
	if !done || cp.Version().String() != "1.31" || cp.Updating() {
		t.Fatalf("after 9m: version %s updating %v done %v", cp.Version(), cp.Updating(), done)
	}
}

func TestUpdateRefusedWhileManagedGroupsLag(t *testing.T) {
	eng := sim.New(time.Date(2026, 3, 30, 0, 0, 0, 0, time.UTC), 1)
	cp := New(eng, "eksworkshop-eksctl", "us-west-2", kubeversion.MustParse("1.31"), 0)
	cp.NodeGroupVersions = func() map[string]kubeversion.Minor {
		return map[string]kubeversion.Minor{"initial": kubeversion.MustParse("1.30")}
	}
	err := cp.Update(kubeversion.MustParse("1.32"), nil)
	if err == nil || !strings.Contains(err.Error(), "node group initial is at Kubernetes 1.30") {
		t.Fatalf("err = %v", err)
	}
}

// TestPreconditionWiring: Update asks controlplane.CheckPrecondition (whose
// table is in internal/rules/controlplane) with the twin's node groups, its
// kubelets and its Precondition, and a refusal leaves it ACTIVE.
func TestPreconditionWiring(t *testing.T) {
	cases := []struct {
		name     string
		from, to string
		kubelets map[string]string
		groups   map[string]string
		pre      Precondition
		wantErr  string // substring; "" = accepted
	}{
		{name: "kubelets are read", from: "1.30", to: "1.31",
			kubelets: map[string]string{"b": "v1.30.14-eks-1", "a": "v1.27.16-eks-1"},
			wantErr:  "node a runs kubelet v1.27.16-eks-1"},
		{name: "strict: node groups are read", from: "1.31", to: "1.32",
			groups: map[string]string{"zeta": "1.30"}, kubelets: map[string]string{"n": "v1.30.14-eks-1"},
			wantErr: "node group zeta is at Kubernetes 1.30"},
		{name: "relaxed is passed on", from: "1.31", to: "1.32", pre: Relaxed,
			groups: map[string]string{"zeta": "1.30"}, kubelets: map[string]string{"n": "v1.30.14-eks-1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eng := sim.New(time.Date(2026, 3, 30, 0, 0, 0, 0, time.UTC), 1)
			cp := New(eng, "c", "us-west-2", kubeversion.MustParse(tc.from), 0)
			cp.Precondition = tc.pre
			cp.Kubelets = func() map[string]string { return tc.kubelets }
			if tc.groups != nil {
				cp.NodeGroupVersions = func() map[string]kubeversion.Minor {
					out := map[string]kubeversion.Minor{}
					for k, v := range tc.groups {
						out[k] = kubeversion.MustParse(v)
					}
					return out
				}
			}
			err := cp.Update(kubeversion.MustParse(tc.to), nil)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			case tc.wantErr != "" && cp.Updating():
				t.Fatalf("refused update left the control plane UPDATING")
			}
		})
	}
}

// TestUpdateKeepsEndpointAndIssuer: the endpoint and OIDC issuer come from
// the cluster's id, so an update keeps both (workshop §4.3, §8.2); another
// cluster gets others.
func TestUpdateKeepsEndpointAndIssuer(t *testing.T) {
	eng := sim.New(time.Date(2026, 3, 30, 0, 0, 0, 0, time.UTC), 1)
	cp := New(eng, "eksworkshop-eksctl", "us-west-2", kubeversion.MustParse("1.30"), 0)
	endpoint, issuer := cp.Endpoint(), cp.OIDCIssuer()
	if !strings.HasPrefix(endpoint, "https://") || !strings.HasSuffix(endpoint, ".gr7.us-west-2.eks.amazonaws.com") ||
		!strings.HasPrefix(issuer, "https://oidc.eks.us-west-2.amazonaws.com/id/") || len(issuer) != len("https://oidc.eks.us-west-2.amazonaws.com/id/")+32 {
		t.Fatalf("endpoint %s, issuer %s", endpoint, issuer)
	}
	if err := cp.Update(kubeversion.MustParse("1.31"), nil); err != nil {
		t.Fatal(err)
	}
	eng.Run(eng.Now().Add(time.Hour), nil)
	if cp.Version().String() != "1.31" || cp.Endpoint() != endpoint || cp.OIDCIssuer() != issuer {
		t.Errorf("after update: version %s endpoint %s issuer %s; want 1.31 and the same endpoint and issuer", cp.Version(), cp.Endpoint(), cp.OIDCIssuer())
	}
	other := New(eng, "other", "us-west-2", kubeversion.MustParse("1.30"), 0)
	if other.Endpoint() == endpoint || other.OIDCIssuer() == issuer {
		t.Errorf("another cluster shares the endpoint or issuer")
	}
}
