package mng_test

// Shared fixtures for the managed-node-group twin's tests: the wiring a
// rehearsal builds (sim.New, kube.New, ec2.New, worker.New, mng.New), node
// group and workload builders, and helpers that drive virtual time and read
// the twin's events. Nothing here sleeps: time moves only through the
// engine.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/mng"
	"github.com/ladder-eks/ladder/internal/twin/twintest"
	"github.com/ladder-eks/ladder/internal/twin/worker"
)

// t0 is 2026-04-01: the newest al2023 x86_64 AMIs then are the seed's,
// ami130 for Kubernetes 1.30 and ami131 for 1.31.
var t0, zones = twintest.T0, twintest.Zones

// ami130Older is al2023 x86_64 1.30 v20250610 (release 1.30.12-20250610);
// release131 is ami131's release version.
const ami130, ami131, ami130Older, release131 = twintest.AMI130, twintest.AMI131, twintest.AMI130Older, "1.31.14-20260320"

const kubelet130, kubelet131 = twintest.Kubelet130, twintest.Kubelet131

// The worker pool's default latencies: a launched node is Ready after
// launch + register + ready = 42 s and gone 30 s after termination.
const (
	nodeReadyAfter = 42 * time.Second
	terminateTakes = 30 * time.Second
)

type twin struct {
	t *testing.T
	twintest.Twin
	mng *mng.Service
	// cp is the control plane's minor.
	cp  kubeversion.Minor
	log twintest.Log[logLine]
}

type logLine struct {
	At time.Time
	mng.Event
}

type twinConfig struct {
	seed uint64
	cp   string
}

type twinOption func(*twinConfig)

func withSeed(s uint64) twinOption         { return func(c *twinConfig) { c.seed = s } }
func withControlPlane(v string) twinOption { return func(c *twinConfig) { c.cp = v } }

// newTwin wires a cluster in us-west-2 with three zones and a 1.31 control
// plane (the workshop seed after its control-plane upgrade).
func newTwin(t *testing.T, opts ...twinOption) *twin {
	t.Helper()
	cfg := twinConfig{seed: 1, cp: "1.31"}
	for _, o := range opts {
		o(&cfg)
	}
	tw := &twin{t: t, Twin: twintest.New(t0, cfg.seed), cp: kubeversion.MustParse(cfg.cp)}
	eng := tw.Eng
	workers := worker.New(eng, tw.Kube, tw.Cloud, worker.Timings{})
	tw.mng = mng.New(eng, tw.Kube, workers, mng.Options{
		InstanceTypes:       catalog.InstanceTypes(),
		Zones:               zones,
		ControlPlaneVersion: func() kubeversion.Minor { return tw.cp },
	})
	tw.mng.OnEvent(func(e mng.Event) {
		tw.log.Add(logLine{At: eng.Now(), Event: e})
	})
	return tw
}

// watch calls fn on every later event, when it is emitted.
func (tw *twin) watch(fn func(logLine)) { tw.log.Watch(fn) }

// adopt registers a node group running since a day before the start.
func (tw *twin) adopt(spec nodegroup.Spec) {
	tw.t.Helper()
	if err := tw.mng.Adopt(spec, 24*time.Hour); err != nil {
		tw.t.Fatalf("adopt %s: %v", spec.Name, err)
	}
}

// apply sends workloads to the cluster.
func (tw *twin) apply(objs ...metav1.Object) {
	tw.t.Helper()
	tw.Apply(tw.t, objs...)
}

// update calls UpdateNodegroupVersion and runs virtual time until it
// finishes (or limit passes, which fails the test).
func (tw *twin) update(name string, req nodegroup.UpdateRequest, limit time.Duration) mng.Update {
	tw.t.Helper()
	var res *mng.Update
	if err := tw.mng.UpdateVersion(name, req, func(u mng.Update) { res = &u }); err != nil {
		tw.t.Fatalf("UpdateVersion %s: %v", name, err)
	}
	if !tw.runUntil(limit, func() bool { return res != nil }) {
		tw.t.Fatalf("update of %s did not finish within %s\n%s", name, limit, tw.dumpLog())
	}
	return *res
}

