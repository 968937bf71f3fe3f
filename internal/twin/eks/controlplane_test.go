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
	cp := New(eng, kubeversion.MustParse("1.30"), 8*time.Minute)
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
	cp := New(eng, kubeversion.MustParse("1.31"), 0)
	cp.NodeGroupVersions = func() map[string]kubeversion.Minor {
		return map[string]kubeversion.Minor{"initial": kubeversion.MustParse("1.30")}
	}
	err := cp.Update(kubeversion.MustParse("1.32"), nil)
	if err == nil || !strings.Contains(err.Error(), "node group initial is at Kubernetes 1.30") {
		t.Fatalf("err = %v", err)
	}
}
