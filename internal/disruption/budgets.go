package disruption

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/robfig/cron/v3"
	clocktesting "k8s.io/utils/clock/testing"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// Unbounded is the value Karpenter uses for "no budget limits this reason":
// math.MaxInt32 (semantics.md §A.1b, §F.2).
const Unbounded = math.MaxInt32

// Reasons are the disruption reasons a budget can name, in output order.
var Reasons = [...]karpv1.DisruptionReason{
	karpv1.DisruptionReasonDrifted,
	karpv1.DisruptionReasonEmpty,
	karpv1.DisruptionReasonUnderutilized,
}

// AllowedByReason returns, for each reason, how many of the NodePool's
// numNodes nodes Karpenter's budgets allow to be disrupting at now: upstream's
// NodePool.GetAllowedDisruptionsByReason, called with a clock fixed at now
// (semantics.md §A.1b). A percentage rounds up (§F.1); an inactive budget does
// not restrict (§F.2); a reason no active budget covers gets Unbounded.
//
// numNodes is what BuildDisruptionBudgetMapping counts: the NodePool's managed,
// initialized nodes, including NotReady and deleting ones (§F.4).
//
// If any budget cannot be evaluated, Karpenter fails closed
// (MustGetAllowedDisruptions, §F.3): every reason gets 0, and the error says why.
func AllowedByReason(np *karpv1.NodePool, now time.Time, numNodes int) (map[karpv1.DisruptionReason]int, error) {
	allowed := make(map[karpv1.DisruptionReason]int, len(Reasons))
	failClosed := func(err error) (map[karpv1.DisruptionReason]int, error) {
		for _, r := range Reasons {
			allowed[r] = 0
		}
		return allowed, err
	}
	if np == nil {
		return failClosed(errors.New("no NodePool"))
	}
	if numNodes < 0 {
		return failClosed(fmt.Errorf("nodepool %q: %d nodes; the count cannot be negative", np.Name, numNodes))
	}
	clk := clocktesting.NewFakeClock(now)
	for _, r := range Reasons {
		v, err := np.GetAllowedDisruptionsByReason(clk, numNodes, r)
		if err != nil {
			// Every budget is evaluated for every reason, so the first
			// error is the whole story.
			return failClosed(fmt.Errorf("nodepool %q: invalid disruption budgets, Karpenter allows 0 disruptions for every reason: %w", np.Name, err))
		}
		allowed[r] = v
	}
	return allowed, nil
}

// Available is what the disruption controller may still start for a reason:
// max(allowed − disrupting, 0), exactly as BuildDisruptionBudgetMapping
// (pkg/controllers/disruption/helpers.go) computes it, where disrupting counts
// the NodePool's NotReady nodes and nodes marked for deletion for any reason,
// expiration included (semantics.md §A.1b, §A.5). Like upstream it does not
// special-case Unbounded: Available(Unbounded, 2) is math.MaxInt32 − 2.
func Available(allowed, disrupting int) int {
	return max(allowed-disrupting, 0)
}

// Change is an instant at which some reason's available count changes, and
// the values from that instant on.
type Change struct {
	At time.Time // UTC
	// Allowed is AllowedByReason at At (Unbounded where no active budget applies).
	Allowed map[karpv1.DisruptionReason]int
	// Available is Available(Allowed[r], disrupting) per reason.
	Available map[karpv1.DisruptionReason]int
}

// Limits of Changes, so that a schedule like "* * * * *" cannot make it
// enumerate without bound.
const (
	MaxWindow = 366 * 24 * time.Hour
	MaxHits   = 100_000 // cron hits enumerated, over all budgets
)

// Changes lists every instant in (from, from+window] at which some reason's
// available count changes, in time order, with the values from then on.
//
// Only a scheduled budget's window edges can change the count: it is active on
// [hit, hit+duration) for every cron hit, evaluated in UTC (semantics.md
// §A.1b, §F.5). Changes enumerates each scheduled budget's hits from
// from−duration to from+window with robfig/cron's Next, merges overlapping
// windows, evaluates AllowedByReason at every window edge and keeps the edges
// where a count really changes.
//
// It returns an error if window is not in (0, MaxWindow], if the budgets
// cannot be evaluated (see AllowedByReason; Karpenter then allows 0 for every
// reason, all the time), or if more than MaxHits cron hits fall in the window.
func Changes(np *karpv1.NodePool, from time.Time, window time.Duration, numNodes, disrupting int) ([]Change, error) {
	if window <= 0 || window > MaxWindow {
		return nil, fmt.Errorf("window %s: must be more than 0 and at most %s (366 days)", window, MaxWindow)
	}
	from = from.UTC()
	end := from.Add(window)
	prev, err := availableAt(np, from, numNodes, disrupting)
	if err != nil {
		return nil, err
	}

	edges := map[time.Time]bool{}
	hits := 0
	for i, b := range np.Spec.Disruption.Budgets {
		if b.Schedule == nil {
			continue // always active, or (duration without schedule) already an error above
		}
		var d time.Duration
		if b.Duration != nil {
			d = b.Duration.Duration
		}
		if d <= 0 {
			continue // never active: Next(now−d) is always after now
		}
		sched, err := cron.ParseStandard("TZ=UTC " + *b.Schedule)
		if err != nil {
			return nil, err // unreachable: availableAt already failed on it
		}
		add := func(t time.Time) {
			if t.After(from) && !t.After(end) {
				edges[t] = true
			}
		}
		// Windows [start, stop) of this budget, merged where they overlap or touch.
		var start, stop time.Time
		open := false
		for h := sched.Next(from.Add(-d)); !h.IsZero() && !h.After(end); h = sched.Next(h) {
			if hits++; hits > MaxHits {
				return nil, fmt.Errorf("spec.disruption.budgets[%d].schedule %q fires too often: more than %d cron hits in %s; use a shorter window",
					i, *b.Schedule, MaxHits, window)
			}
			if open && !h.After(stop) {
				stop = h.Add(d)
				continue
			}
			if open {
				add(start)
				add(stop)
			}
			start, stop, open = h, h.Add(d), true
		}
		if open {
			add(start)
			add(stop)
		}
	}

	var changes []Change
	for _, t := range slices.SortedFunc(maps.Keys(edges), time.Time.Compare) {
		c, err := availableAt(np, t, numNodes, disrupting)
		if err != nil {
			return nil, err
		}
		if !maps.Equal(c.Available, prev.Available) {
			changes = append(changes, c)
		}
		prev = c
	}
	return changes, nil
}

func availableAt(np *karpv1.NodePool, at time.Time, numNodes, disrupting int) (Change, error) {
	allowed, err := AllowedByReason(np, at, numNodes)
	if err != nil {
		return Change{}, err
	}
	avail := make(map[karpv1.DisruptionReason]int, len(allowed))
	for r, v := range allowed {
		avail[r] = Available(v, disrupting)
	}
	return Change{At: at, Allowed: allowed, Available: avail}, nil
}
