package asg

import (
	"fmt"
	"time"

	"github.com/ladder-eks/ladder/internal/rules/instancerefresh"
	"github.com/ladder-eks/ladder/internal/sim"
)

// RefreshStatus is an instance refresh's Status (DescribeInstanceRefreshes).
type RefreshStatus string

// Refresh statuses the twin uses. Cancelling, Cancelled and the rollback
// statuses need CancelInstanceRefresh or AutoRollback, which the twin does
// not model.
const (
	RefreshInProgress RefreshStatus = "InProgress"
	RefreshBaking     RefreshStatus = "Baking"
	RefreshSuccessful RefreshStatus = "Successful"
	RefreshFailed     RefreshStatus = "Failed"
)

// InstanceRefresh is the twin's DescribeInstanceRefreshes entry, with the
// sets and checkpoints a report shows.
type InstanceRefresh struct {
	ID           string
	Group        string
	Status       RefreshStatus
	StatusReason string
	// PercentageComplete counts a replacement when its new instance is
	// InService and warmed up (API InstanceRefresh.PercentageComplete).
	PercentageComplete int
	// InstancesToUpdate is how many of the instances to replace are not
	// replaced and warmed up yet.
	InstancesToUpdate int
	StartTime         time.Time
	BakeStartTime     time.Time // zero without BakeTime
	EndTime           time.Time
	// DesiredConfiguration is the launch template version rolled out.
	DesiredConfiguration LaunchTemplate
	Settings             instancerefresh.Settings
	Capacity             instancerefresh.Capacity
	// ToReplace is how many instances the refresh replaces; Skipped how
	// many SkipMatching left alone.
	ToReplace, Skipped int
	Sets               []SetRecord
	Checkpoints        []CheckpointRecord
}

// SetRecord is a set of replacements and when it started.
type SetRecord struct {
	Start time.Time
	instancerefresh.Set
}

// CheckpointRecord is a checkpoint reached, and when the refresh went on.
type CheckpointRecord struct {
	Percentage int
	ReachedAt  time.Time
	ResumeAt   time.Time // ReachedAt + CheckpointDelay; zero for the last checkpoint
}

// refresh is an instance refresh in progress.
type refresh struct {
	g   *group
	obj InstanceRefresh
	set instancerefresh.Settings
	cap instancerefresh.Capacity
	// candidates are the instances to replace, in launch order.
	candidates []*instance
	repl       []*replacement
	nextCP     int  // index of the next checkpoint in set.CheckpointPercentages
	lastCP     bool // the last checkpoint was reached: a partial refresh ends
	resumeAt   time.Time
	step       *sim.Trigger
	done       func(InstanceRefresh)
	finished   bool
}

// replacement is a new instance and, for a launch-first one, the old
// instance it takes over once warmed up.
type replacement struct {
	new      *instance
	old      *instance
	released bool // old was sent to termination
}

// StartInstanceRefresh is StartInstanceRefresh with the Rolling strategy:
// it validates the preferences (§C, F.10), then replaces the group's
// instances with ones on its launch template (SetLaunchTemplate) set by
// set. done, if not nil, runs once with the final state, Successful or
// Failed.
//
// A set (Capacity.NextSet) takes instances out of service, terminates them
// and launches replacements, "Then, it waits until the instances pass your
// health checks and complete warmup before it moves on to replacing other
// instances" (§C "How it works"). At a checkpoint it "temporarily stops
// replacing instances" for CheckpointDelay, pacing sets so as not to
// overshoot it (asg-adding-checkpoints-instance-refresh.md: "will sometimes
// replace fewer but never more"). When nothing is left to replace and every
// old instance has terminated, it waits BakeTime and succeeds.
func (a *ASG) StartInstanceRefresh(name string, prefs instancerefresh.Preferences, done func(InstanceRefresh)) error {
	g, err := a.group(name)
	if err != nil {
		return err
	}
	if g.refreshing() {
		return fmt.Errorf("InstanceRefreshInProgress: An Instance Refresh is already in progress and blocks the execution of this Instance Refresh (group %s)", name)
	}
	set, err := prefs.Resolve(g.warmup())
	if err != nil {
		return err
	}
	a.refreshSeq++
	r := &refresh{g: g, set: set, done: done,
		cap: instancerefresh.NewCapacity(g.spec.Desired, set.MinHealthyPercentage, set.MaxHealthyPercentage)}
	r.obj = InstanceRefresh{
		ID:                   fmt.Sprintf("%08x-%04x-4000-8000-%012x", a.refreshSeq, len(name), a.refreshSeq),
		Group:                name,
		Status:               RefreshInProgress,
		StartTime:            a.eng.Now(),
		DesiredConfiguration: g.lt,
		Settings:             set,
		Capacity:             r.cap,
	}
	for _, in := range g.instances {
		switch {
		case in.terminating():
		case set.SkipMatching && in.lt == g.lt:
			// §C SkipMatching: "skips replacing instances that match the
			// desired configuration".
			r.obj.Skipped++
		default:
			r.candidates = append(r.candidates, in)
		}
	}
	r.obj.ToReplace = len(r.candidates)
	// DescribeInstanceRefreshes shows the instances to update from the
	// start, before the first set.
	r.progress()
	r.step = a.eng.NewTrigger(r.run)
	g.refresh = r
	g.log(Event{Code: EventRefreshStarted, Message: fmt.Sprintf("Instance refresh %s started: %d instances to replace with %s (%s), %d skipped; min healthy %d%% (%d instances), max healthy %d%% (%d instances), warm-up %s",
		r.obj.ID, r.obj.ToReplace, g.lt, g.ami.ID, r.obj.Skipped, set.MinHealthyPercentage, r.cap.MinHealthy, set.MaxHealthyPercentage, r.cap.MaxTotal, set.InstanceWarmup)})
	r.step.Fire()
	return nil
}

