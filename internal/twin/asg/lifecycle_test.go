package asg_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/rules/instancerefresh"
	"github.com/ladder-eks/ladder/internal/twin/asg"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// Without a termination lifecycle hook an instance terminates at once (§C:
// "Without this lifecycle hook, the instance will terminate immediately"):
// nothing evicts its pods, and the Ready ones die with the node — kube
// records them as killed, and the group's status counts them. The same
// refresh with the hook and NTH kills nothing.
func TestWithoutHookPodsAreKilledNotEvicted(t *testing.T) {
	run := func(opts ...specOption) (*twin, asg.GroupStatus) {
		tw := newTwin(t, 3)
		tw.create(groupSpec("ng", 2, opts...))
		tw.apply(deployment("web", 4, "250m"))
		tw.Settle()
		tw.upgrade("ng", ami131)
		res := tw.refresh("ng", instancerefresh.Preferences{InstanceWarmup: seconds(60)})
		tw.runUntilDone(res, time.Hour)
		return tw, tw.status("ng")
	}

	tw, st := run()
	killed := tw.Kube.Killed()
	if len(killed) == 0 || st.PodsKilled != len(killed) {
		t.Fatalf("killed %d pods, status counts %d; want some, all counted\n%s", len(killed), st.PodsKilled, tw.dump())
	}
	for _, k := range killed {
		if !strings.HasPrefix(k.Name, "web-") || !strings.Contains(k.Reason, "no termination lifecycle hook") {
			t.Fatalf("killed %s: %s", k.Name, k.Reason)
		}
	}
	if n := len(tw.events(asg.EventNTHDrained)) + len(tw.events(asg.EventLifecycleWait)); n != 0 {
		t.Fatalf("%d hook/NTH events without a hook", n)
	}

	tw, st = run(withHook(0, ""))
	if k := tw.Kube.Killed(); len(k) != 0 || st.PodsKilled != 0 {
		t.Fatalf("with the hook, killed %+v", k)
	}
	if n := len(tw.events(asg.EventNTHDrained)); n != 2 {
		t.Fatalf("%d nodes drained by NTH, want 2", n)
	}
}

// With the hook, NTH cordons and drains through the Eviction API: a PDB
// (maxUnavailable 1 over two pods pinned to zone a's node) holds the second
// eviction with 429s until the first pod's replacement is Ready on the new
// zone-a node; then the drain completes well within NTH's 120 s, the
// lifecycle action completes with CONTINUE, and the instance terminates with
// nothing left to kill.
func TestNTHDrainRespectsPDB(t *testing.T) {
	tw := newTwin(t, 1)
	spec := groupSpec("ng", 3, withHook(0, ""))
	spec.NTH.TaintNode = true
	tw.create(spec)
	tw.apply(deployment("db", 2, "250m", inZone("us-west-2a")), pdb("db", -1, 1))
	tw.Settle()
	zoneA := tw.status("ng").Instances[0]
	if zoneA.Zone != "us-west-2a" {
		t.Fatalf("first instance in %s", zoneA.Zone)
	}
	var terminatingAt, drainedAt, completedAt, terminatedAt time.Time
	tw.watch(func(l line) {
		if l.Node != zoneA.Node {
			return
		}
		switch l.Code {
		case asg.EventTerminating:
			terminatingAt = l.At
		case asg.EventNTHDrained:
			drainedAt = l.At
			n := tw.Kube.Node(zoneA.Node)
			if !kube.HasTaint(n, asg.ASGLifecycleTaint) || !n.Spec.Unschedulable {
				t.Errorf("drained node not tainted %s and cordoned: %+v", asg.ASGLifecycleTaint, n.Spec)
			}
		case asg.EventLifecycleCompleted:
			completedAt = l.At
			if !strings.Contains(l.Message, "CONTINUE") {
				t.Errorf("lifecycle action: %s", l.Message)
			}
		case asg.EventTerminated:
			terminatedAt = l.At
		}
	})
	tw.upgrade("ng", ami131)
	res := tw.refresh("ng", instancerefresh.Preferences{InstanceWarmup: seconds(60)})
	tw.runUntilDone(res, time.Hour)

	// The second db pod waits for the first one's replacement, which needs
	// the new zone-a node: launch 2 s + register 30 s + Ready 10 s.
	const join = 42 * time.Second
	if d := drainedAt.Sub(terminatingAt); terminatingAt.IsZero() || d <= join || d >= 120*time.Second {
		t.Fatalf("drain of %s took %s, want more than %s (PDB wait) and less than 120 s\n%s", zoneA.Node, d, join, tw.dump())
	}
	if !completedAt.Equal(drainedAt) || terminatedAt.Sub(completedAt) != 30*time.Second {
		t.Fatalf("drained +%s, completed +%s, terminated +%s", since(drainedAt), since(completedAt), since(terminatedAt))
	}
	blocks := tw.Kube.DrainBlocks()
	if len(blocks) != 1 || blocks[0].Node != zoneA.Node || blocks[0].Outcome != "evicted" || blocks[0].PDB != "default/db" || blocks[0].Until.Sub(blocks[0].Since) < join {
		t.Fatalf("drain blocks %+v, want one evicted after waiting at least %s on default/db", blocks, join)
	}
	if k := tw.Kube.Killed(); len(k) != 0 {
		t.Fatalf("killed %+v", k)
	}
	if st := tw.status("ng"); len(st.Failures) != 0 {
		t.Fatalf("failures %+v", st.Failures)
	}
	if w := tw.Kube.Workloads(); len(w) != 1 || w[0].PDBViolations != 0 {
		t.Fatalf("workloads %+v", w)
	}
}

