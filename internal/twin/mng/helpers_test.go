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
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/ec2"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/mng"
	"github.com/ladder-eks/ladder/internal/twin/worker"
)

// t0 is 2026-04-01: the newest al2023 x86_64 AMIs then are the seed's,
// ami130 for Kubernetes 1.30 and ami131 for 1.31.
var t0 = time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)

const (
	ami130     = "ami-0f676a166352f02ab" // al2023 x86_64 1.30 v20260220
	ami131     = "ami-0c4dea04571b1b508" // al2023 x86_64 1.31 v20260320
	kubelet130 = "v1.30.14-eks-f69f56f"
	kubelet131 = "v1.31.14-eks-ecaa3a6"
	release131 = "1.31.14-20260320"
	// ami130Older is al2023 x86_64 1.30 v20250610 (release 1.30.12-20250610).
	ami130Older = "ami-494fc372f10fe30ec"
)

var zones = []string{"us-west-2a", "us-west-2b", "us-west-2c"}

// The worker pool's default latencies: a launched node is Ready after
// launch + register + ready = 42 s and gone 30 s after termination.
const (
	nodeReadyAfter = 42 * time.Second
	terminateTakes = 30 * time.Second
)

type twin struct {
	t    *testing.T
	eng  *sim.Engine
	kube *kube.Cluster
	mng  *mng.Service
	// cp is the control plane's minor.
	cp       kubeversion.Minor
	log      []logLine
	watchers []func(logLine)
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
	eng := sim.New(t0, cfg.seed)
	tw := &twin{t: t, eng: eng, cp: kubeversion.MustParse(cfg.cp)}
	tw.kube = kube.New(eng, kube.Options{Region: "us-west-2", Zones: zones})
	cloud := ec2.New("us-west-2", zones, eng.Rand())
	workers := worker.New(eng, tw.kube, cloud, worker.Timings{})
	tw.mng = mng.New(eng, tw.kube, workers, mng.Options{
		InstanceTypes:       catalog.InstanceTypes(),
		Zones:               zones,
		ControlPlaneVersion: func() kubeversion.Minor { return tw.cp },
	})
	tw.mng.OnEvent(func(e mng.Event) {
		l := logLine{At: eng.Now(), Event: e}
		tw.log = append(tw.log, l)
		for _, w := range tw.watchers {
			w(l)
		}
	})
	return tw
}

// watch calls fn on every later event, when it is emitted.
func (tw *twin) watch(fn func(logLine)) { tw.watchers = append(tw.watchers, fn) }

// adopt registers a node group running since a day before the start.
func (tw *twin) adopt(spec mng.Spec) {
	tw.t.Helper()
	if err := tw.mng.Adopt(spec, 24*time.Hour); err != nil {
		tw.t.Fatalf("adopt %s: %v", spec.Name, err)
	}
}

// apply sends workloads to the cluster.
func (tw *twin) apply(objs ...metav1.Object) {
	tw.t.Helper()
	for _, o := range objs {
		if err := tw.kube.Apply(o); err != nil {
			tw.t.Fatalf("apply %T %s: %v", o, o.GetName(), err)
		}
	}
}

// settle is the rehearsal's bootstrap: pods bound and Ready as if the
// cluster had been running, then availability tracking starts.
func (tw *twin) settle() {
	tw.eng.Run(tw.eng.Now(), nil)
	for _, n := range tw.kube.Nodes() {
		tw.kube.StartPodsNow(n.Name, n.CreationTimestamp.Time)
	}
	tw.eng.Run(tw.eng.Now(), nil)
	tw.kube.StartTracking()
}

// update calls UpdateNodegroupVersion and runs virtual time until it
// finishes (or limit passes, which fails the test).
func (tw *twin) update(name string, req mng.UpdateRequest, limit time.Duration) mng.Update {
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
	return tw.eng.Run(tw.eng.Now().Add(limit), cond) == sim.Done
}

// events returns the log lines with the given reason.
func (tw *twin) events(reason string) []logLine {
	var out []logLine
	for _, l := range tw.log {
		if l.Reason == reason {
			out = append(out, l)
		}
	}
	return out
}

