package asg_test

// Shared fixtures: the wiring a rehearsal builds (sim.New, kube.New,
// ec2.New, worker.New, asg.New, as in internal/twin/karpenter's tests),
// group specs, workloads, and helpers that drive virtual time and read the
// activity log. Nothing here sleeps: time moves only through the engine.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/rules/instancerefresh"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/asg"
	"github.com/ladder-eks/ladder/internal/twin/twintest"
	"github.com/ladder-eks/ladder/internal/twin/worker"
)

var t0, zones = twintest.T0, twintest.Zones

// AMIs. ami130 and ami131 are the catalog's real al2023 x86_64 rows (no
// m5 boots amiARM130); the workshop's 1.31 AMI (workshop 6.4, "#
// ami-00e0cfd6e5895fe3a") is not in the catalog and is declared as an extra
// AMI, with the kubelet version the workshop's nodes report.
const ami130, ami131, amiARM130, amiWorkshop131 = twintest.AMI130, twintest.AMI131, twintest.AMI130ARM, "ami-00e0cfd6e5895fe3a"

const kubelet130, kubelet131, kubeletWorkshop131 = twintest.Kubelet130, twintest.Kubelet131, "v1.31.14-eks-bbe087e"

var workshopAMI = catalog.AMI{
	ID: amiWorkshop131, Name: "amazon-eks-node-al2023-x86_64-standard-1.31-v20251001",
	Family: catalog.FamilyAL2023, Arch: catalog.ArchX8664, KubernetesMinor: "1.31",
	KubeletVersion: kubeletWorkshop131,
}

// launchLatency is the worker pool's EC2 launch time (worker.DefaultTimings):
// an instance is InService this long after "Launching a new EC2 instance".
var launchLatency = worker.DefaultTimings.Launch

// twin is one rehearsal's worth of twins on a virtual clock.
type twin struct {
	t *testing.T
	twintest.Twin
	pool *worker.Pool
	asg  *asg.ASG
	log  twintest.Log[line]
}

// line is one event and when it was emitted.
type line struct {
	At time.Time
	asg.Event
}

func newTwin(t *testing.T, seed uint64) *twin {
	t.Helper()
	tw := &twin{t: t, Twin: twintest.New(t0, seed)}
	eng := tw.Eng
	tw.pool = worker.New(eng, tw.Kube, tw.Cloud, worker.Timings{})
	tw.asg = asg.New(eng, tw.Kube, tw.pool, asg.Options{
		InstanceTypes: catalog.InstanceTypes(),
		ExtraAMIs:     []catalog.AMI{workshopAMI},
		Zones:         zones,
	})
	tw.asg.OnEvent(func(e asg.Event) {
		tw.log.Add(line{At: eng.Now(), Event: e})
	})
	return tw
}

type specOption func(*asg.Spec)

// groupSpec is self-managed group name: m5.large in the cluster's zones on
// launch template <name>:1 with the 1.30 AMI, max twice desired.
func groupSpec(name string, desired int, opts ...specOption) asg.Spec {
	s := asg.Spec{
		Name: name, InstanceType: "m5.large", Desired: desired, Min: 0, Max: 2 * desired,
		LaunchTemplate: asg.LaunchTemplate{Name: name, Version: "1", ImageID: ami130},
	}
	for _, o := range opts {
		o(&s)
	}
	return s
}

func withHook(timeout time.Duration, result string) specOption {
	return func(s *asg.Spec) {
		s.TerminationHook = true
		s.Hook = asg.LifecycleHook{HeartbeatTimeout: timeout, DefaultResult: result}
	}
}

func withZones(z ...string) specOption { return func(s *asg.Spec) { s.Zones = z } }

// create creates a group whose instances have run for a day.
func (tw *twin) create(spec asg.Spec) {
	tw.t.Helper()
	if err := tw.asg.Create(spec, 24*time.Hour); err != nil {
		tw.t.Fatalf("create %s: %v", spec.Name, err)
	}
}

// upgrade points the group's launch template at ami (a new version).
func (tw *twin) upgrade(name, ami string) {
	tw.t.Helper()
	if err := tw.asg.SetLaunchTemplate(name, asg.LaunchTemplate{ImageID: ami}); err != nil {
		tw.t.Fatalf("set launch template: %v", err)
	}
}

// refresh starts an instance refresh; the result is filled in when it ends.
func (tw *twin) refresh(name string, p instancerefresh.Preferences) *asg.InstanceRefresh {
	tw.t.Helper()
	res := &asg.InstanceRefresh{}
	if err := tw.asg.StartInstanceRefresh(name, p, func(r asg.InstanceRefresh) { *res = r }); err != nil {
		tw.t.Fatalf("start instance refresh: %v", err)
	}
	return res
}

// runUntilDone runs until the refresh has ended and the group is idle, or
// fails the test after limit of virtual time.
func (tw *twin) runUntilDone(res *asg.InstanceRefresh, limit time.Duration) {
	tw.t.Helper()
	if tw.Eng.Run(tw.Eng.Now().Add(limit), func() bool { return res.Status != "" && !tw.asg.Busy() }) != sim.Done {
		tw.t.Fatalf("refresh not done after %s (status %q)\n%s", limit, res.Status, tw.dump())
	}
}

func (tw *twin) apply(objs ...metav1.Object) {
	tw.t.Helper()
	tw.Apply(tw.t, objs...)
}

func (tw *twin) status(name string) asg.GroupStatus {
	tw.t.Helper()
	s, err := tw.asg.Status(name)
	if err != nil {
		tw.t.Fatal(err)
	}
	return s
}

func (tw *twin) watch(fn func(line)) { tw.log.Watch(fn) }

// events returns the lines with a code.
func (tw *twin) events(code string) []line {
	return tw.log.Select(func(l line) bool { return l.Code == code })
}

// since is the virtual time from t0.
func since(t time.Time) time.Duration { return t.Sub(t0) }

func (tw *twin) dump() string {
	var b strings.Builder
	for _, l := range tw.log.Lines {
		fmt.Fprintf(&b, "  +%-9s %-7s %-26s %s\n", since(l.At), l.Type, l.Code, l.Message)
	}
	return b.String()
}

// ---- workloads ------------------------------------------------------------

var deployment = twintest.Deployment

func inZone(zone string) twintest.PodOption {
	return func(p *corev1.PodTemplateSpec) {
		p.Spec.NodeSelector = map[string]string{corev1.LabelTopologyZone: zone}
	}
}

// pdb selects app=app; exactly one of minAvailable and maxUnavailable is
// non-negative.
func pdb(app string, minAvailable, maxUnavailable int) *policyv1.PodDisruptionBudget {
	if minAvailable >= 0 {
		return twintest.PDB(app, app, twintest.Int(minAvailable), nil)
	}
	return twintest.PDB(app, app, nil, twintest.Int(maxUnavailable))
}

func ptr[T any](v T) *T { return &v }

func seconds(n int) *time.Duration { d := time.Duration(n) * time.Second; return &d }
