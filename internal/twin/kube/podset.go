package kube

import (
	"slices"
	"strings"
)

// podSet is a set of pods keyed by namespace/name that hands them out in key
// order, sorting again only after the set changed. Nodes, workloads and PDBs
// each keep one; the controllers read them in order far more often than pods
// come and go.
type podSet struct {
	m      map[string]*podState
	sorted []*podState // nil after a change
}

func newPodSet() podSet { return podSet{m: map[string]*podState{}} }

func (s *podSet) add(ps *podState) {
	if s.m[ps.key] != ps {
		s.m[ps.key] = ps
		s.sorted = nil
	}
}

func (s *podSet) remove(ps *podState) {
	if _, ok := s.m[ps.key]; ok {
		delete(s.m, ps.key)
		s.sorted = nil
	}
}

func (s *podSet) len() int { return len(s.m) }

// list returns the pods in key order. The slice is shared: callers must not
// modify it, and must copy it if they change the set while walking it.
func (s *podSet) list() []*podState {
	if s.sorted == nil {
		s.sorted = make([]*podState, 0, len(s.m))
		for _, ps := range s.m {
			s.sorted = append(s.sorted, ps)
		}
		slices.SortFunc(s.sorted, func(a, b *podState) int { return strings.Compare(a.key, b.key) })
	}
	return s.sorted
}
