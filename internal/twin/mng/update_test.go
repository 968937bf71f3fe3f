package mng_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	"github.com/ladder-eks/ladder/internal/twin/mng"
	"github.com/ladder-eks/ladder/internal/twin/twintest"
)

// The workshop seed §6.1 in-place update: group "initial" (1.30) is updated
// to the control plane's 1.31 (semantics.md §B).

// rolling is a 1.31 control plane and group "initial" at 1.30 with three
// nodes (one per zone) running web (6 × 250m) and a DaemonSet.
func rolling(t *testing.T, opts []twinOption, spec ...specOption) *twin {
	t.Helper()
	tw := newTwin(t, opts...)
	tw.adopt(group("initial", 3, append([]specOption{atVersion("1.30")}, spec...)...))
	tw.apply(daemonSet("kube-proxy"), deployment("web", 6, "250m"))
	tw.Settle()
	return tw
}

func TestDefaultUpdateReplacesEveryNode(t *testing.T) {
	tw := rolling(t, nil)
	old := tw.status("initial").Nodes
	peakDesired, checkedCordons := 0, false
	tw.watch(func(l logLine) {
		peakDesired = max(peakDesired, tw.status("initial").Desired)
		// Before the first drain, every old node is cordoned and out of
		// the load balancers (§B scale-up phase, last step).
		if l.Reason == mng.ReasonDrainStarted && !checkedCordons {
			checkedCordons = true
			for _, name := range old {
				n := tw.Kube.Node(name)
				if !n.Spec.Unschedulable || n.Labels[mng.LabelExcludeFromLB] != "true" {
					t.Errorf("at the first drain, old node %s: unschedulable=%t, %s=%q", name, n.Spec.Unschedulable, mng.LabelExcludeFromLB, n.Labels[mng.LabelExcludeFromLB])
				}
			}
		}
	})

	u := tw.update("initial", nodegroup.UpdateRequest{}, 3*time.Hour)

	if u.Status != mng.UpdateSuccessful {
		t.Fatalf("update %s: %v\n%s", u.Status, u.Errors, tw.dumpLog())
	}
	if u.ToVersion != kubeversion.MustParse("1.31") || u.ToAMI != ami131 || u.ToReleaseVersion != release131 {
		t.Errorf("update target = %s %s %s, want 1.31 %s %s (the control plane's version, its newest AMI)", u.ToVersion, u.ToAMI, u.ToReleaseVersion, ami131, release131)
	}
	var phases []string
	for _, p := range u.Phases {
		phases = append(phases, p.Phase)
	}
	if got := strings.Join(phases, ","); got != "Setup,ScaleUp,Upgrade,ScaleDown" {
		t.Errorf("phases = %s, want Setup,ScaleUp,Upgrade,ScaleDown", got)
	}
	if u.Surge != 6 || peakDesired != 9 {
		t.Errorf("surge %d, peak desired %d; want 6 and 9 (max(2 × 3 AZs, 1) added to 3)", u.Surge, peakDesired)
	}
	perZone := map[string]int{}
	for _, l := range tw.events(mng.ReasonNodeLaunched) {
		if strings.Contains(l.Message, "scale-up") {
			for _, z := range zones {
				if strings.Contains(l.Message, "("+z+",") {
					perZone[z]++
				}
			}
		}
	}
	for _, z := range zones {
		if perZone[z] != 2 {
			t.Errorf("scale-up launched %v per zone, want 2 in each zone holding an old node", perZone)
			break
		}
	}
	replaced := slices.Sorted(slices.Values(u.Replaced))
	if !slices.Equal(replaced, old) {
		t.Errorf("replaced %v, want every old node %v", replaced, old)
	}

	// Final state: three nodes, all new, all 1.31, none cordoned.
	st := tw.status("initial")
	if st.Status != mng.StatusActive || st.Version != kubeversion.MustParse("1.31") || st.ReleaseVersion != release131 || st.Desired != 3 || st.Max != 3 {
		t.Errorf("status = %s %s %s desired %d max %d; want ACTIVE 1.31 %s 3 3", st.Status, st.Version, st.ReleaseVersion, st.Desired, st.Max, release131)
	}
	nodes := tw.groupNodes("initial")
	if len(nodes) != 3 {
		t.Fatalf("%d nodes after the update, want 3", len(nodes))
	}
	for _, n := range nodes {
		if n.Status.NodeInfo.KubeletVersion != kubelet131 || n.Labels[mng.LabelNodegroupImage] != ami131 || n.Spec.Unschedulable || slices.Contains(old, n.Name) {
			t.Errorf("node %s: kubelet %s, image %s, unschedulable %t; want a new, schedulable %s node on %s",
				n.Name, n.Status.NodeInfo.KubeletVersion, n.Labels[mng.LabelNodegroupImage], n.Spec.Unschedulable, kubelet131, ami131)
		}
		if n.Labels[mng.LabelCapacityType] != "ON_DEMAND" || n.Labels[mng.LabelNodegroup] != "initial" {
			t.Errorf("node %s lacks the EKS labels: %v", n.Name, n.Labels)
		}
	}
	// DaemonSet pods are never evicted; web always kept a Ready pod.
	for _, l := range tw.events(mng.ReasonEvicting) {
		if strings.HasPrefix(l.Object, "kube-system/kube-proxy") {
			t.Errorf("evicted DaemonSet pod %s", l.Object)
		}
	}
	for _, w := range tw.Kube.Workloads() {
		if w.Name == "web" && w.ZeroReady > 0 {
			t.Errorf("web had no Ready pod for %s", w.ZeroReady)
		}
	}
}

