package executor

import (
	"context"
	"fmt"
	"testing"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/plan"
	twineks "github.com/ladder-eks/ladder/internal/twin/eks"
	"github.com/ladder-eks/ladder/internal/twin/mng"
)

// A blue/green group's two node groups swap on every hop: the first hop
// creates the green group and deletes the group's own, the next creates the
// group's own again, at the new version, and deletes the green one — the
// executor finds which is blue through DescribeNodegroup.
func TestNodeGroupBlueGreenSwaps(t *testing.T) {
	tw := newManagedTwin(t)
	ctx := context.Background()
	tw.ex.Groups = map[string]Group{"custom": {Green: &Green{Name: "custom-green"}}}
	st := plan.Step{Kind: plan.NodeGroup, Name: "custom", Strategy: "blue-green"}
	v132 := kubeversion.MustParse("1.32")
	for _, hop := range []struct {
		to         kubeversion.Minor
		live, gone string
	}{
		{to: v131, live: "custom-green", gone: "custom"},
		{to: v132, live: "custom", gone: "custom-green"},
	} {
		if hop.to == v132 {
			// Blue's kubelets at 1.30 stay within the skew policy of 1.32.
			tw.cp.Precondition = twineks.Relaxed
			if err := tw.ex.UpgradeControlPlane(ctx, v132); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.ex.NodeGroup(ctx, st, hop.to); err != nil {
			t.Fatalf("hop to %s: %v", hop.to, err)
		}
		live, _ := tw.groups.Status(hop.live)
		gone, _ := tw.groups.Status(hop.gone)
		if live.Status != mng.StatusActive || live.Version != hop.to || len(tw.nodes(hop.live)) != 2 || gone.Status != mng.StatusDeleted {
			t.Fatalf("hop to %s: %s %s at %s with %d nodes, %s %s; want %[2]s ACTIVE at %[1]s with 2 nodes, %[6]s deleted",
				hop.to, hop.live, live.Status, live.Version, len(tw.nodes(hop.live)), hop.gone, gone.Status)
		}
	}
}

// A step whose strategy lacks its configuration, or that no step carries
// out, fails before it calls anything.
func TestNodeGroupConfiguration(t *testing.T) {
	for _, tc := range []struct {
		strategy string
		want     string
	}{
		{"blue-green", "node group orders: blue-green needs the green group's name"},
		{"drift", "node group orders: drift needs the group's NodePool"},
		{"replace", "node group orders: no step carries out the replace strategy"},
	} {
		t.Run(tc.strategy, func(t *testing.T) {
			rec := &recorder{}
			ex, _ := executor(t, rec, 0)
			err := ex.NodeGroup(context.Background(), plan.Step{Kind: plan.NodeGroup, Name: "orders", Strategy: tc.strategy}, v131)
			if got := fmt.Sprint(err); got != tc.want {
				t.Errorf("NodeGroup = %s, want %s", got, tc.want)
			}
		})
	}
}