// runUntil advances virtual time until cond holds (checked after every
// event) or limit has passed; it reports whether cond held.
func (tw *twin) runUntil(limit time.Duration, cond func() bool) bool {
	return tw.Eng.Run(tw.Eng.Now().Add(limit), cond) == sim.Done
}

// events returns the log lines with the given reason.
func (tw *twin) events(reason string) []logLine {
	return tw.log.Select(func(l logLine) bool { return l.Reason == reason })
}

// first returns the first log line with the reason for the node ("" for
// any node).
func (tw *twin) first(reason, node string) (logLine, bool) {
	for _, l := range tw.log.Lines {
		if l.Reason == reason && (node == "" || l.Node == node) {
			return l, true
		}
	}
	return logLine{}, false
}

// groupNodes lists the cluster's nodes labelled with a node group.
func (tw *twin) groupNodes(group string) []*corev1.Node {
	var out []*corev1.Node
	for _, n := range tw.Kube.Nodes() {
		if n.Labels[mng.LabelNodegroup] == group {
			out = append(out, n)
		}
	}
	return out
}

func (tw *twin) status(group string) mng.Status {
	tw.t.Helper()
	st, ok := tw.mng.Status(group)
	if !ok {
		tw.t.Fatalf("no node group %s", group)
	}
	return st
}

// drainablePodsOn counts the pods on a node that are not DaemonSet pods.
func (tw *twin) drainablePodsOn(node string) int {
	n := 0
	for _, p := range tw.Kube.PodsOnNode(node) {
		if ref := metav1.GetControllerOf(p); ref == nil || ref.Kind != "DaemonSet" {
			n++
		}
	}
	return n
}

func (tw *twin) dumpLog() string {
	var b strings.Builder
	for _, l := range tw.log.Lines {
		fmt.Fprintf(&b, "  +%-9s %-24s %-14s %s %s\n", l.At.Sub(t0), l.Reason, l.Nodegroup, l.Node, l.Message)
	}
	return b.String()
}

// ---- node groups ------------------------------------------------------------

type specOption func(*nodegroup.Spec)

// group is a managed node group of m5.large nodes over the three zones.
func group(name string, desired int, opts ...specOption) nodegroup.Spec {
	s := nodegroup.Spec{Name: name, InstanceTypes: []string{"m5.large"}, Desired: desired, Min: 1, Max: desired}
	for _, o := range opts {
		o(&s)
	}
	return s
}

func atVersion(v string) specOption     { return func(s *nodegroup.Spec) { s.Version = v } }
func atRelease(r string) specOption     { return func(s *nodegroup.Spec) { s.ReleaseVersion = r } }
func inZones(z ...string) specOption    { return func(s *nodegroup.Spec) { s.Zones = z } }
func withMax(n int) specOption          { return func(s *nodegroup.Spec) { s.Max = n } }
func withStrategy(st string) specOption { return func(s *nodegroup.Spec) { s.UpdateStrategy = st } }
func withMaxUnavailable(n int) specOption {
	return func(s *nodegroup.Spec) { s.UpdateConfig.MaxUnavailable = &n }
}
func withMaxUnavailablePct(p int) specOption {
	return func(s *nodegroup.Spec) { s.UpdateConfig.MaxUnavailablePercentage = &p }
}
func withLaunchTemplate(id, version, image string) specOption {
	return func(s *nodegroup.Spec) {
		s.LaunchTemplate = &nodegroup.LaunchTemplate{ID: id, Version: version, ImageID: image}
	}
}
func withLabels(kv ...string) specOption {
	return func(s *nodegroup.Spec) {
		s.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			s.Labels[kv[i]] = kv[i+1]
		}
	}
}

// ---- workloads --------------------------------------------------------------

var deployment = twintest.Deployment

// daemonSet is a DaemonSet in kube-system, like kube-proxy or aws-node.
func daemonSet(name string) *appsv1.DaemonSet {
	labels := map[string]string{"app": name}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceSystem},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: twintest.PodSpec("50m")},
		},
	}
}