// A PDB that never allows an eviction: NTH's drain times out after 120 s
// and NTH does not complete the lifecycle action (the drain-cordon handler
// runs the post-drain task only after a successful drain); the message comes
// back after the SQS visibility timeout (20 s) and NTH drains again. The
// instance leaves only when the hook's HeartbeatTimeout applies its
// DefaultResult — both CONTINUE and ABANDON terminate (§C) — and the pods
// still on it are killed.
func TestNTHDrainTimeoutWaitsForTheHeartbeatTimeout(t *testing.T) {
	for _, result := range []string{asg.Abandon, asg.Continue} {
		t.Run(result, func(t *testing.T) {
			tw := newTwin(t, 1)
			tw.create(groupSpec("ng", 3, withHook(300*time.Second, result)))
			tw.apply(deployment("db", 2, "250m", inZone("us-west-2a")), pdb("db", 2, -1))
			tw.Settle()
			zoneA := tw.status("ng").Instances[0]
			tw.watch(func(l line) {
				if l.Code == asg.EventNTHDrainFailed && l.Node == zoneA.Node {
					if n := tw.Kube.Node(zoneA.Node); kube.HasTaint(n, asg.ASGLifecycleTaint) || !n.Spec.Unschedulable {
						t.Errorf("without --taint-node the node is cordoned only: %+v", n.Spec)
					}
				}
			})
			tw.upgrade("ng", ami131)
			res := tw.refresh("ng", instancerefresh.Preferences{InstanceWarmup: seconds(60)})
			tw.runUntilDone(res, 2*time.Hour)

			var failedAt []time.Duration
			for _, l := range tw.events(asg.EventNTHDrainFailed) {
				failedAt = append(failedAt, since(l.At))
			}
			// Drains at 0, 140 s and 280 s; the first two time out at 120 s
			// and 260 s, the third is cut short by the hook at 300 s.
			if len(failedAt) != 2 || failedAt[0] != 120*time.Second || failedAt[1] != 260*time.Second {
				t.Fatalf("drain failures at %v, want [2m0s 4m20s]\n%s", failedAt, tw.dump())
			}
			timeouts := tw.events(asg.EventLifecycleTimeout)
			if len(timeouts) != 1 || since(timeouts[0].At) != 300*time.Second || !strings.Contains(timeouts[0].Message, "DefaultResult "+result) {
				t.Fatalf("hook timeouts %+v", timeouts)
			}
			if n := len(tw.events(asg.EventLifecycleCompleted)); n != 2 {
				t.Fatalf("%d lifecycle actions completed, want 2 (the other two nodes)", n)
			}
			killed := tw.Kube.Killed()
			if len(killed) != 2 {
				t.Fatalf("killed %+v, want both db pods", killed)
			}
			for _, k := range killed {
				if k.Node != zoneA.Node || since(k.At) != 330*time.Second || !strings.HasPrefix(k.Name, "db-") {
					t.Fatalf("killed %s on %s at +%s, want db pods on %s at +5m30s", k.Name, k.Node, since(k.At), zoneA.Node)
				}
			}
			st := tw.status("ng")
			if st.PodsKilled != 2 || len(st.Failures) != 3 || st.MaxConcurrentTerminating != 2 {
				t.Fatalf("killed %d, failures %d, max terminating %d; want 2, 3, 2\n%+v", st.PodsKilled, len(st.Failures), st.MaxConcurrentTerminating, st.Failures)
			}
			// The refresh went on meanwhile, and ends when zone a's old
			// instance is gone.
			if res.Status != asg.RefreshSuccessful || since(res.EndTime) != 330*time.Second {
				t.Fatalf("refresh %s at +%s", res.Status, since(res.EndTime))
			}
		})
	}
}
