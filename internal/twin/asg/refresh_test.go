package asg_test

import (
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/rules/instancerefresh"
	"github.com/ladder-eks/ladder/internal/twin/asg"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// A refresh of 10 instances under each pair of healthy percentages: the sets
// it runs, how far it surges above or dips below the desired capacity, and
// that every instance ends on the new launch template.
func TestRefreshSetsFollowHealthyPercentages(t *testing.T) {
	const warmup = 60 * time.Second
	for _, c := range []struct {
		name             string
		desired          int
		min, max         *int
		wantSets         []instancerefresh.Set
		wantSurge        int // MaxSurge
		wantMinInService int
		wantTerminating  int // MaxConcurrentTerminating
	}{
		{"defaults (Min 90, Max 100): one at a time, terminate first", 10, nil, nil,
			repeat(instancerefresh.Set{TerminateFirst: 1}, 10), 0, 9, 1},
		{"Min 50: five at a time", 10, ptr(50), nil,
			repeat(instancerefresh.Set{TerminateFirst: 5}, 2), 0, 5, 5},
		{"Min 90/Max 110: one terminated at once and one launched first", 10, ptr(90), ptr(110),
			repeat(instancerefresh.Set{TerminateFirst: 1, LaunchFirst: 1}, 5), 1, 9, 2},
		{"Min 100/Max 110: launch one before terminating one", 10, ptr(100), ptr(110),
			repeat(instancerefresh.Set{LaunchFirst: 1}, 10), 1, 10, 1},
		{"Min 100/Max 200: launch all first", 10, ptr(100), ptr(200),
			[]instancerefresh.Set{{LaunchFirst: 10}}, 10, 10, 10},
		{"desired 4 at Min 90 rounds up to 4: one at a time, dipping to 3", 4, ptr(90), nil,
			repeat(instancerefresh.Set{TerminateFirst: 1}, 4), 0, 3, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			tw := newTwin(t, 1)
			tw.create(groupSpec("ng", c.desired))
			tw.Settle()
			tw.upgrade("ng", ami131)
			res := tw.refresh("ng", instancerefresh.Preferences{MinHealthyPercentage: c.min, MaxHealthyPercentage: c.max, InstanceWarmup: ptr(warmup)})
			tw.runUntilDone(res, 6*time.Hour)

			if res.Status != asg.RefreshSuccessful || res.PercentageComplete != 100 || res.InstancesToUpdate != 0 {
				t.Fatalf("refresh ended %s at %d%% with %d to update", res.Status, res.PercentageComplete, res.InstancesToUpdate)
			}
			if len(res.Sets) != len(c.wantSets) {
				t.Fatalf("%d sets %+v, want %d %+v", len(res.Sets), res.Sets, len(c.wantSets), c.wantSets)
			}
			for i, s := range res.Sets {
				if s.Set != c.wantSets[i] {
					t.Fatalf("set %d = %+v, want %+v", i, s.Set, c.wantSets[i])
				}
			}
			st := tw.status("ng")
			if st.MaxSurge != c.wantSurge || st.MinInService != c.wantMinInService || st.MaxConcurrentTerminating != c.wantTerminating {
				t.Fatalf("surge %d, min in service %d, max terminating %d; want %d, %d, %d\n%s",
					st.MaxSurge, st.MinInService, st.MaxConcurrentTerminating, c.wantSurge, c.wantMinInService, c.wantTerminating, tw.dump())
			}
			if st.Launched != c.desired || st.Replaced != c.desired || len(st.Instances) != c.desired {
				t.Fatalf("launched %d, replaced %d, %d instances; want %d each", st.Launched, st.Replaced, len(st.Instances), c.desired)
			}
			for _, in := range st.Instances {
				if in.LaunchTemplate.Version != "2" || in.ImageID != ami131 || in.KubeletVersion != kubelet131 {
					t.Fatalf("instance %s still on %s %s", in.ID, in.LaunchTemplate, in.ImageID)
				}
			}
		})
	}
}

