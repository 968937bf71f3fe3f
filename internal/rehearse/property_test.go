package rehearse

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// The property behind issue 32's "truthful availability": over seeded
// variants of the built-in scenarios (property_gen_test.go), every pod a
// run took below a PodDisruptionBudget's floor is counted, under its
// cause, once. The checker reads the report only — pdbs[].series, drops,
// violations[], rolloutsBelowFloor[], status — and the variant's own
// objects, never the twin's internals:
//
//	(a) series ↔ drops: between entries i−1 and i of a budget's series,
//	    max(0, (healthy[i−1] − healthy[i]) − max(0, allowed[i−1])) pods
//	    went below its floor; drops[] lists exactly that many at t[i],
//	    instant by instant (several entries may share an instant: a node
//	    takes its pods one by one), and no drop elsewhere;
//	(b) drop ↔ cause: a deleted or node-removed drop is a violation of that
//	    pod at that instant naming the budget, and every violation is such
//	    drops, one per budget it names (a violation without its drop, or a
//	    pod counted twice, is an over-count); a rollout or scale-down drop
//	    is inside a rolloutsBelowFloor span of that budget and workload,
//	    whose pods add up to those drops;
//	(c) the floor is the disruption controller's, recomputed from the
//	    variant's objects: for maxUnavailable and a percentage
//	    minAvailable, expected is the sum of spec.replicas of the
//	    controllers whose pods the budget selects (unless the script
//	    changes their scale) and desired follows the upstream rounding; an
//	    integer minAvailable is the floor itself; allowed is
//	    max(0, healthy − desired), 0 when nothing is expected; a budget
//	    needing a scale over a DaemonSet's pods has a syncError and allows
//	    nothing, ever;
//	(d) a run with a drop that was deleted, node-removed, a rollout or a
//	    scale-down is not succeeded;
//	(e) a variant rehearsed twice gives the same JSON (every tenth seed).

// propN is how many variants TestPDBFloorAccountingProperty runs:
// LADDER_PROPERTY_N overrides it.
func propN(t *testing.T) int {
	if s := os.Getenv("LADDER_PROPERTY_N"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("LADDER_PROPERTY_N=%q is not a positive count", s)
		}
		return n
	}
	if testing.Short() {
		return 50
	}
	return 400
}

// TestPDBFloorAccountingProperty rehearses seeded variants of the
// built-in scenarios in parallel and checks each report's accounting of
// drops below PodDisruptionBudget floors (a)–(e). A failure prints the
// seed, the variant's budgets and controllers, and what mismatched;
// LADDER_PROPERTY_SEED=N runs seed N alone (any seed, a fuzzer's too).
func TestPDBFloorAccountingProperty(t *testing.T) {
	if s := os.Getenv("LADDER_PROPERTY_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("LADDER_PROPERTY_SEED=%q is not a seed", s)
		}
		if _, ok := checkVariant(t, seed); !ok {
			t.Skip("the variant does not validate")
		}
		return
	}
	n := propN(t)
	var ran, skipped, drops, violations atomic.Int64
	start := time.Now()
	t.Cleanup(func() {
		t.Logf("%d variants: %d rehearsed (%d drops below a floor, %d violations), %d skipped as invalid, in %s",
			n, ran.Load(), drops.Load(), violations.Load(), skipped.Load(), time.Since(start).Round(time.Millisecond))
		// A generator that mostly makes invalid scenarios tests little.
		if s := skipped.Load(); s*10 > int64(n) {
			t.Errorf("%d of %d variants did not validate: the generator is broken", s, n)
		}
	})
	for seed := uint64(1); seed <= uint64(n); seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			rep, ok := checkVariant(t, seed)
			if !ok {
				skipped.Add(1)
				return
			}
			ran.Add(1)
			violations.Add(int64(len(rep.Violations)))
			for _, p := range rep.PDBs {
				drops.Add(int64(len(p.Drops)))
			}
		})
	}
}