// first returns the first log line with the reason for the node ("" for
// any node).
func (tw *twin) first(reason, node string) (logLine, bool) {
	for _, l := range tw.log {
		if l.Reason == reason && (node == "" || l.Node == node) {
			return l, true
		}
	}
	return logLine{}, false
}

// groupNodes lists the cluster's nodes labelled with a node group.
func (tw *twin) groupNodes(group string) []*corev1.Node {
	var out []*corev1.Node
	for _, n := range tw.kube.Nodes() {
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
	for _, p := range tw.kube.PodsOnNode(node) {
		if ref := metav1.GetControllerOf(p); ref == nil || ref.Kind != "DaemonSet" {
			n++
		}
	}
	return n
}

func (tw *twin) dumpLog() string {
	var b strings.Builder
	for _, l := range tw.log {
		fmt.Fprintf(&b, "  +%-9s %-24s %-14s %s %s\n", l.At.Sub(t0), l.Reason, l.Nodegroup, l.Node, l.Message)
	}
	return b.String()
}

// ---- node groups ------------------------------------------------------------

type specOption func(*mng.Spec)

// group is a managed node group of m5.large nodes over the three zones.
func group(name string, desired int, opts ...specOption) mng.Spec {
	s := mng.Spec{Name: name, InstanceTypes: []string{"m5.large"}, Desired: desired, Min: 1, Max: desired}
	for _, o := range opts {
		o(&s)
	}
	return s
}

func atVersion(v string) specOption     { return func(s *mng.Spec) { s.Version = v } }
func atRelease(r string) specOption     { return func(s *mng.Spec) { s.ReleaseVersion = r } }
func inZones(z ...string) specOption    { return func(s *mng.Spec) { s.Zones = z } }
func withMax(n int) specOption          { return func(s *mng.Spec) { s.Max = n } }
func withStrategy(st string) specOption { return func(s *mng.Spec) { s.UpdateStrategy = st } }
func withMaxUnavailable(n int) specOption {
	return func(s *mng.Spec) { s.UpdateConfig.MaxUnavailable = &n }
}
func withMaxUnavailablePct(p int) specOption {
	return func(s *mng.Spec) { s.UpdateConfig.MaxUnavailablePercentage = &p }
}
func withLaunchTemplate(id, version, image string) specOption {
	return func(s *mng.Spec) { s.LaunchTemplate = &mng.LaunchTemplate{ID: id, Version: version, ImageID: image} }
}
func withLabels(kv ...string) specOption {
	return func(s *mng.Spec) {
		s.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			s.Labels[kv[i]] = kv[i+1]
		}
	}
}

// ---- workloads --------------------------------------------------------------

type podOption func(*corev1.PodSpec)

// deployment is a Deployment in namespace default whose pods request cpu.
func deployment(name string, replicas int32, cpu string, opts ...podOption) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec(cpu)},
		},
	}
	for _, o := range opts {
		o(&d.Spec.Template.Spec)
	}
	return d
}

// daemonSet is a DaemonSet in kube-system, like kube-proxy or aws-node.
func daemonSet(name string) *appsv1.DaemonSet {
	labels := map[string]string{"app": name}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceSystem},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec("50m")},
		},
	}
}

func podSpec(cpu string) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", Image: "public.ecr.aws/docker/library/busybox:1",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(cpu),
			corev1.ResourceMemory: resource.MustParse("128Mi"),
		}},
	}}}
}

// pdbMinAvailable is a PodDisruptionBudget in namespace default selecting
// app=app.
func pdbMinAvailable(name, app string, minAvailable int) *policyv1.PodDisruptionBudget {
	v := intstr.FromInt32(int32(minAvailable))
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: &v,
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		},
	}
}

// podsOf lists the live (not terminating) pods whose name starts with prefix.
func (tw *twin) podsOf(prefix string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range tw.kube.Pods() {
		if strings.HasPrefix(p.Name, prefix) && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}