func TestSurgeIsTheLargerOfTwiceTheZonesAndMaxUnavailable(t *testing.T) {
	for _, c := range []struct {
		name      string
		spec      []specOption
		wantSurge int
	}{
		{"3 AZs, maxUnavailable 1", nil, 6},
		{"3 AZs, maxUnavailable 20", []specOption{withMax(20), withMaxUnavailable(20)}, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			tw := rolling(t, nil, c.spec...)
			peak := 0
			tw.watch(func(logLine) { peak = max(peak, tw.status("initial").Desired) })
			u := tw.update("initial", nodegroup.UpdateRequest{}, 3*time.Hour)
			launched := 0
			for _, l := range tw.events(mng.ReasonNodeLaunched) {
				if strings.Contains(l.Message, "scale-up") {
					launched++
				}
			}
			if u.Status != mng.UpdateSuccessful || u.Surge != c.wantSurge || launched != c.wantSurge || peak != 3+c.wantSurge {
				t.Fatalf("%s: surge %d, scale-up launches %d, peak desired %d; want %d, %d, %d", u.Status, u.Surge, launched, peak, c.wantSurge, c.wantSurge, 3+c.wantSurge)
			}
		})
	}
}

func TestAtMostMaxUnavailableNodesInProgress(t *testing.T) {
	for _, c := range []struct {
		name string
		spec specOption
		want int
	}{
		{"maxUnavailable 2", withMaxUnavailable(2), 2},
		{"maxUnavailablePercentage 34 of 6 nodes rounds up to 3", withMaxUnavailablePct(34), 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			tw := newTwin(t)
			tw.adopt(group("initial", 6, atVersion("1.30"), c.spec))
			tw.apply(deployment("web", 12, "250m"))
			tw.Settle()
			old := tw.status("initial").Nodes
			inProgress, draining := map[string]bool{}, map[string]bool{}
			maxInProgress, maxDraining := 0, 0
			tw.watch(func(l logLine) {
				if !slices.Contains(old, l.Node) {
					return
				}
				switch l.Reason {
				case mng.ReasonNodeSelected:
					inProgress[l.Node] = true
				case mng.ReasonNodeTerminated:
					delete(inProgress, l.Node)
				case mng.ReasonDrainStarted:
					draining[l.Node] = true
				case mng.ReasonNodeDrained:
					delete(draining, l.Node)
				}
				maxInProgress = max(maxInProgress, len(inProgress))
				maxDraining = max(maxDraining, len(draining))
			})
			u := tw.update("initial", nodegroup.UpdateRequest{}, 3*time.Hour)
			if u.Status != mng.UpdateSuccessful || u.MaxUnavailable != c.want {
				t.Fatalf("%s with maxUnavailable %d, want Successful with %d", u.Status, u.MaxUnavailable, c.want)
			}
			if maxInProgress != c.want || u.MaxConcurrentDisruptions != c.want {
				t.Errorf("at most %d nodes in progress (reported %d), want exactly %d", maxInProgress, u.MaxConcurrentDisruptions, c.want)
			}
			if maxDraining > c.want || maxDraining == 0 {
				t.Errorf("at most %d nodes draining at once, want 1..%d", maxDraining, c.want)
			}
			if len(u.Replaced) != 6 {
				t.Errorf("replaced %d nodes, want 6", len(u.Replaced))
			}
		})
	}
}