// FuzzPDBFloorAccounting is the property over any seed (make fuzz).
func FuzzPDBFloorAccounting(f *testing.F) {
	for _, seed := range []uint64{1, 2, 3, 7, 42} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		if _, ok := checkVariant(t, seed); !ok {
			t.Skip("the variant does not validate")
		}
	})
}

// checkVariant generates, rehearses and checks one variant; ok is false
// when the variant does not validate.
func checkVariant(t *testing.T, seed uint64) (rep *report.Report, ok bool) {
	t.Helper()
	v, err := genVariant(seed)
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	if _, err := v.sc.Validate(); err != nil {
		t.Logf("seed %d: the variant does not validate: %v", seed, err)
		return nil, false
	}
	rep, err = Run(v.sc, Options{})
	if err != nil {
		t.Fatalf("%s\nrehearsal: %v", v.describe(), err)
	}
	problems := checkPDBAccounting(v.sc, rep)
	if seed%10 == 0 {
		again, err := Run(v.sc, Options{})
		if err != nil {
			t.Fatalf("%s\nsecond rehearsal: %v", v.describe(), err)
		}
		var a, b bytes.Buffer
		_ = rep.WriteJSON(&a)
		_ = again.WriteJSON(&b)
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			problems = append(problems, fmt.Sprintf("(e) the variant rehearsed twice gives different JSON: %s", firstDiff(a.String(), b.String())))
		}
	}
	if len(problems) > 0 {
		t.Errorf("%sstatus %s\n%s%s", v.describe(), rep.Status, reportPDBSummary(rep, problems), strings.Join(problems, "\n"))
	}
	return rep, true
}

func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d: %q vs %q", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d lines vs %d", len(la), len(lb))
}

// reportPDBSummary is each budget of the report, the drops of those the
// problems name, and the violations and rollout spans, for a failure
// message (at most a few lines of each).
func reportPDBSummary(rep *report.Report, problems []string) string {
	const most = 12
	var b strings.Builder
	named := func(key string) bool {
		return slices.ContainsFunc(problems, func(p string) bool {
			return slices.Contains(strings.FieldsFunc(p, func(r rune) bool { return strings.ContainsRune(" ,:;()[]", r) }), key)
		})
	}
	for _, p := range rep.PDBs {
		key := p.Namespace + "/" + p.Name
		fmt.Fprintf(&b, "  report PDB %s min=%q max=%q workloads %v syncError %q: %d entries, %d drops\n",
			key, p.MinAvailable, p.MaxUnavailable, p.Workloads, p.SyncError, len(p.Series.T), len(p.Drops))
		if !named(key) {
			continue
		}
		for i, d := range p.Drops {
			if i == most {
				fmt.Fprintf(&b, "    … %d more\n", len(p.Drops)-most)
				break
			}
			fmt.Fprintf(&b, "    drop t=%g %s %s (%s) by %s\n", d.T, d.Pod, d.Cause, d.Workload, d.By)
		}
	}
	for i, x := range rep.Violations {
		if i == most {
			fmt.Fprintf(&b, "  … %d more violations\n", len(rep.Violations)-most)
			break
		}
		fmt.Fprintf(&b, "  violation t=%g %s pdb %s %s by %s\n", x.T, x.Pod, x.PDB, x.Mechanism, x.By)
	}
	for i, s := range rep.RolloutsBelowFloor {
		if i == most {
			fmt.Fprintf(&b, "  … %d more spans\n", len(rep.RolloutsBelowFloor)-most)
			break
		}
		fmt.Fprintf(&b, "  rolloutBelowFloor %s %s %s %g–%g ongoing=%v pods %d\n", s.PDB, s.Workload, s.Cause, s.Start, s.End, s.Ongoing, s.Pods)
	}
	return b.String()
}

// seriesAround is a budget's series entries i−1 and i.
func seriesAround(s report.PDBSeries, i int) string {
	var parts []string
	for j := max(0, i-1); j <= i && j < len(s.T); j++ {
		parts = append(parts, fmt.Sprintf("[%d] t=%g healthy=%d desired=%d expected=%d allowed=%d", j, s.T[j], s.Healthy[j], s.Desired[j], s.Expected[j], s.Allowed[j]))
	}
	return strings.Join(parts, "; ")
}