// changed tells the group's running refresh that something it waits for
// may have happened.
func (g *group) changed() {
	if g.refreshing() {
		g.refresh.step.Fire()
	}
}

// run is the refresh's control loop, run whenever an instance warms up or
// terminates, or a checkpoint delay ends.
func (r *refresh) run() {
	if r.finished || r.obj.Status != RefreshInProgress {
		return
	}
	r.releaseLaunchFirst()
	r.progress()
	if r.inFlight() {
		return
	}
	if r.checkpoint() || r.g.a.eng.Now().Before(r.resumeAt) {
		return
	}
	remaining := r.remaining()
	if len(remaining) == 0 || r.lastCP {
		if r.g.terminatingCount() > 0 {
			return // the last old instances are still leaving
		}
		r.complete()
		return
	}
	r.startSet(remaining)
}

// releaseLaunchFirst terminates each old instance whose launch-first
// replacement is InService and warmed up.
func (r *refresh) releaseLaunchFirst() {
	for _, rp := range r.repl {
		if rp.old != nil && !rp.released && rp.new.warmed {
			rp.released = true
			r.g.terminate(rp.old, fmt.Sprintf("instance refresh %s: replaced by %s", r.obj.ID, rp.new.id))
		}
	}
}

// updated counts replacements InService and warmed up.
func (r *refresh) updated() int {
	n := 0
	for _, rp := range r.repl {
		if rp.new.warmed {
			n++
		}
	}
	return n
}

func (r *refresh) progress() {
	u := r.updated()
	r.obj.InstancesToUpdate = max(0, len(r.candidates)-u)
	r.obj.PercentageComplete = 100
	if len(r.candidates) > 0 {
		r.obj.PercentageComplete = min(100, 100*u/len(r.candidates))
	}
}

// inFlight reports whether a replacement of the current set is not warmed
// up yet.
func (r *refresh) inFlight() bool {
	for _, rp := range r.repl {
		if !rp.new.warmed && !rp.new.terminating() && rp.new.state != Terminated {
			return true
		}
	}
	return false
}

// remaining lists the candidates still to replace: in the group, in
// service, not yet being replaced.
func (r *refresh) remaining() []*instance {
	var out []*instance
	for _, in := range r.candidates {
		if in.state == InService && !in.reserved {
			out = append(out, in)
		}
	}
	return out
}

// checkpoint records the highest checkpoint the replacements reached, if
// any, and pauses for CheckpointDelay unless it is the last (§C; the
// checkpoint page's examples go straight on after 100 and a partial refresh
// ends at its last checkpoint). It reports whether the refresh paused.
func (r *refresh) checkpoint() bool {
	cps := r.set.CheckpointPercentages
	reached := instancerefresh.ReachedCheckpoint(cps, r.nextCP, r.updated(), len(r.candidates))
	if reached < 0 {
		return false
	}
	r.nextCP = reached + 1
	now := r.g.a.eng.Now()
	rec := CheckpointRecord{Percentage: cps[reached], ReachedAt: now}
	last := reached == len(cps)-1
	if !last {
		rec.ResumeAt = now.Add(r.set.CheckpointDelay)
	}
	r.obj.Checkpoints = append(r.obj.Checkpoints, rec)
	msg := fmt.Sprintf("Instance refresh %s checkpoint %d%% reached (%d%% complete)", r.obj.ID, rec.Percentage, r.obj.PercentageComplete)
	if !last {
		msg += fmt.Sprintf("; waiting %s", r.set.CheckpointDelay)
	}
	r.g.log(Event{Code: EventRefreshCheckpoint, Message: msg})
	if last {
		r.lastCP = true
		return false
	}
	r.resumeAt = rec.ResumeAt
	r.g.a.eng.At(r.resumeAt, r.step.Fire)
	return true
}