func TestMinimalTerminatesBeforeLaunchingAndNeverExceedsDesired(t *testing.T) {
	tw := rolling(t, nil, withStrategy(nodegroup.StrategyMinimal))
	firstTerminating, firstLaunched, i := -1, -1, 0
	tw.watch(func(l logLine) {
		if n := len(tw.groupNodes("initial")); n > 3 {
			t.Errorf("+%s %s: %d nodes, above desired 3", l.At.Sub(t0), l.Reason, n)
		}
		if st := tw.status("initial"); st.Desired > 3 || st.Max > 3 {
			t.Errorf("+%s: Auto Scaling group raised to desired %d max %d", l.At.Sub(t0), st.Desired, st.Max)
		}
		switch {
		case l.Reason == mng.ReasonNodeTerminating && firstTerminating < 0:
			firstTerminating = i
		case l.Reason == mng.ReasonNodeLaunched && firstLaunched < 0:
			firstLaunched = i
		}
		i++
	})
	u := tw.update("initial", nodegroup.UpdateRequest{}, 3*time.Hour)
	if u.Status != mng.UpdateSuccessful || u.Surge != 0 {
		t.Fatalf("%s with surge %d, want Successful without surge\n%s", u.Status, u.Surge, tw.dumpLog())
	}
	if firstTerminating < 0 || firstLaunched < 0 || firstTerminating > firstLaunched {
		t.Errorf("first termination is event %d, first launch event %d: MINIMAL must terminate before it launches", firstTerminating, firstLaunched)
	}
	for _, n := range tw.groupNodes("initial") {
		if n.Status.NodeInfo.KubeletVersion != kubelet131 {
			t.Errorf("node %s still runs %s", n.Name, n.Status.NodeInfo.KubeletVersion)
		}
	}
	if n := len(tw.groupNodes("initial")); n != 3 {
		t.Errorf("%d nodes after the update, want 3", n)
	}
}

func TestSixtySecondsFromEmptyNodeToTermination(t *testing.T) {
	tw := rolling(t, nil)
	old := tw.status("initial").Nodes
	emptyAt := map[string]time.Time{}
	tw.watch(func(l logLine) {
		if l.Reason == mng.ReasonNodeDrained && slices.Contains(old, l.Node) {
			if n := tw.drainablePodsOn(l.Node); n != 0 {
				t.Errorf("node %s reported drained with %d pods left", l.Node, n)
			}
			emptyAt[l.Node] = l.At
		}
	})
	tw.update("initial", nodegroup.UpdateRequest{}, 3*time.Hour)
	for _, name := range old {
		term, ok := tw.first(mng.ReasonNodeTerminating, name)
		if !ok || emptyAt[name].IsZero() {
			t.Fatalf("node %s: drained at %v, terminating found %t", name, emptyAt[name], ok)
		}
		if d := term.At.Sub(emptyAt[name]); d != 60*time.Second {
			t.Errorf("node %s: %s from empty to the termination request, want 60s", name, d)
		}
	}
}