// checkPDBAccounting is checks (a)–(d) of a report against the scenario
// it rehearsed; it returns each problem, one line each.
func checkPDBAccounting(sc *scenario.Scenario, rep *report.Report) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	type dropRef struct {
		pdb string
		d   report.Drop
	}
	var causeDrops []dropRef // deleted, node-removed, rollout, scale-down
	for _, p := range rep.PDBs {
		key := p.Namespace + "/" + p.Name
		s := p.Series
		if n := len(s.T); len(s.Healthy) != n || len(s.Desired) != n || len(s.Expected) != n || len(s.Allowed) != n || n == 0 {
			fail("(a) PDB %s: series arrays of lengths t %d healthy %d desired %d expected %d allowed %d", key,
				len(s.T), len(s.Healthy), len(s.Desired), len(s.Expected), len(s.Allowed))
			continue
		}
		// (a) The drops the series imply, instant by instant, against
		// those listed.
		implied, at := map[float64]int{}, map[float64]int{}
		var instants []float64
		for i := 1; i < len(s.T); i++ {
			if s.T[i] < s.T[i-1] {
				fail("(a) PDB %s: series goes back in time at entry %d: %s", key, i, seriesAround(s, i))
			}
			n := max(0, int(s.Healthy[i-1]-s.Healthy[i])-max(0, int(s.Allowed[i-1])))
			if _, seen := implied[s.T[i]]; !seen {
				instants = append(instants, s.T[i])
				at[s.T[i]] = i
			}
			implied[s.T[i]] += n
		}
		listed := map[float64]int{}
		for _, d := range p.Drops {
			if _, seen := implied[d.T]; !seen && listed[d.T] == 0 {
				instants = append(instants, d.T)
			}
			listed[d.T]++
		}
		for _, t := range instants {
			if implied[t] != listed[t] {
				fail("(a) PDB %s at t=%g: the series imply %d pod(s) below the floor, drops[] lists %d (series %s)", key, t, implied[t], listed[t], seriesAround(s, at[t]))
			}
		}
		seen := map[string]bool{}
		for _, d := range p.Drops {
			k := fmt.Sprintf("%s@%g", d.Pod, d.T)
			if seen[k] {
				fail("(b) PDB %s: pod %s dropped twice at t=%g", key, d.Pod, d.T)
			}
			seen[k] = true
			switch d.Cause {
			case report.CauseDeleted, report.CauseNodeRemoved, report.CauseRollout, report.CauseScaleDown:
				causeDrops = append(causeDrops, dropRef{key, d})
			case report.CauseUnready:
			default:
				fail("(b) PDB %s: drop of %s at t=%g has cause %q", key, d.Pod, d.T, d.Cause)
			}
		}
		problems = append(problems, checkFloor(sc, p)...)
	}

	// (b) deleted, node-removed ↔ violations.
	usedViolation := make([]int, len(rep.Violations)) // budgets matched, per violation
	vseen := map[string]bool{}
	for i, x := range rep.Violations {
		k := fmt.Sprintf("%s@%g", x.Pod, x.T)
		if vseen[k] {
			fail("(b) violation: pod %s counted twice at t=%g", x.Pod, x.T)
		}
		vseen[k] = true
		if x.PDB == "" {
			fail("(b) violation %d (%s at t=%g) names no PDB", i, x.Pod, x.T)
		}
	}
	// rollout, scale-down ↔ rolloutsBelowFloor, per budget and workload.
	spanPods, spanDrops := map[string]int{}, map[string]int{}
	for _, s := range rep.RolloutsBelowFloor {
		spanPods[s.PDB+" "+s.Workload] += s.Pods
	}
	for _, r := range causeDrops {
		d := r.d
		switch d.Cause {
		case report.CauseDeleted, report.CauseNodeRemoved:
			found := false
			for i, x := range rep.Violations {
				if x.Pod == d.Pod && x.T == d.T && x.Mechanism == d.Cause && slices.Contains(strings.Split(x.PDB, ","), r.pdb) {
					usedViolation[i]++
					found = true
					break
				}
			}
			if !found {
				fail("(b) drop of %s (PDB %s, %s at t=%g by %s) has no violation naming the PDB", d.Pod, r.pdb, d.Cause, d.T, d.By)
			}
		default:
			ns, _, _ := strings.Cut(r.pdb, "/")
			kind, name, _ := strings.Cut(d.Workload, "/")
			w := kind + "/" + ns + "/" + name
			spanDrops[r.pdb+" "+w]++
			found := false
			for _, s := range rep.RolloutsBelowFloor {
				if s.PDB == r.pdb && s.Workload == w && s.Start <= d.T && (s.Ongoing || d.T <= s.End) {
					found = true
					break
				}
			}
			if !found {
				fail("(b) %s drop of %s (PDB %s, workload %s, t=%g) is in no rolloutsBelowFloor span", d.Cause, d.Pod, r.pdb, w, d.T)
			}
		}
	}
	for i, x := range rep.Violations {
		if want := len(strings.Split(x.PDB, ",")); usedViolation[i] != want {
			fail("(b) violation of %s at t=%g names %d PDB(s) (%s), %d drop(s) below a floor back it: an over-count", x.Pod, x.T, want, x.PDB, usedViolation[i])
		}
	}
	for k, n := range spanPods {
		if spanDrops[k] != n {
			fail("(b) rolloutsBelowFloor %s: spans count %d pod(s), drops[] %d", k, n, spanDrops[k])
		}
	}
	for k, n := range spanDrops {
		if _, ok := spanPods[k]; !ok {
			fail("(b) %s: %d rollout/scale-down drop(s), no span", k, n)
		}
	}

	// (d) A pod taken below a floor by anything but readiness is not a
	// success.
	if len(causeDrops) > 0 && rep.Status == report.Succeeded {
		d := causeDrops[0]
		fail("(d) status succeeded with %d drop(s) below a floor, first %s of %s (PDB %s) at t=%g", len(causeDrops), d.d.Cause, d.d.Pod, d.pdb, d.d.T)
	}
	// Every budget of the scenario is in the report.
	for _, o := range sc.Objects {
		if pdb, ok := o.Object.(*policyv1.PodDisruptionBudget); ok {
			if !slices.ContainsFunc(rep.PDBs, func(p report.PDB) bool { return p.Namespace == pdb.Namespace && p.Name == pdb.Name }) {
				fail("PDB %s/%s of the scenario is not in pdbs[]", pdb.Namespace, pdb.Name)
			}
		}
	}
	return problems
}

