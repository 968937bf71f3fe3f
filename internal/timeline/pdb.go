package timeline

import (
	"cmp"
	"slices"
)

// A PodDisruptionBudget's floor belongs to the budget, not to a workload:
// status.desiredHealthy is computed over every pod it selects, whatever
// their controllers (semantics.md §D.2). The timeline takes the floors, and
// the count of budgets below theirs, from the budgets' own status as the
// report's pdbs[] has it, never from one workload's replicas.

// ownFloor reports whether p's floor is w's alone: p selects only w's pods
// and the disruption controller computes its status.
func ownFloor(p *PDB, w *Workload) bool {
	if p.SyncError != "" || p.Namespace != w.Namespace || len(p.T) == 0 {
		return false
	}
	for _, x := range p.Workloads {
		if x != w.Kind+"/"+w.Name {
			return false
		}
	}
	return true
}

// withFloor gives w the floor of the budgets whose floor is its own (the
// highest of several) at each of its samples and at each change of their
// floor, and names the others in SharedPDBs.
func withFloor(w Workload, pdbs map[string]*PDB) Workload {
	w.Floor, w.SharedPDBs = nil, nil
	var own []*PDB
	for _, name := range w.PDBs {
		switch p := pdbs[name]; {
		case p == nil: // no history: the report does not track it
		case ownFloor(p, &w):
			own = append(own, p)
		default:
			w.SharedPDBs = append(w.SharedPDBs, name)
		}
	}
	if len(own) == 0 || len(w.T) == 0 {
		return w
	}
	times := slices.Clone(w.T)
	for _, p := range own {
		for i := range p.T {
			if (i == 0 || p.Desired[i] != p.Desired[i-1]) && p.T[i] > w.T[0] {
				times = append(times, p.T[i])
			}
		}
	}
	slices.Sort(times)
	times = slices.Compact(times)
	out := Workload{Namespace: w.Namespace, Name: w.Name, Kind: w.Kind, PDBs: w.PDBs, SharedPDBs: w.SharedPDBs,
		T: []float64{}, Ready: []int{}, Desired: []int{}, Floor: []int{}}
	k := 0
	next := make([]int, len(own)) // per budget, its first sample after t
	for _, t := range times {
		for k+1 < len(w.T) && w.T[k+1] <= t {
			k++
		}
		floor := -1
		for j, p := range own {
			for next[j] < len(p.T) && p.T[next[j]] <= t {
				next[j]++
			}
			if next[j] > 0 {
				floor = max(floor, p.Desired[next[j]-1])
			}
		}
		if n := len(out.T); n > 0 && out.Ready[n-1] == w.Ready[k] && out.Desired[n-1] == w.Desired[k] && out.Floor[n-1] == floor {
			continue
		}
		out.T = append(out.T, t)
		out.Ready = append(out.Ready, w.Ready[k])
		out.Desired = append(out.Desired, w.Desired[k])
		out.Floor = append(out.Floor, floor)
	}
	return out
}

// withBelowFloor adds to the workloads' availability the count of budgets
// below their floor: a row at each instant either changes, with what held
// when the instant was over.
func withBelowFloor(a Availability, pdbs []PDB) Availability {
	type change struct {
		t float64
		d int
	}
	var changes []change
	for pi := range pdbs {
		p := &pdbs[pi]
		was := false
		for i := range p.T {
			if i+1 < len(p.T) && p.T[i+1] == p.T[i] {
				continue // the instant's last sample is what held
			}
			if is := p.Below(i); is != was {
				d := 1
				if !is {
					d = -1
				}
				changes = append(changes, change{p.T[i], d})
				was = is
			}
		}
	}
	slices.SortStableFunc(changes, func(x, y change) int { return cmp.Compare(x.t, y.t) })
	times := slices.Clone(a.T)
	for _, c := range changes {
		times = append(times, c.t)
	}
	slices.Sort(times)
	times = slices.Compact(times)
	out := Availability{T: []float64{}, Zero: []int{}, BelowFloor: []int{}, BelowDesired: []int{}}
	k, c, below := -1, 0, 0
	for _, t := range times {
		for k+1 < len(a.T) && a.T[k+1] <= t {
			k++
		}
		for c < len(changes) && changes[c].t <= t {
			below += changes[c].d
			c++
		}
		zero, short := 0, 0
		if k >= 0 {
			zero, short = a.Zero[k], a.BelowDesired[k]
		}
		if n := len(out.T); n > 0 && out.Zero[n-1] == zero && out.BelowFloor[n-1] == below && out.BelowDesired[n-1] == short {
			continue
		}
		out.T = append(out.T, t)
		out.Zero = append(out.Zero, zero)
		out.BelowFloor = append(out.BelowFloor, below)
		out.BelowDesired = append(out.BelowDesired, short)
	}
	return out
}

// SelectPDBs keeps at most n of the budgets, those that suffered most:
// first those that went below their floor or lost pods below it (the
// longest below, then the most drops), then those whose controller failed
// safe, then the longest allowing no disruption. The result keeps the
// input's order.
func SelectPDBs(all []PDB, end float64, n int) []PDB {
	if len(all) <= n {
		return all
	}
	type scored struct {
		i, tier, drops int
		below, atFloor float64
	}
	scores := make([]scored, len(all))
	for i := range all {
		p := &all[i]
		s := scored{i: i, tier: 2, drops: len(p.Drops)}
		for k := range p.T {
			next := end
			if k+1 < len(p.T) {
				next = p.T[k+1]
			}
			if p.Below(k) {
				s.below += next - p.T[k]
			}
			if p.Allowed[k] <= 0 {
				s.atFloor += next - p.T[k]
			}
		}
		switch {
		case s.below > 0 || s.drops > 0:
			s.tier = 0
		case p.SyncError != "":
			s.tier = 1
		}
		scores[i] = s
	}
	slices.SortStableFunc(scores, func(x, y scored) int {
		return cmp.Or(cmp.Compare(x.tier, y.tier), cmp.Compare(y.below, x.below), cmp.Compare(y.drops, x.drops), cmp.Compare(y.atFloor, x.atFloor))
	})
	keep := make([]int, n)
	for j := range keep {
		keep[j] = scores[j].i
	}
	slices.Sort(keep)
	out := make([]PDB, n)
	for j, i := range keep {
		out[j] = all[i]
	}
	return out
}

// thinPDB marks the budget's first MaxDrops drops and keeps at most
// MaxPoints of its samples, the fewest healthy pods of each bucket, but
// never drops the first and the last, a sample where it crossed its floor
// (either way) or one where a marked drop took it below: the spans below
// the floor and each marked drop stay exactly where they were.
func thinPDB(p PDB, end float64) PDB {
	if len(p.Drops) > MaxDrops {
		p.DropsOmitted += len(p.Drops) - MaxDrops
		p.Drops = p.Drops[:MaxDrops:MaxDrops]
	}
	keep := make([]bool, len(p.T))
	marked := 0
	for i := range p.T {
		if i == 0 || i == len(p.T)-1 || p.Below(i) != p.Below(i-1) {
			keep[i] = true
		}
		if lost := p.Lost(i); lost > 0 && marked < len(p.Drops) {
			keep[i] = true
			marked += lost
		}
	}
	idx := ThinKeep(p.T, end, MaxPoints, keep, func(i, j int) bool { return p.Healthy[i] < p.Healthy[j] })
	p.T, p.Healthy, p.Desired, p.Allowed = pick(p.T, idx), pick(p.Healthy, idx), pick(p.Desired, idx), pick(p.Allowed, idx)
	return p
}