func repeat(s instancerefresh.Set, n int) []instancerefresh.Set {
	out := make([]instancerefresh.Set, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// The next set starts when the previous set's instances are InService and
// warmed up: exactly launch latency + InstanceWarmup after it started (§C
// InstanceWarmup), whichever source the warmup comes from.
func TestWarmupDelaysTheNextSet(t *testing.T) {
	for _, c := range []struct {
		name       string
		spec       specOption
		prefs      *time.Duration
		wantWarmup time.Duration
	}{
		{"default: the console's 300 s health check grace period", func(*asg.Spec) {}, nil, 300 * time.Second},
		{"the group's HealthCheckGracePeriod", func(s *asg.Spec) { s.HealthCheckGracePeriod = seconds(120) }, nil, 120 * time.Second},
		{"DefaultInstanceWarmup wins over the grace period", func(s *asg.Spec) {
			s.HealthCheckGracePeriod, s.DefaultInstanceWarmup = seconds(120), seconds(45)
		}, nil, 45 * time.Second},
		{"the refresh's InstanceWarmup wins over both", func(s *asg.Spec) { s.DefaultInstanceWarmup = seconds(45) }, seconds(90), 90 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			tw := newTwin(t, 1)
			tw.create(groupSpec("ng", 3, c.spec))
			tw.Settle()
			tw.upgrade("ng", ami131)
			res := tw.refresh("ng", instancerefresh.Preferences{InstanceWarmup: c.prefs})
			tw.runUntilDone(res, 6*time.Hour)
			if res.Settings.InstanceWarmup != c.wantWarmup {
				t.Fatalf("warmup %s, want %s", res.Settings.InstanceWarmup, c.wantWarmup)
			}
			if len(res.Sets) != 3 {
				t.Fatalf("%d sets, want 3 (one at a time)", len(res.Sets))
			}
			for i := 1; i < len(res.Sets); i++ {
				if gap := res.Sets[i].Start.Sub(res.Sets[i-1].Start); gap != launchLatency+c.wantWarmup {
					t.Fatalf("set %d started %s after set %d, want %s (launch) + %s (warmup)", i, gap, i-1, launchLatency, c.wantWarmup)
				}
			}
			if want := t0.Add(3 * (launchLatency + c.wantWarmup)); !res.EndTime.Equal(want) {
				t.Fatalf("ended at +%s, want +%s", since(res.EndTime), since(want))
			}
		})
	}
}

// A warm-up shorter than the kubelet's join (launch 2 s + register 30 s +
// Ready 10 s) lets the refresh count an instance healthy while its node
// cannot run pods yet; the twin warns, as the workshop's advice implies
// (workshop 6.4: health checks pass, then InstanceWarmup, then the old
// instance goes).
func TestWarmupShorterThanNodeJoinIsFlagged(t *testing.T) {
	tw := newTwin(t, 1)
	tw.create(groupSpec("ng", 2))
	tw.Settle()
	tw.upgrade("ng", ami131)
	res := tw.refresh("ng", instancerefresh.Preferences{InstanceWarmup: seconds(20)})
	tw.runUntilDone(res, time.Hour)
	warmed := tw.events(asg.EventWarmedUp)
	if len(warmed) != 2 {
		t.Fatalf("%d warm-up events, want 2", len(warmed))
	}
	for _, l := range warmed {
		if l.Type != "Warning" {
			t.Fatalf("warm-up of 20 s before a 42 s join not flagged: %s", l.Message)
		}
	}
	tw2 := newTwin(t, 1)
	tw2.create(groupSpec("ng", 2))
	tw2.Settle()
	tw2.upgrade("ng", ami131)
	res2 := tw2.refresh("ng", instancerefresh.Preferences{InstanceWarmup: seconds(60)})
	tw2.runUntilDone(res2, time.Hour)
	for _, l := range tw2.events(asg.EventWarmedUp) {
		if l.Type != "Normal" {
			t.Fatalf("60 s warm-up flagged: %s", l.Message)
		}
	}
}

// Checkpoints [50, 100] with Min 50 on 4 instances: two replaced, a pause of
// exactly CheckpointDelay once they are warm, the other two, done — no pause
// after the last checkpoint.
func TestCheckpointsPauseForCheckpointDelay(t *testing.T) {
	const warmup, delay = 60 * time.Second, 10 * time.Minute
	tw := newTwin(t, 1)
	tw.create(groupSpec("ng", 4))
	tw.Settle()
	tw.upgrade("ng", ami131)
	res := tw.refresh("ng", instancerefresh.Preferences{
		MinHealthyPercentage: ptr(50), InstanceWarmup: ptr(warmup),
		CheckpointPercentages: []int{50, 100}, CheckpointDelay: ptr(delay),
	})
	tw.runUntilDone(res, 3*time.Hour)

	setDone := launchLatency + warmup
	wantSets := []time.Duration{0, setDone + delay}
	if len(res.Sets) != 2 {
		t.Fatalf("sets %+v, want 2 of 2", res.Sets)
	}
	for i, s := range res.Sets {
		if s.Set != (instancerefresh.Set{TerminateFirst: 2}) || since(s.Start) != wantSets[i] {
			t.Fatalf("set %d = %+v at +%s, want 2 terminate-first at +%s", i, s.Set, since(s.Start), wantSets[i])
		}
	}
	want := []asg.CheckpointRecord{
		{Percentage: 50, ReachedAt: t0.Add(setDone), ResumeAt: t0.Add(setDone + delay)},
		{Percentage: 100, ReachedAt: t0.Add(2*setDone + delay)},
	}
	if len(res.Checkpoints) != 2 || res.Checkpoints[0] != want[0] || res.Checkpoints[1] != want[1] {
		t.Fatalf("checkpoints %+v, want %+v", res.Checkpoints, want)
	}
	if !res.EndTime.Equal(t0.Add(2*setDone + delay)) {
		t.Fatalf("ended at +%s, want +%s", since(res.EndTime), 2*setDone+delay)
	}
	if n := len(tw.events(asg.EventRefreshCheckpoint)); n != 2 {
		t.Fatalf("%d checkpoint events, want 2", n)
	}
}

// The user guide's checkpoint example (asg-adding-checkpoints-instance-
// refresh.md): 10 instances, checkpoints [20, 50], delay 15 min, Min 80,
// 10 min warm-up. "0:00 two replaced; 0:10 warm; 0:25 two replaced (to
// maintain the minimum healthy percentage, only two); 0:35 warm, one
// replaced; 0:45 warm" — each step here is 2 s later per launch. [20, 50]
// ends at 50 %: a partial refresh leaves the other five instances alone.
func TestCheckpointPacingFollowsTheUserGuide(t *testing.T) {
	const m = time.Minute
	L := launchLatency
	tw := newTwin(t, 1)
	tw.create(groupSpec("ng", 10))
	tw.Settle()
	tw.upgrade("ng", ami131)
	res := tw.refresh("ng", instancerefresh.Preferences{
		MinHealthyPercentage: ptr(80), InstanceWarmup: ptr(10 * m),
		CheckpointPercentages: []int{20, 50}, CheckpointDelay: ptr(15 * m),
	})
	tw.runUntilDone(res, 3*time.Hour)

	wantSets := []asg.SetRecord{
		{Start: t0, Set: instancerefresh.Set{TerminateFirst: 2}},
		{Start: t0.Add(25*m + L), Set: instancerefresh.Set{TerminateFirst: 2}},
		{Start: t0.Add(35*m + 2*L), Set: instancerefresh.Set{TerminateFirst: 1}},
	}
	if len(res.Sets) != len(wantSets) {
		t.Fatalf("sets %+v, want %+v", res.Sets, wantSets)
	}
	for i := range wantSets {
		if res.Sets[i] != wantSets[i] {
			t.Fatalf("set %d = %+v at +%s, want %+v at +%s", i, res.Sets[i].Set, since(res.Sets[i].Start), wantSets[i].Set, since(wantSets[i].Start))
		}
	}
	if len(res.Checkpoints) != 2 ||
		res.Checkpoints[0].Percentage != 20 || !res.Checkpoints[0].ReachedAt.Equal(t0.Add(10*m+L)) ||
		res.Checkpoints[1].Percentage != 50 || !res.Checkpoints[1].ReachedAt.Equal(t0.Add(45*m+3*L)) {
		t.Fatalf("checkpoints %+v", res.Checkpoints)
	}
	if res.Status != asg.RefreshSuccessful || res.PercentageComplete != 50 || res.InstancesToUpdate != 5 {
		t.Fatalf("ended %s at %d%% with %d to update, want Successful at 50%% with 5", res.Status, res.PercentageComplete, res.InstancesToUpdate)
	}
	onOld := 0
	for _, in := range tw.status("ng").Instances {
		if in.ImageID == ami130 {
			onOld++
		}
	}
	if onOld != 5 {
		t.Fatalf("%d instances on the old AMI after the partial refresh, want 5", onOld)
	}
}

// With two instances, checkpoints [10, 40, 100]: the first replacement is
// 50 %, past both 10 and 40, so only 40 is reported (the user guide: "it
// skips the first checkpoint").
func TestCheckpointsCanBeSkipped(t *testing.T) {
	tw := newTwin(t, 1)
	tw.create(groupSpec("ng", 2))
	tw.Settle()
	tw.upgrade("ng", ami131)
	res := tw.refresh("ng", instancerefresh.Preferences{InstanceWarmup: seconds(60), CheckpointPercentages: []int{10, 40, 100}, CheckpointDelay: seconds(600)})
	tw.runUntilDone(res, 3*time.Hour)
	if len(res.Checkpoints) != 2 || res.Checkpoints[0].Percentage != 40 || res.Checkpoints[1].Percentage != 100 {
		t.Fatalf("checkpoints %+v, want 40 then 100", res.Checkpoints)
	}
}

// SkipMatching replaces only instances not on the group's launch template
// version; with everything matching, the refresh succeeds at once (§C).
// Without it every instance is replaced, matching or not.
func TestSkipMatching(t *testing.T) {
	tw := newTwin(t, 1)
	tw.create(groupSpec("ng", 4))
	tw.Settle()
	tw.upgrade("ng", ami131)
	// A partial refresh puts half the group on version 2.
	half := tw.refresh("ng", instancerefresh.Preferences{MinHealthyPercentage: ptr(50), InstanceWarmup: seconds(60), CheckpointPercentages: []int{50}})
	tw.runUntilDone(half, time.Hour)
	updated := map[string]bool{}
	for _, in := range tw.status("ng").Instances {
		if in.LaunchTemplate.Version == "2" {
			updated[in.ID] = true
		}
	}
	if len(updated) != 2 {
		t.Fatalf("%d instances on version 2 after the partial refresh, want 2", len(updated))
	}

	res := tw.refresh("ng", instancerefresh.Preferences{SkipMatching: true, InstanceWarmup: seconds(60)})
	tw.runUntilDone(res, time.Hour)
	if res.ToReplace != 2 || res.Skipped != 2 || res.Status != asg.RefreshSuccessful {
		t.Fatalf("skip matching: %d to replace, %d skipped, %s; want 2, 2, Successful", res.ToReplace, res.Skipped, res.Status)
	}
	st := tw.status("ng")
	kept := 0
	for _, in := range st.Instances {
		if in.LaunchTemplate.Version != "2" {
			t.Fatalf("instance %s on version %s after the refresh", in.ID, in.LaunchTemplate.Version)
		}
		if updated[in.ID] {
			kept++
		}
	}
	if kept != 2 {
		t.Fatalf("%d of the matching instances kept, want 2", kept)
	}

	// Everything matches now: nothing to do, Successful at once.
	start := tw.Eng.Now()
	launched := st.Launched
	noop := tw.refresh("ng", instancerefresh.Preferences{SkipMatching: true})
	tw.runUntilDone(noop, time.Hour)
	if noop.Status != asg.RefreshSuccessful || !noop.EndTime.Equal(start) || noop.ToReplace != 0 || tw.status("ng").Launched != launched {
		t.Fatalf("all-matching refresh: %s at +%s, %d to replace", noop.Status, noop.EndTime.Sub(start), noop.ToReplace)
	}

	// Without SkipMatching the same group is replaced in full.
	all := tw.refresh("ng", instancerefresh.Preferences{InstanceWarmup: seconds(60)})
	tw.runUntilDone(all, time.Hour)
	if all.ToReplace != 4 || all.Skipped != 0 || tw.status("ng").Launched != launched+4 {
		t.Fatalf("without skip matching: %d to replace, %d skipped", all.ToReplace, all.Skipped)
	}
}

// BakeTime: the refresh is Baking after its last replacement and Successful
// BakeTime later.
func TestBakeTime(t *testing.T) {
	tw := newTwin(t, 1)
	tw.create(groupSpec("ng", 1))
	tw.Settle()
	tw.upgrade("ng", ami131)
	res := tw.refresh("ng", instancerefresh.Preferences{InstanceWarmup: seconds(60), BakeTime: 30 * time.Minute})
	tw.runUntilDone(res, 3*time.Hour)
	// One instance, terminate first: warm at 62 s; the old one is gone at
	// 30 s (EC2 terminate latency), so baking starts at 62 s.
	if since(res.BakeStartTime) != launchLatency+time.Minute || res.EndTime.Sub(res.BakeStartTime) != 30*time.Minute {
		t.Fatalf("bake from +%s to +%s", since(res.BakeStartTime), since(res.EndTime))
	}
	if len(tw.events(asg.EventRefreshBaking)) != 1 {
		t.Fatal("no baking event")
	}
}

// The workshop's self-managed group (workshop 6.4): default-selfmng, m5.large,
// AL2023, two nodes; the launch template gets the 1.31 AMI
// ami-00e0cfd6e5895fe3a and an instance refresh replaces the nodes — "new
// EC2 first, pass the health check, wait InstanceWarmup, then terminate the
// old one". That order needs MaxHealthyPercentage above 100 (the console's
// "Launch before terminating" is Min 100/Max 110); with the API's defaults
// (Min 90/Max 100) the old node goes first.
func TestWorkshopSelfManagedGroup(t *testing.T) {
	spec := groupSpec("default-selfmng", 2, withZones("us-west-2a", "us-west-2b"))

	t.Run("launch before terminating, drained by NTH", func(t *testing.T) {
		tw := newTwin(t, 7)
		withHook(0, "")(&spec)
		tw.create(spec)
		tw.apply(deployment("ui", 2, "250m"))
		tw.Settle()
		tw.upgrade("default-selfmng", amiWorkshop131)
		res := tw.refresh("default-selfmng", instancerefresh.Preferences{MinHealthyPercentage: ptr(100), MaxHealthyPercentage: ptr(110), InstanceWarmup: seconds(60)})
		tw.runUntilDone(res, time.Hour)

		launches, terminations := tw.events(asg.EventLaunching), tw.events(asg.EventTerminating)
		if len(launches) != 2 || len(terminations) != 2 {
			t.Fatalf("%d launches, %d terminations, want 2 each\n%s", len(launches), len(terminations), tw.dump())
		}
		for i := range launches {
			// Each old instance goes when its replacement is InService and
			// warm: launch + 2 s + 60 s.
			if gap := terminations[i].At.Sub(launches[i].At); gap != launchLatency+time.Minute {
				t.Fatalf("old instance %d terminated %s after its replacement launched, want %s", i, gap, launchLatency+time.Minute)
			}
		}
		st := tw.status("default-selfmng")
		if st.MaxSurge != 1 || st.MinInService != 2 {
			t.Fatalf("surge %d, min in service %d; want 1 and 2", st.MaxSurge, st.MinInService)
		}
		checkWorkshopNodes(t, tw)
		if k := tw.Kube.Killed(); len(k) != 0 {
			t.Fatalf("pods killed: %+v", k)
		}
	})

	t.Run("API defaults terminate first", func(t *testing.T) {
		tw := newTwin(t, 7)
		tw.create(groupSpec("default-selfmng", 2, withZones("us-west-2a", "us-west-2b")))
		tw.Settle()
		tw.upgrade("default-selfmng", amiWorkshop131)
		res := tw.refresh("default-selfmng", instancerefresh.Preferences{InstanceWarmup: seconds(60)})
		tw.runUntilDone(res, time.Hour)
		if first := tw.log.Lines[1]; first.Code != asg.EventTerminating {
			t.Fatalf("first action %s, want %s\n%s", first.Code, asg.EventTerminating, tw.dump())
		}
		if st := tw.status("default-selfmng"); st.MaxSurge != 0 || st.MinInService != 1 {
			t.Fatalf("surge %d, min in service %d; want 0 and 1", st.MaxSurge, st.MinInService)
		}
		checkWorkshopNodes(t, tw)
	})
}

// checkWorkshopNodes is the workshop's check: kubectl get nodes -l
// node.kubernetes.io/lifecycle=self-managed lists two Ready v1.31.14-eks-bbe087e
// nodes, one per zone.
func checkWorkshopNodes(t *testing.T, tw *twin) {
	t.Helper()
	zonesSeen := map[string]bool{}
	for _, n := range tw.Kube.Nodes() {
		if n.Labels[asg.LabelLifecycle] != "self-managed" {
			t.Fatalf("node %s without the self-managed label: %v", n.Name, n.Labels)
		}
		if n.Labels[asg.LabelNodegroupName] != "default-selfmng" || tw.asg.GroupOf(n.Name) != "default-selfmng" {
			t.Fatalf("node %s not attributed to default-selfmng", n.Name)
		}
		if !kube.IsNodeReady(n) || n.Status.NodeInfo.KubeletVersion != kubeletWorkshop131 {
			t.Fatalf("node %s ready=%v %s, want Ready %s", n.Name, kube.IsNodeReady(n), n.Status.NodeInfo.KubeletVersion, kubeletWorkshop131)
		}
		zonesSeen[n.Labels["topology.kubernetes.io/zone"]] = true
	}
	if len(tw.Kube.Nodes()) != 2 || !zonesSeen["us-west-2a"] || !zonesSeen["us-west-2b"] {
		t.Fatalf("nodes %d in zones %v, want one in each of us-west-2a and us-west-2b", len(tw.Kube.Nodes()), zonesSeen)
	}
}