// checkFloor is (c): the budget's floor as the disruption controller
// computes it (k8s.io/kubernetes pkg/controller/disruption), from the
// scenario's objects.
func checkFloor(sc *scenario.Scenario, p report.PDB) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	key := p.Namespace + "/" + p.Name
	o, ok := sc.Find("PodDisruptionBudget", p.Namespace, p.Name)
	if !ok {
		return nil // applied by the script
	}
	pdb := o.Object.(*policyv1.PodDisruptionBudget)
	s := p.Series
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if pdb.Spec.Selector == nil || err != nil {
		return nil // selects nothing, or fails safe: not this check's
	}
	// The controllers whose pods it selects, and whether the script
	// changes their scale.
	var replicas int32
	var daemonSet, scaled bool
	var selected []string
	for _, w := range propWorkloads(sc) {
		if w.namespace != p.Namespace || !sel.Matches(labels.Set(w.template.Labels)) {
			continue
		}
		selected = append(selected, w.key())
		if w.replicas == nil {
			daemonSet = true
			continue
		}
		replicas += *w.replicas
		if scriptScales(sc, w) {
			scaled = true
		}
	}
	needsScale := pdb.Spec.MaxUnavailable != nil || (pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.String)
	if needsScale && daemonSet {
		if p.SyncError == "" {
			fail("(c) PDB %s (%s over %v) selects a DaemonSet's pods and needs a scale: want a syncError, there is none", key, budgetString(pdb.Spec), selected)
		}
		for i := range s.T {
			if s.Allowed[i] != 0 {
				fail("(c) PDB %s fails safe over a DaemonSet's pods but allows %d: %s", key, s.Allowed[i], seriesAround(s, i))
				break
			}
		}
		return problems
	}
	if p.SyncError != "" {
		fail("(c) PDB %s (%s over %v): unexpected syncError %q", key, budgetString(pdb.Spec), selected, p.SyncError)
		return problems
	}
	for i := range s.T {
		want := max(0, s.Healthy[i]-s.Desired[i])
		if s.Expected[i] <= 0 {
			want = 0 // updatePdbStatus: nothing expected, nothing allowed
		}
		if s.Allowed[i] != want {
			fail("(c) PDB %s: allowed %d, want max(0, healthy − desired) = %d (0 when nothing is expected): %s", key, s.Allowed[i], want, seriesAround(s, i))
			break
		}
	}
	if !needsScale {
		if pdb.Spec.MinAvailable != nil {
			for i := range s.T {
				if s.Desired[i] != pdb.Spec.MinAvailable.IntVal {
					fail("(c) PDB %s (minAvailable %d): desired %d: %s", key, pdb.Spec.MinAvailable.IntVal, s.Desired[i], seriesAround(s, i))
					break
				}
			}
		}
		return problems
	}
	if scaled {
		return problems
	}
	for i := range s.T {
		if s.Expected[i] != replicas {
			fail("(c) PDB %s (%s over %v): expected %d, the controllers' replicas add up to %d: %s", key, budgetString(pdb.Spec), selected, s.Expected[i], replicas, seriesAround(s, i))
			break
		}
		if want := desiredHealthy(pdb.Spec, s.Expected[i]); s.Desired[i] != want {
			fail("(c) PDB %s (%s): desired %d with expected %d, want %d: %s", key, budgetString(pdb.Spec), s.Desired[i], s.Expected[i], want, seriesAround(s, i))
			break
		}
	}
	return problems
}

