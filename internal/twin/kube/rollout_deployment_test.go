package kube

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/ladder-eks/ladder/internal/sim"
)

// watch runs the engine for d, calling check after every event: an
// invariant checked this way holds at every instant of virtual time.
func watch(eng *sim.Engine, d time.Duration, check func()) {
	eng.Run(eng.Now().Add(d), func() bool { check(); return false })
}

// census counts a namespace's pods by container image: live (not
// terminating), ready (live and Ready) and stored (terminating included).
type census struct{ live, ready, stored map[string]int }

func (s census) total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func take(c *Cluster, ns string) census {
	s := census{live: map[string]int{}, ready: map[string]int{}, stored: map[string]int{}}
	for _, p := range c.Pods() {
		if p.Namespace != ns {
			continue
		}
		img := p.Spec.Containers[0].Image
		s.stored[img]++
		if p.DeletionTimestamp == nil {
			s.live[img]++
			if podutils.IsPodReady(p) {
				s.ready[img]++
			}
		}
	}
	return s
}

// advance moves virtual time on by d, running what is due (run stops early
// when nothing is scheduled).
func advance(eng *sim.Engine, d time.Duration) { eng.RunUntil(eng.Now().Add(d)) }

func intOrStr(s string) *intstr.IntOrString {
	v := intstr.Parse(s)
	return &v
}

func rolling(d *appsv1.Deployment, maxSurge, maxUnavailable string) *appsv1.Deployment {
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{}}
	if maxSurge != "" {
		d.Spec.Strategy.RollingUpdate.MaxSurge = intOrStr(maxSurge)
	}
	if maxUnavailable != "" {
		d.Spec.Strategy.RollingUpdate.MaxUnavailable = intOrStr(maxUnavailable)
	}
	return d
}

func withImage(d *appsv1.Deployment, image string) *appsv1.Deployment {
	d = d.DeepCopy()
	d.Spec.Template.Spec.Containers[0].Image = image
	return d
}

// bigCluster has room for every pod the tests create.
func bigCluster(t *testing.T) (*sim.Engine, *Cluster) {
	eng, c := newCluster(t)
	for _, n := range []string{"n1", "n2", "n3", "n4"} {
		must(t, c.AddNode(node(n, "us-west-2a", "16", "64Gi"), true))
	}
	return eng, c
}

// TestDeploymentRollingUpdateBounds: a RollingUpdate never runs more than
// replicas + maxSurge pods (maxSurge rounded up) nor has fewer than
// replicas − maxUnavailable Ready (maxUnavailable rounded down), reaches
// both bounds, and ends with every pod on the new template.
func TestDeploymentRollingUpdateBounds(t *testing.T) {
	cases := []struct {
		name                      string
		replicas                  int32
		maxSurge, maxUnavail      string
		wantMaxLive, wantMinReady int
	}{
		{"defaults 25%/25% of 10: 3 surge, 2 unavailable", 10, "", "", 13, 8},
		{"25%/25% of 3: surge 1 (0.75 up), unavailable 0 (0.75 down)", 3, "25%", "25%", 4, 3},
		{"maxSurge 0, maxUnavailable 1", 10, "0", "1", 10, 9},
		{"maxSurge 1, maxUnavailable 0", 4, "1", "0", 5, 4},
		{"maxSurge 0%, maxUnavailable 10% of 1: both round to 0, so 1 unavailable", 1, "0%", "10%", 1, 0},
		{"maxSurge 100%, maxUnavailable 0", 4, "100%", "0", 8, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eng, c := bigCluster(t)
			d := rolling(deployment("default", "ui", tc.replicas, "100m"), tc.maxSurge, tc.maxUnavail)
			must(t, c.Apply(d))
			run(eng, time.Minute)
			must(t, c.Apply(withImage(d, "app:2")))
			maxLive, minReady := 0, int(tc.replicas)
			watch(eng, 5*time.Minute, func() {
				s := take(c, "default")
				maxLive = max(maxLive, s.total(s.live))
				minReady = min(minReady, s.total(s.ready))
			})
			if maxLive != tc.wantMaxLive || minReady != tc.wantMinReady {
				t.Errorf("live pods peaked at %d (want replicas+maxSurge = %d), Ready pods fell to %d (want replicas−maxUnavailable = %d)",
					maxLive, tc.wantMaxLive, minReady, tc.wantMinReady)
			}
			s := take(c, "default")
			if s.ready["app:2"] != int(tc.replicas) || s.stored["app:1"] != 0 {
				t.Errorf("after the rollout: %v ready, %v stored; want %d ready on app:2 and no app:1", s.ready, s.stored, tc.replicas)
			}
		})
	}
}

