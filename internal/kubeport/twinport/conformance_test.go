package twinport

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/kubeport/conformance"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

var t0 = time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)

// twinHarness gives each case a fresh twin cluster on its own engine.
type twinHarness struct{}

// knownDifferences are the conformance cases the twin is known to get
// wrong, each with why (see docs/kubeport.md): none today. The suite would
// report one as skipped while it fails and fail once it passes.
var knownDifferences = map[string]string{}

func (twinHarness) KnownDifferences() map[string]string { return knownDifferences }

func (twinHarness) NewEnv(t *testing.T) conformance.Env {
	c := kube.New(sim.New(t0, 1), kube.Options{})
	const ns = "conformance"
	if err := c.Apply(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	return &twinEnv{Port: New(c, Options{}), ns: ns}
}

// twinEnv builds fixtures directly on the cluster, as manifests and
// kubelets do in the twin.
type twinEnv struct {
	*Port
	ns string
}

func (e *twinEnv) Namespace() string { return e.ns }

func (e *twinEnv) AddNode(_ context.Context, n *corev1.Node) error { return e.c.AddNode(n, true) }

func (e *twinEnv) Create(_ context.Context, obj metav1.Object) error { return e.c.Apply(obj) }

func (e *twinEnv) SetPodReady(_ context.Context, namespace, name string, ready bool) error {
	return e.c.SetPodReady(namespace, name, ready)
}

// TestConformance runs the port's conformance suite on the twin.
func TestConformance(t *testing.T) {
	conformance.Run(t, twinHarness{})
}