// desiredHealthy is the disruption controller's floor for a budget needing
// a scale: maxUnavailable scaled rounding up, taken from expected (never
// below 0), or minAvailable's percentage of expected rounding up.
func desiredHealthy(spec policyv1.PodDisruptionBudgetSpec, expected int32) int32 {
	scaled := func(v string) int32 {
		if pct, ok := strings.CutSuffix(v, "%"); ok {
			n, _ := strconv.Atoi(pct)
			return int32((n*int(expected) + 99) / 100)
		}
		n, _ := strconv.Atoi(v)
		return int32(n)
	}
	if spec.MaxUnavailable != nil {
		return max(0, expected-scaled(spec.MaxUnavailable.String()))
	}
	return scaled(spec.MinAvailable.String())
}

// scriptScales reports whether the scenario's actions change a
// controller's scale or template: scale, patch or apply it.
func scriptScales(sc *scenario.Scenario, w propWorkload) bool {
	for i, a := range sc.Spec.Actions {
		switch {
		case a.Scale != nil && a.Scale.Kind == w.kind && a.Scale.Name == w.name && (a.Scale.Namespace == "" || a.Scale.Namespace == w.namespace):
			return true
		case a.Patch != nil && a.Patch.Kind == w.kind && a.Patch.Name == w.name && (a.Patch.Namespace == "" || a.Patch.Namespace == w.namespace):
			return true
		}
		for _, o := range sc.ActionObjects[i] {
			switch o.Object.(type) {
			case *appsv1.Deployment, *appsv1.StatefulSet, *corev1.Pod:
				if o.GVK.Kind == w.kind && o.Object.GetName() == w.name && o.Object.GetNamespace() == w.namespace {
					return true
				}
			}
		}
	}
	return false
}