// startSet replaces the next set of instances.
func (r *refresh) startSet(remaining []*instance) {
	room := instancerefresh.SetRoom(len(remaining), r.set.CheckpointPercentages, r.nextCP, r.updated(), len(r.candidates))
	s := r.cap.NextSet(r.g.inService(), room)
	r.obj.Sets = append(r.obj.Sets, SetRecord{Start: r.g.a.eng.Now(), Set: s})
	cause := "instance refresh " + r.obj.ID
	for i := 0; i < s.Size(); i++ {
		old := r.g.pickVictim(remaining)
		remaining = without(remaining, old)
		rp := &replacement{}
		if i < s.TerminateFirst {
			r.g.terminate(old, cause)
		} else {
			old.reserved = true
			rp.old = old
		}
		in, err := r.g.launch(cause, r.set.InstanceWarmup, r.step.Fire)
		if err != nil {
			r.fail(fmt.Sprintf("launching a replacement failed: %v", err))
			return
		}
		rp.new = in
		r.repl = append(r.repl, rp)
	}
}

func (r *refresh) complete() {
	r.progress()
	if r.set.BakeTime > 0 {
		r.obj.Status, r.obj.BakeStartTime = RefreshBaking, r.g.a.eng.Now()
		r.g.log(Event{Code: EventRefreshBaking, Message: fmt.Sprintf("Instance refresh %s baking for %s", r.obj.ID, r.set.BakeTime)})
		r.g.a.eng.After(r.set.BakeTime, r.succeed)
		return
	}
	r.succeed()
}

func (r *refresh) succeed() {
	r.obj.Status, r.obj.EndTime = RefreshSuccessful, r.g.a.eng.Now()
	r.finish(Event{Code: EventRefreshSucceeded, Message: fmt.Sprintf("Instance refresh %s Successful: %d%% complete, %d instances replaced", r.obj.ID, r.obj.PercentageComplete, r.updated())})
}

func (r *refresh) fail(reason string) {
	r.obj.Status, r.obj.StatusReason, r.obj.EndTime = RefreshFailed, reason, r.g.a.eng.Now()
	r.g.fail("", "", "instance refresh "+r.obj.ID+" failed: "+reason)
	r.finish(Event{Type: "Warning", Code: EventRefreshFailed, Message: fmt.Sprintf("Instance refresh %s Failed: %s", r.obj.ID, reason)})
}

func (r *refresh) finish(e Event) {
	r.finished = true
	for _, rp := range r.repl {
		if rp.old != nil && !rp.released {
			rp.old.reserved = false
		}
	}
	r.g.log(e)
	if r.done != nil {
		r.done(r.snapshot())
	}
}

// RefreshRecord returns the group's last instance refresh as
// DescribeInstanceRefreshes shows it: identity, status and reason,
// PercentageComplete and InstancesToUpdate (kept up to date as replacements
// warm up), times, desired configuration and settings — without the sets
// and checkpoints that Status copies. A client polling the refresh after
// every twin event reads this, so it costs neither the group's size nor the
// refresh's length. ok is false when the group has not refreshed yet; an
// unknown group is an error.
func (a *ASG) RefreshRecord(name string) (rec InstanceRefresh, ok bool, err error) {
	g, err := a.group(name)
	if err != nil || g.refresh == nil {
		return InstanceRefresh{}, false, err
	}
	rec = g.refresh.obj
	rec.Settings.CheckpointPercentages = append([]int(nil), rec.Settings.CheckpointPercentages...)
	rec.Sets, rec.Checkpoints = nil, nil
	return rec, true, nil
}

func (r *refresh) snapshot() InstanceRefresh {
	out := r.obj
	out.Settings.CheckpointPercentages = append([]int(nil), r.obj.Settings.CheckpointPercentages...)
	out.Sets = append([]SetRecord(nil), r.obj.Sets...)
	out.Checkpoints = append([]CheckpointRecord(nil), r.obj.Checkpoints...)
	return out
}

func without(list []*instance, x *instance) []*instance {
	out := make([]*instance, 0, len(list))
	for _, in := range list {
		if in != x {
			out = append(out, in)
		}
	}
	return out
}
