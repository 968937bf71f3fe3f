package timeline

import (
	"cmp"
	"slices"
)

// Thin picks at most maxPoints of the samples at times t (ascending) of a
// series that ends at end: the first sample, then one per bucket of
// (end − t[0]) / (maxPoints − 1) seconds — the last of the bucket, or the
// one better prefers (better(i, j): sample i rather than j). A series of
// maxPoints samples or fewer is kept whole.
func Thin(t []float64, end float64, maxPoints int, better func(i, j int) bool) []int {
	all := make([]int, len(t))
	for i := range t {
		all[i] = i
	}
	if len(t) <= maxPoints || maxPoints < 2 {
		return all
	}
	start := t[0]
	width := (end - start) / float64(maxPoints-1)
	if width <= 0 {
		return all
	}
	out := []int{0}
	bucket := -1
	for i := 1; i < len(t); i++ {
		b := min(int((t[i]-start)/width), maxPoints-2)
		switch {
		case b != bucket:
			out = append(out, i)
			bucket = b
		case better == nil || better(i, out[len(out)-1]):
			out[len(out)-1] = i
		}
	}
	return out
}

// ThinKeep is Thin that never drops a sample i with keep[i]: a bucket
// holding one keeps its kept samples and no other. It returns at most
// maxPoints samples and the kept ones.
func ThinKeep(t []float64, end float64, maxPoints int, keep []bool, better func(i, j int) bool) []int {
	if len(t) <= maxPoints || maxPoints < 2 || end <= t[0] {
		return Thin(t, end, maxPoints, better)
	}
	width := (end - t[0]) / float64(maxPoints-1)
	bucket := func(i int) int { return min(int((t[i]-t[0])/width), maxPoints-2) }
	held := map[int]bool{} // the buckets holding a kept sample
	for i := 1; i < len(t); i++ {
		if keep[i] {
			held[bucket(i)] = true
		}
	}
	out := []int{0}
	rep, repBucket := -1, -1
	for i := 1; i < len(t); i++ {
		if b := bucket(i); b != repBucket {
			if rep >= 0 {
				out = append(out, rep)
			}
			rep, repBucket = -1, b
		}
		switch {
		case keep[i]:
			out = append(out, i)
		case held[repBucket]:
		case rep < 0 || better == nil || better(i, rep):
			rep = i
		}
	}
	if rep >= 0 {
		out = append(out, rep)
	}
	return out
}

func pick[T any](s []T, idx []int) []T {
	if s == nil {
		return nil
	}
	out := make([]T, len(idx))
	for j, i := range idx {
		out[j] = s[i]
	}
	return out
}

// thinWorkload keeps, in each bucket, the sample with the fewest Ready
// pods: a dip shorter than a bucket still shows (for a bucket's length at
// most).
func thinWorkload(w Workload, end float64) Workload {
	idx := Thin(w.T, end, MaxPoints, func(i, j int) bool { return w.Ready[i] < w.Ready[j] })
	w.T, w.Ready, w.Desired, w.Floor = pick(w.T, idx), pick(w.Ready, idx), pick(w.Desired, idx), pick(w.Floor, idx)
	return w
}

// thinAvailability keeps, in each bucket, the sample with the most
// workloads short of desired.
func thinAvailability(a Availability, end float64) Availability {
	idx := Thin(a.T, end, MaxPoints, func(i, j int) bool { return a.BelowDesired[i] > a.BelowDesired[j] })
	return Availability{T: pick(a.T, idx), Zero: pick(a.Zero, idx), BelowFloor: pick(a.BelowFloor, idx), BelowDesired: pick(a.BelowDesired, idx)}
}

// thinPool keeps, in each bucket, the sample with the most nodes
// disrupting.
func thinPool(p NodePool, end float64) NodePool {
	idx := Thin(p.T, end, MaxPoints, func(i, j int) bool { return p.Disrupting[i] > p.Disrupting[j] })
	p.T, p.Disrupting, p.Allowed = pick(p.T, idx), pick(p.Disrupting, idx), pick(p.Allowed, idx)
	return p
}

// Select keeps at most n of the workloads (sorted), those that suffered
// most: the longest with no Ready pod, then the longest below their PDB
// floor, then the lowest share of desired Ready at their worst. The result
// keeps the input's order.
func Select(all []*Workload, end float64, n int) []*Workload {
	if len(all) <= n {
		return all
	}
	type scored struct {
		i                int
		zero, belowFloor float64
		worst            float64
	}
	scores := make([]scored, len(all))
	for i, w := range all {
		s := scored{i: i, worst: 1}
		for k := range w.T {
			next := end
			if k+1 < len(w.T) {
				next = w.T[k+1]
			}
			d := next - w.T[k]
			if w.Desired[k] > 0 {
				if w.Ready[k] == 0 {
					s.zero += d
				}
				s.worst = min(s.worst, float64(w.Ready[k])/float64(w.Desired[k]))
			}
			if w.Floor != nil && w.Ready[k] < w.Floor[k] {
				s.belowFloor += d
			}
		}
		scores[i] = s
	}
	slices.SortStableFunc(scores, func(x, y scored) int {
		return cmp.Or(cmp.Compare(y.zero, x.zero), cmp.Compare(y.belowFloor, x.belowFloor), cmp.Compare(x.worst, y.worst))
	})
	keep := make([]int, n)
	for j := range keep {
		keep[j] = scores[j].i
	}
	slices.Sort(keep)
	out := make([]*Workload, n)
	for j, i := range keep {
		out[j] = all[i]
	}
	return out
}