// TestDeploymentRolloutKeepsOldSpecAndReplicaSets: a template change makes
// a second ReplicaSet named <deployment>-<pod-template-hash>; the old
// ReplicaSet's pods keep the old spec (an evicted one is replaced with the
// old spec too); applying the same template again changes nothing.
func TestDeploymentRolloutKeepsOldSpecAndReplicaSets(t *testing.T) {
	eng, c := bigCluster(t)
	d := rolling(deployment("default", "ui", 4, "100m"), "0", "1")
	must(t, c.Apply(d))
	run(eng, time.Minute)
	oldHash := c.Pods()[0].Labels[appsv1.DefaultDeploymentUniqueLabelKey]
	must(t, c.Apply(d)) // same template
	run(eng, time.Minute)
	if s := take(c, "default"); s.total(s.stored) != 4 {
		t.Fatalf("re-applying the same template changed the pods: %v", s.stored)
	}
	d2 := withImage(d, "app:2")
	must(t, c.Apply(d2))
	run(eng, 2*time.Second) // one old pod is replaced at a time
	hashes := map[string]string{}
	for _, p := range c.Pods() {
		h := p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
		if !strings.HasPrefix(p.Name, "ui-"+h+"-") || p.OwnerReferences[0].Name != "ui-"+h {
			t.Errorf("pod %s (owner %s) is not named after its ReplicaSet ui-%s", p.Name, p.OwnerReferences[0].Name, h)
		}
		if prev, ok := hashes[h]; ok && prev != p.Spec.Containers[0].Image {
			t.Errorf("ReplicaSet %s has pods of two images", h)
		}
		hashes[h] = p.Spec.Containers[0].Image
	}
	if len(hashes) != 2 || hashes[oldHash] != "app:1" {
		t.Fatalf("ReplicaSets mid-rollout: %v, want the old %s on app:1 and a new one", hashes, oldHash)
	}
	// Evict an old pod: the old ReplicaSet replaces it from its own template.
	for _, p := range c.Pods() {
		if p.Spec.Containers[0].Image == "app:1" && p.DeletionTimestamp == nil {
			must(t, c.DeletePod(p.Namespace, p.Name, nil, "kubectl delete pod"))
			break
		}
	}
	run(eng, 10*time.Millisecond)
	if s := take(c, "default"); s.live["app:1"]+s.live["app:2"] != 4 || s.live["app:1"] < 2 {
		t.Fatalf("after deleting an old pod mid-rollout: live %v, want 4 with the old ReplicaSet's replaced on app:1", s.live)
	}
	run(eng, 5*time.Minute)
	if done, msg, err := c.RolloutStatus("Deployment", "default", "ui"); !done || err != nil {
		t.Fatalf("rollout not done: %q %v", msg, err)
	}
	// Rolling back to the first template reuses its ReplicaSet.
	must(t, c.Apply(d))
	run(eng, 5*time.Minute)
	for _, p := range c.Pods() {
		if p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != oldHash {
			t.Fatalf("after the rollback pod %s is not of ReplicaSet ui-%s", p.Name, oldHash)
		}
	}
}

// TestDeploymentRecreate: Recreate deletes every old pod and waits until
// they are gone before creating a new one; the workload's zero-ready time
// is the old pods' shutdown plus the new pods' startup.
func TestDeploymentRecreate(t *testing.T) {
	eng, c := bigCluster(t)
	d := deployment("default", "db", 3, "100m")
	d.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType
	must(t, c.Apply(d))
	run(eng, time.Minute)
	c.StartTracking()
	must(t, c.Apply(withImage(d, "app:2")))
	overlap := false
	watch(eng, 5*time.Minute, func() {
		if s := take(c, "default"); s.stored["app:1"] > 0 && s.stored["app:2"] > 0 {
			overlap = true
		}
	})
	if overlap {
		t.Error("a new pod existed while an old one was still terminating")
	}
	if s := take(c, "default"); s.ready["app:2"] != 3 {
		t.Fatalf("ready %v, want 3 on app:2", s.ready)
	}
	w := c.Workloads()[0]
	if w.MinReady != 0 || w.ZeroReady != 10*time.Second {
		t.Fatalf("minReady %d, zero-ready %s; want 0 and 10s (5s shutdown + 5s startup)", w.MinReady, w.ZeroReady)
	}
}