// pdbBlocked is group "initial" with one node running web (1 replica)
// under a PDB with minAvailable 1: the pod can never be evicted.
func pdbBlocked(t *testing.T) (tw *twin, node, pod string) {
	t.Helper()
	tw = newTwin(t)
	tw.adopt(group("initial", 1, atVersion("1.30")))
	tw.apply(deployment("web", 1, "250m"), twintest.PDB("web-pdb", "web", twintest.Int(1), nil))
	tw.Settle()
	return tw, tw.status("initial").Nodes[0], "default/" + tw.PodsOf("web")[0].Name
}

func TestPDBFailsTheUpdateAfterExactly15Minutes(t *testing.T) {
	tw, node, pod := pdbBlocked(t)
	u := tw.update("initial", nodegroup.UpdateRequest{}, 2*time.Hour)

	if u.Status != mng.UpdateFailed || len(u.Errors) != 1 {
		t.Fatalf("update %s, errors %v; want Failed with one error\n%s", u.Status, u.Errors, tw.dumpLog())
	}
	f := u.Errors[0]
	if f.Code != nodegroup.PodEvictionFailure || f.Pod != pod || f.PDB != "default/web-pdb" || !slices.Equal(f.ResourceIDs, []string{node}) {
		t.Errorf("failure = %+v; want PodEvictionFailure naming pod %s, PDB default/web-pdb, node %s", f, pod, node)
	}
	if !strings.Contains(f.Message, pod) || !strings.Contains(f.Message, "default/web-pdb") || !strings.Contains(f.Message, "Reached max retries") {
		t.Errorf("message %q does not name the pod and its PDB", f.Message)
	}
	drain, _ := tw.first(mng.ReasonDrainStarted, node)
	failed, _ := tw.first(mng.ReasonUpdateFailed, "")
	if d := failed.At.Sub(drain.At); d != 15*time.Minute {
		t.Errorf("failed %s after the drain began, want exactly 15m0s", d)
	}
	if len(u.Blocked) != 1 || u.Blocked[0].Pod != pod || !u.Blocked[0].Since.Equal(drain.At) || !u.Blocked[0].Until.Equal(failed.At) {
		t.Errorf("blocked = %+v; want %s blocked from the drain's start to the failure", u.Blocked, pod)
	}
	// No rollback: the old node keeps its pod, cordoned; the group reports
	// its old version.
	st := tw.status("initial")
	if st.Status != mng.StatusActive || st.Version != kubeversion.MustParse("1.30") {
		t.Errorf("after the failure: %s %s, want ACTIVE 1.30", st.Status, st.Version)
	}
	if n := tw.Kube.Node(node); n == nil || !n.Spec.Unschedulable || tw.drainablePodsOn(node) != 1 {
		t.Errorf("old node %s should still exist, cordoned, with its pod", node)
	}
}

// A refused eviction is retried every 5 s (drain.go EvictionRetry): when
// the budget allows the eviction, the next retry gets it through.
func TestRefusedEvictionIsRetriedEvery5Seconds(t *testing.T) {
	tw, node, pod := pdbBlocked(t)
	if err := tw.mng.UpdateVersion("initial", nodegroup.UpdateRequest{}, nil); err != nil {
		t.Fatal(err)
	}
	tw.runUntil(time.Hour, func() bool { _, ok := tw.first(mng.ReasonDrainStarted, node); return ok })
	drain, _ := tw.first(mng.ReasonDrainStarted, node)
	// At drain + 68 s a second replica starts on a new node; it is Ready
	// 5 s later (pod startup), at drain + 73 s, when the PDB allows one
	// disruption. Retries fall at drain + 5 s·k: the eviction goes through
	// at drain + 75 s.
	tw.runUntil(68*time.Second, func() bool { return false })
	if err := tw.Kube.Scale("Deployment", "default", "web", 2); err != nil {
		t.Fatal(err)
	}
	tw.runUntil(time.Minute, func() bool { _, ok := tw.first(mng.ReasonEvicting, node); return ok })
	evicted, ok := tw.first(mng.ReasonEvicting, node)
	if !ok || evicted.Object != pod || evicted.At.Sub(drain.At) != 75*time.Second {
		t.Fatalf("eviction of %s at drain + %s (found %t), want drain + 1m15s\n%s", pod, evicted.At.Sub(drain.At), ok, tw.dumpLog())
	}
}

