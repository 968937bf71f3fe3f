package asg_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/rules/instancerefresh"
	"github.com/ladder-eks/ladder/internal/twin/asg"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// An instance refresh takes pods down with their nodes when nothing drains
// them first — no termination lifecycle hook ("Without this lifecycle hook,
// the instance will terminate immediately", semantics.md §C) — or when the
// hook's HeartbeatTimeout ends a drain a PDB blocked: with a PDB that
// allows no disruption (maxUnavailable 0; minAvailable 2 of 2), each such
// pod is a breach in the words of the Auto Scaling group.
func TestInstanceRefreshBreaches(t *testing.T) {
	cases := []struct {
		name string
		opts []specOption
		by   string
	}{
		{name: "no lifecycle hook", by: "(no termination lifecycle hook)"},
		{name: "hook timed out", opts: []specOption{withHook(300*time.Second, asg.Continue)}, by: "(lifecycle hook heartbeat timeout: CONTINUE)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTwin(t, 1)
			tw.create(groupSpec("ng", 3, tc.opts...))
			tw.apply(deployment("db", 2, "250m", inZone("us-west-2a")), pdb("db", 2, -1))
			tw.Settle()
			tw.upgrade("ng", ami131)
			res := tw.refresh("ng", instancerefresh.Preferences{InstanceWarmup: seconds(60)})
			tw.runUntilDone(res, 2*time.Hour)

			killed := tw.Kube.Killed()
			b := tw.Kube.PDBBreaches()
			if len(b) == 0 || len(b) > len(killed) {
				t.Fatalf("breaches %+v, killed %+v; want the killed db pods\n%s", b, killed, tw.dump())
			}
			for _, x := range b {
				if !strings.HasPrefix(x.Name, "db-") || x.Mechanism != kube.BreachNodeRemoved || !strings.Contains(x.By, "terminated by Auto Scaling group ng "+tc.by) ||
					len(x.PDBs) != 1 || x.PDBs[0] != "default/db" {
					t.Errorf("breach %+v, want a db pod gone with its node %s under default/db", x, tc.by)
				}
			}
			for _, w := range tw.Kube.Workloads() {
				if w.Name == "db" && w.PDBViolations != len(b) {
					t.Errorf("db PDBViolations %d, want %d", w.PDBViolations, len(b))
				}
			}
		})
	}
}