// TestDeploymentMinReadySeconds: with maxSurge 0 and maxUnavailable 1,
// each step waits until the new pod has been Ready for minReadySeconds
// (noticed a second later, when the controller requeues): 4 replicas with
// a 5 s startup and minReadySeconds 10 roll out in 4 × 16 s.
func TestDeploymentMinReadySeconds(t *testing.T) {
	eng, c := bigCluster(t)
	d := rolling(deployment("default", "ui", 4, "100m"), "0", "1")
	d.Spec.MinReadySeconds = 10
	must(t, c.Apply(d))
	run(eng, time.Minute)
	must(t, c.Apply(withImage(d, "app:2")))
	start := eng.Now()
	var doneAt time.Time
	watch(eng, 5*time.Minute, func() {
		if done, _, _ := c.RolloutStatus("Deployment", "default", "ui"); done && doneAt.IsZero() {
			doneAt = eng.Now()
		}
	})
	if got := doneAt.Sub(start); got != 64*time.Second {
		t.Fatalf("rollout took %s, want 64s", got)
	}
}

// TestDeploymentRolloutStatus: kubectl rollout status's messages along a
// rollout, and its progress-deadline error.
func TestDeploymentRolloutStatus(t *testing.T) {
	eng, c := bigCluster(t)
	d := rolling(deployment("default", "ui", 2, "100m"), "100%", "0")
	must(t, c.Apply(d))
	status := func() string {
		t.Helper()
		done, msg, err := c.RolloutStatus("Deployment", "default", "ui")
		if err != nil {
			return "error: " + err.Error()
		}
		if done {
			return "done: " + msg
		}
		return msg
	}
	if got, want := status(), `Waiting for deployment spec update to be observed...`; got != want {
		t.Fatalf("before the controller ran: %q, want %q", got, want)
	}
	steps := []struct {
		after time.Duration
		want  string
	}{
		{time.Second, `Waiting for deployment "ui" rollout to finish: 0 of 2 updated replicas are available...`},
		{time.Minute, `done: deployment "ui" successfully rolled out`},
	}
	for _, s := range steps {
		run(eng, s.after)
		if got := status(); got != s.want {
			t.Fatalf("+%s: %q, want %q", s.after, got, s.want)
		}
	}
	must(t, c.Apply(withImage(d, "app:2")))
	if got, want := status(), `Waiting for deployment spec update to be observed...`; got != want {
		t.Fatalf("after the change: %q, want %q", got, want)
	}
	for _, s := range []struct {
		after time.Duration
		want  string
	}{
		{time.Second, `Waiting for deployment "ui" rollout to finish: 2 old replicas are pending termination...`},
		{time.Minute, `done: deployment "ui" successfully rolled out`},
	} {
		run(eng, s.after)
		if got := status(); got != s.want {
			t.Fatalf("rollout +%s: %q, want %q", s.after, got, s.want)
		}
	}
	// A template no node can run: the new ReplicaSet never becomes available.
	stuck := withImage(d, "app:3")
	stuck.Spec.ProgressDeadlineSeconds = ptrInt32(30)
	stuck.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("64")
	must(t, c.Apply(stuck))
	advance(eng, time.Second)
	if got, want := status(), `Waiting for deployment "ui" rollout to finish: 2 old replicas are pending termination...`; got != want {
		t.Fatalf("stuck +1s: %q, want %q", got, want)
	}
	advance(eng, 29*time.Second)
	if got := status(); strings.HasPrefix(got, "error") {
		t.Fatalf("+30s: %q, want no error before the deadline has passed", got)
	}
	advance(eng, time.Second)
	if got, want := status(), `error: deployment "ui" exceeded its progress deadline`; got != want {
		t.Fatalf("+31s: %q, want %q", got, want)
	}
}

func ptrInt32(v int32) *int32 { return &v }

