// Package twintest wires the twins for tests as a rehearsal wires them —
// one virtual clock, the Kubernetes cluster, EC2 — and builds the
// workloads those tests run, in the upstream Go types. Nothing here sleeps:
// time moves only through the engine.
package twintest

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/ec2"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// T0 is a Wednesday, 2026-04-01 00:00 UTC: the newest al2023 x86_64 AMIs
// then are the seed's, AMI130 for Kubernetes 1.30 and AMI131 for 1.31.
var T0 = time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)

// The seed's AMIs (al2023 x86_64, in the catalog) and the kubelets they run.
const (
	AMI130     = "ami-0f676a166352f02ab" // al2023 x86_64 1.30 v20260220
	AMI131     = "ami-0c4dea04571b1b508" // al2023 x86_64 1.31 v20260320
	Kubelet130 = "v1.30.14-eks-f69f56f"
	Kubelet131 = "v1.31.14-eks-ecaa3a6"
	// AMI130Older is an older al2023 x86_64 1.30 release (v20250610,
	// release 1.30.12-20250610).
	AMI130Older = "ami-494fc372f10fe30ec"
	// AMI130ARM is al2023 arm64 1.30 v20260220: no amd64 instance boots it.
	AMI130ARM = "ami-24fd2cff8dae19a97"
)

// Region is the twins' region; Zones are its three zones.
const Region = "us-west-2"

// Zones are Region's zones the twins use.
var Zones = []string{"us-west-2a", "us-west-2b", "us-west-2c"}

// Twin is the engine, the cluster and EC2: what every node mechanism's
// twin is built on.
type Twin struct {
	Eng   *sim.Engine
	Kube  *kube.Cluster
	Cloud *ec2.Cloud
}

// New wires the engine at start with seed, the cluster and EC2 in
// Region's zones (Zones when none are given).
func New(start time.Time, seed uint64, zones ...string) Twin {
	if len(zones) == 0 {
		zones = Zones
	}
	eng := sim.New(start, seed)
	kc := kube.New(eng, kube.Options{Region: Region, Zones: zones})
	return Twin{Eng: eng, Kube: kc, Cloud: ec2.New(Region, zones, eng.Rand())}
}

// Settle is the rehearsal's bootstrap: pods bound and Ready as if the
// cluster had been running, then availability tracking starts.
func (tw Twin) Settle() {
	tw.Eng.Run(tw.Eng.Now(), nil)
	for _, n := range tw.Kube.Nodes() {
		tw.Kube.StartPodsNow(n.Name, n.CreationTimestamp.Time)
	}
	tw.Eng.Run(tw.Eng.Now(), nil)
	tw.Kube.StartTracking()
}

// Apply sends objects to the cluster, failing the test on a refusal.
func (tw Twin) Apply(t testing.TB, objs ...metav1.Object) {
	t.Helper()
	for _, o := range objs {
		if err := tw.Kube.Apply(o); err != nil {
			t.Fatalf("apply %T %s: %v", o, o.GetName(), err)
		}
	}
}

// PodsOf lists the live (not terminating) pods whose name starts with
// prefix.
func (tw Twin) PodsOf(prefix string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range tw.Kube.Pods() {
		if strings.HasPrefix(p.Name, prefix) && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// Log is a twin's event log: each line as it was emitted, and the
// watchers that see each one at that instant, with the twins in the state
// the event left them in.
type Log[L any] struct {
	Lines    []L
	watchers []func(L)
}

// Add records l and hands it to the watchers.
func (g *Log[L]) Add(l L) {
	g.Lines = append(g.Lines, l)
	for _, w := range g.watchers {
		w(l)
	}
}

// Watch calls fn on every later line, when it is added.
func (g *Log[L]) Watch(fn func(L)) { g.watchers = append(g.watchers, fn) }

// Select returns the lines keep holds for, in order.
func (g *Log[L]) Select(keep func(L) bool) []L {
	var out []L
	for _, l := range g.Lines {
		if keep(l) {
			out = append(out, l)
		}
	}
	return out
}
