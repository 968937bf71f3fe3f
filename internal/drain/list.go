package drain

import (
	"unsafe"

	kdrain "k8s.io/kubectl/pkg/drain"
)

// podDeleteList mirrors k8s.io/kubectl/pkg/drain.PodDeleteList, whose only
// field (items []PodDelete) is unexported and which has no exported
// constructor: upstream fills it only inside GetPodsForDeletion, which needs
// a clientset. Converting between pointers to two struct types with the same
// single field is a valid unsafe.Pointer conversion (pattern (1) in the
// unsafe package documentation). init checks the layout still matches, and
// TestPodDeleteListLayout checks Pods()/Warnings() read what we wrote, so a
// kubectl bump that changes the struct fails loudly instead of corrupting
// memory.
type podDeleteList struct {
	items []kdrain.PodDelete
}

func init() {
	if unsafe.Sizeof(kdrain.PodDeleteList{}) != unsafe.Sizeof(podDeleteList{}) ||
		unsafe.Alignof(kdrain.PodDeleteList{}) != unsafe.Alignof(podDeleteList{}) {
		panic("internal/drain: k8s.io/kubectl/pkg/drain.PodDeleteList layout changed; update podDeleteList")
	}
}

func newPodDeleteList(items []kdrain.PodDelete) *kdrain.PodDeleteList {
	return (*kdrain.PodDeleteList)(unsafe.Pointer(&podDeleteList{items: items}))
}

// Items returns every pod of the list with its filter status (deleted,
// skipped, warned or refused), in list order. Upstream keeps them private;
// the twin needs them to report why a pod was not evicted. The slice is the
// list's own: do not modify it.
func Items(l *kdrain.PodDeleteList) []kdrain.PodDelete {
	if l == nil {
		return nil
	}
	return (*podDeleteList)(unsafe.Pointer(l)).items
}