// TestDeploymentProportionalScaling: scaling a Deployment mid-rollout
// spreads the new replicas over its ReplicaSets in proportion to their
// size (sync.go scale): with 25%/25%, 8 old + 5 new of 10 (max 13),
// scaled to 20 (max 25), become 15 + 10; scaled to 4 (max 5), 3 + 2.
func TestDeploymentProportionalScaling(t *testing.T) {
	eng, c := bigCluster(t)
	d := rolling(deployment("default", "ui", 10, "100m"), "25%", "25%")
	must(t, c.Apply(d))
	run(eng, time.Minute)
	stuck := withImage(d, "app:2")
	stuck.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("64")
	must(t, c.Apply(stuck))
	run(eng, time.Minute)
	if s := take(c, "default"); s.live["app:1"] != 8 || s.live["app:2"] != 5 {
		t.Fatalf("stuck rollout: %v, want 8 old and 5 new", s.live)
	}
	must(t, c.Scale("Deployment", "default", "ui", 20))
	run(eng, time.Minute)
	if s := take(c, "default"); s.live["app:1"] != 15 || s.live["app:2"] != 10 {
		t.Fatalf("after scaling to 20: %v, want 15 old and 10 new", s.live)
	}
	must(t, c.Scale("Deployment", "default", "ui", 4))
	run(eng, time.Minute)
	if s := take(c, "default"); s.live["app:1"] != 3 || s.live["app:2"] != 2 {
		t.Fatalf("after scaling to 4: %v, want 3 old and 2 new", s.live)
	}
}

// TestPDBAcrossReplicaSets: mid-rollout, the disruption controller finds
// the Deployment (not each ReplicaSet) behind every pod, so a percentage
// PDB expects spec.replicas pods, counted once.
func TestPDBAcrossReplicaSets(t *testing.T) {
	eng, c := bigCluster(t)
	d := rolling(deployment("default", "ui", 10, "100m"), "3", "2")
	must(t, c.Apply(d))
	p := pdb("ui", "ui", 0)
	half := intstr.FromString("50%")
	p.Spec.MinAvailable = &half
	must(t, c.Apply(p))
	run(eng, time.Minute)
	stuck := withImage(d, "app:2")
	stuck.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("64")
	must(t, c.Apply(stuck))
	run(eng, time.Minute)
	st := c.PDBs("default")[0].Status
	if st.ExpectedPods != 10 || st.DesiredHealthy != 5 || st.CurrentHealthy != 8 || st.DisruptionsAllowed != 3 {
		t.Fatalf("PDB status mid-rollout %+v, want expected 10, desired 5, healthy 8, allowed 3", st)
	}
}

// TestDeploymentAvailabilityDuringRollout: the report's minReady counts the
// dip a rollout causes; a rolling update never reaches zero Ready.
func TestDeploymentAvailabilityDuringRollout(t *testing.T) {
	eng, c := bigCluster(t)
	d := deployment("default", "ui", 10, "100m")
	must(t, c.Apply(d))
	run(eng, time.Minute)
	c.StartTracking()
	must(t, c.Apply(withImage(d, "app:2")))
	run(eng, 5*time.Minute)
	w := c.Workloads()[0]
	if w.Desired != 10 || w.Ready != 10 || w.MinReady != 8 || w.ZeroReady != 0 {
		t.Fatalf("status %+v, want desired 10, ready 10, minReady 8, no zero-ready time", w)
	}
}

