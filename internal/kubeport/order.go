package kubeport

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SortObjects sorts API objects by namespace, then name: the order every
// List method of the port promises. (An API server lists in storage-key
// order, "ns/name" as one string, which differs when a namespace is a
// prefix of another: "a-b/x" sorts before "a/y". Both implementations sort
// with this function so they agree.)
func SortObjects[T any, PT interface {
	*T
	metav1.Object
}](items []T) {
	sort.SliceStable(items, func(i, j int) bool {
		a, b := PT(&items[i]), PT(&items[j])
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		return a.GetName() < b.GetName()
	})
}
