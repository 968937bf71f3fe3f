package karpenter

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// TestSimBaseVerify: the check VerifyDisruption runs between a drift
// pass's commands finds a fit tree that missed a node's change and a static
// list that missed a node, and passes the base they came from.
func TestSimBaseVerify(t *testing.T) {
	newBase := func() (*Karpenter, *simBase) {
		k := &Karpenter{}
		b := &simBase{static: newStaticFit()}
		for _, name := range []string{"a", "b", "c"} {
			b.capacity = append(b.capacity, simNode{name: name, labels: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}},
				free: kube.Resources{MilliCPU: 1000, Memory: 1 << 30}, initialized: true, fit: &fitRow{}})
		}
		b.fit = k.newFirstFit(b.capacity, b.static)
		b.fit.tree(&corev1.Pod{}, 0, b.capacity)
		return k, b
	}
	if _, b := newBase(); b.verify() != nil {
		t.Fatalf("verify() = %v on a fresh base, want nil", b.verify())
	}
	_, b := newBase()
	b.capacity[1].free.MilliCPU = 10 // the tree is not told (update)
	if b.verify() == nil {
		t.Error("verify() = nil after a node's room changed behind the fit tree")
	}
	_, b = newBase()
	b.capacity[2].fit.v[0] = 2 // the node no longer admits the signature
	b.fit = nil
	if b.verify() == nil {
		t.Error("verify() = nil with a static list that holds a node it should not")
	}
}