// TestRolloutRestart: kubectl rollout restart stamps the template with the
// virtual time and rolls the pods; errors for what cannot be restarted.
func TestRolloutRestart(t *testing.T) {
	eng, c := bigCluster(t)
	d := deployment("default", "ui", 3, "100m")
	must(t, c.Apply(d))
	advance(eng, time.Hour)
	before := map[string]bool{}
	for _, p := range c.Pods() {
		before[p.Name] = true
	}
	must(t, c.RolloutRestart("Deployment", "default", "ui"))
	want := t0.Add(time.Hour).Format(time.RFC3339)
	if tmpl, _ := c.PodTemplate("Deployment", "default", "ui"); tmpl.Annotations[RestartedAtAnnotation] != want {
		t.Fatalf("template annotations %v, want %s=%s", tmpl.Annotations, RestartedAtAnnotation, want)
	}
	must(t, c.RolloutRestart("Deployment", "default", "ui")) // same second: same template
	run(eng, 5*time.Minute)
	pods := c.Pods()
	if len(pods) != 3 {
		t.Fatalf("%d pods after the restart, want 3", len(pods))
	}
	hashes := map[string]bool{}
	for _, p := range pods {
		if before[p.Name] || p.Annotations[RestartedAtAnnotation] != want {
			t.Fatalf("pod %s survived the restart or lacks the annotation (%v)", p.Name, p.Annotations)
		}
		hashes[p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]] = true
	}
	if len(hashes) != 1 {
		t.Fatalf("pods of %d ReplicaSets, want 1 (the second restart in the same second is a no-op)", len(hashes))
	}

	paused := deployment("default", "paused", 1, "100m")
	paused.Spec.Paused = true
	must(t, c.Apply(paused))
	for _, tc := range []struct {
		kind, name, want string
		notFound         bool
	}{
		{"Deployment", "paused", `deployments.apps "paused" can't restart paused deployment (run rollout resume first)`, false},
		{"Deployment", "missing", `deployments.apps "missing" not found`, true},
		{"DaemonSet", "missing", `daemonsets.apps "missing" not found`, true},
		{"CronJob", "ui", `rollouts are not supported for kind "CronJob"`, false},
		{"Pod", "ui", `rollouts are not supported for kind "Pod"`, false},
	} {
		err := c.RolloutRestart(tc.kind, "default", tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) || apierrors.IsNotFound(err) != tc.notFound {
			t.Errorf("RolloutRestart(%s, %s) = %v, want %q (not found: %v)", tc.kind, tc.name, err, tc.want, tc.notFound)
		}
	}
}

// TestPausedDeploymentDoesNotRollOut: a paused Deployment scales but keeps
// its template's pods until resumed.
func TestPausedDeploymentDoesNotRollOut(t *testing.T) {
	eng, c := bigCluster(t)
	d := deployment("default", "ui", 2, "100m")
	must(t, c.Apply(d))
	run(eng, time.Minute)
	p := withImage(d, "app:2")
	p.Spec.Paused = true
	p.Spec.Replicas = ptrInt32(3)
	must(t, c.Apply(p))
	run(eng, time.Minute)
	if s := take(c, "default"); s.ready["app:1"] != 3 || s.stored["app:2"] != 0 {
		t.Fatalf("paused: %v, want 3 on app:1 and no app:2", s.ready)
	}
	p = p.DeepCopy()
	p.Spec.Paused = false
	must(t, c.Apply(p))
	run(eng, 5*time.Minute)
	if s := take(c, "default"); s.ready["app:2"] != 3 || s.stored["app:1"] != 0 {
		t.Fatalf("resumed: %v, want 3 on app:2", s.ready)
	}
}

// TestDeploymentStrategyValidation: the API server's validation.
func TestDeploymentStrategyValidation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(d *appsv1.Deployment)
		want   string
	}{
		{"maxSurge and maxUnavailable both 0", func(d *appsv1.Deployment) { rolling(d, "0", "0%") }, "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "},
		{"maxUnavailable over 100%", func(d *appsv1.Deployment) { rolling(d, "1", "120%") }, "must not be greater than 100%"},
		{"negative maxSurge", func(d *appsv1.Deployment) { rolling(d, "-1", "1") }, "spec.strategy.rollingUpdate.maxSurge: Invalid value: -1: must be greater than or equal to 0"},
		{"rollingUpdate with Recreate", func(d *appsv1.Deployment) {
			rolling(d, "1", "1")
			d.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType
		}, "may not be specified when strategy `type` is 'Recreate'"},
		{"unknown strategy", func(d *appsv1.Deployment) { d.Spec.Strategy.Type = "BlueGreen" }, `spec.strategy.type: Unsupported value: "BlueGreen"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := newCluster(t)
			d := deployment("default", "ui", 1, "100m")
			tc.mutate(d)
			err := c.Apply(d)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Apply = %v, want a 422 containing %q", err, tc.want)
			}
		})
	}
	_, c := newCluster(t)
	d := rolling(deployment("default", "ui", 1, "100m"), "0", "0")
	if err := c.Apply(d); err == nil || !strings.Contains(err.Error(), "may not be 0 when `maxSurge` is 0") {
		t.Fatalf("Apply = %v", err)
	}
}