func TestForceDeletesThePodsAfter15Minutes(t *testing.T) {
	tw, node, pod := pdbBlocked(t)
	u := tw.update("initial", nodegroup.UpdateRequest{Force: true}, 3*time.Hour)
	if u.Status != mng.UpdateSuccessful {
		t.Fatalf("forced update %s %v\n%s", u.Status, u.Errors, tw.dumpLog())
	}
	drain, _ := tw.first(mng.ReasonDrainStarted, node)
	blocked, ok := tw.first(mng.ReasonEvictionBlocked, node)
	if !ok || !blocked.At.Equal(drain.At) {
		t.Errorf("force must still try the Eviction API first; first refusal %v (ok %t), drain at %v", blocked.At, ok, drain.At)
	}
	deleted, ok := tw.first(mng.ReasonPodDeleted, node)
	if !ok || deleted.Object != pod || deleted.At.Sub(drain.At) != 15*time.Minute {
		t.Errorf("pod deletion %+v (found %t); want %s deleted 15m after the drain began", deleted, ok, pod)
	}
	if slices.Contains(tw.status("initial").Nodes, node) {
		t.Errorf("old node %s still in the group", node)
	}
	tw.runUntil(10*time.Minute, func() bool { return false })
	for _, p := range tw.PodsOf("web") {
		if n := tw.Kube.Node(p.Spec.NodeName); n == nil || n.Status.NodeInfo.KubeletVersion != kubelet131 {
			t.Errorf("web pod %s on %q, want a 1.31 node", p.Name, p.Spec.NodeName)
		}
	}
}

// EKS "randomly selects a node that needs to be upgraded" (§B upgrade
// phase step 2): over several seeds the first node selected is not always
// the same one of the sorted old nodes.
func TestNodesAreSelectedAtRandom(t *testing.T) {
	firstPositions := map[int]bool{}
	for seed := uint64(1); seed <= 10; seed++ {
		tw := rolling(t, []twinOption{withSeed(seed)})
		old := tw.status("initial").Nodes // sorted
		if err := tw.mng.UpdateVersion("initial", nodegroup.UpdateRequest{}, nil); err != nil {
			t.Fatal(err)
		}
		tw.runUntil(time.Hour, func() bool { _, ok := tw.first(mng.ReasonNodeSelected, ""); return ok })
		sel, _ := tw.first(mng.ReasonNodeSelected, "")
		firstPositions[slices.Index(old, sel.Node)] = true
	}
	if len(firstPositions) < 2 || firstPositions[-1] {
		t.Fatalf("positions of the first selected node among the sorted old nodes over 10 seeds: %v; want a random choice among them", firstPositions)
	}
}

func TestSameSeedSameRehearsal(t *testing.T) {
	run := func(seed uint64) string {
		tw := rolling(t, []twinOption{withSeed(seed)}, withMaxUnavailable(2))
		tw.update("initial", nodegroup.UpdateRequest{}, 3*time.Hour)
		var b strings.Builder
		for _, l := range tw.log.Lines {
			fmt.Fprintf(&b, "%s %s %s %s\n", l.At.Sub(t0), l.Reason, l.Node, l.Message)
		}
		return b.String()
	}
	a, b := run(42), run(42)
	if a != b {
		t.Fatalf("two runs with seed 42 differ:\n%s\n---\n%s", a, b)
	}
	if a == run(43) {
		t.Fatalf("seeds 42 and 43 gave the same run; the log does not show the random choices")
	}
}
