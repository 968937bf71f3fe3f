package kube

import (
	"slices"
	"strings"
)

// podSet is a set of pods that hands them out in key (namespace/name) order,
// sorting again only after the set changed. Nodes, workloads and PDBs each
// keep one; the controllers read them in order far more often than pods come
// and go. A pod is its podState: the store holds one per live key, and every
// set forgets a pod when the store does (removePod).
//
// The members sit in a slice, in no particular order (but always the same
// one for the same history); a set past smallSet members also indexes them
// by pointer, below that a scan is cheaper than the index.
type podSet struct {
	items  []*podState
	index  map[*podState]int32 // position in items; nil while small
	sorted []*podState         // nil after a change
}

const smallSet = 64

func newPodSet() podSet { return podSet{} }

// at is the position of ps in items, or -1.
func (s *podSet) at(ps *podState) int {
	if s.index != nil {
		if i, ok := s.index[ps]; ok {
			return int(i)
		}
		return -1
	}
	return slices.Index(s.items, ps)
}

func (s *podSet) add(ps *podState) {
	if s.at(ps) >= 0 {
		return
	}
	s.items = append(s.items, ps)
	s.sorted = nil
	switch {
	case s.index != nil:
		s.index[ps] = int32(len(s.items) - 1)
	case len(s.items) > smallSet:
		s.index = make(map[*podState]int32, 2*len(s.items))
		for i, p := range s.items {
			s.index[p] = int32(i)
		}
	}
}

func (s *podSet) remove(ps *podState) {
	i := s.at(ps)
	if i < 0 {
		return
	}
	last := len(s.items) - 1
	moved := s.items[last]
	s.items[i] = moved
	s.items[last] = nil
	s.items = s.items[:last]
	s.sorted = nil
	if s.index != nil {
		delete(s.index, ps)
		if moved != ps {
			s.index[moved] = int32(i)
		}
	}
}

func (s *podSet) len() int { return len(s.items) }

// all returns the members in no particular order, for callers the order
// does not matter to. It is the set's own slice: a remove reorders it in
// place, so a caller that changes the set must finish walking it first (or
// walk list, whose slice a change leaves alone).
func (s *podSet) all() []*podState { return s.items }

// list returns the pods in key order. The slice is shared: callers must not
// modify it, and must copy it if they change the set while walking it.
func (s *podSet) list() []*podState {
	if s.sorted == nil {
		s.sorted = slices.Clone(s.items)
		if s.sorted == nil {
			s.sorted = []*podState{}
		}
		slices.SortFunc(s.sorted, func(a, b *podState) int { return strings.Compare(a.key, b.key) })
	}
	return s.sorted
}
