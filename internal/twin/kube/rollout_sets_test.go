package kube

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/ladder-eks/ladder/internal/sim"
)

func nodesCluster(t *testing.T, n int) (*sim.Engine, *Cluster) {
	eng, c := newCluster(t)
	for i := 1; i <= n; i++ {
		must(t, c.AddNode(node(fmt.Sprintf("n%d", i), "us-west-2a", "16", "64Gi"), true))
	}
	return eng, c
}

func agent(maxSurge, maxUnavailable string) *appsv1.DaemonSet {
	ds := daemonSet("agent")
	ds.Spec.Template.Spec.Containers[0].Image = "agent:1"
	if maxSurge != "" || maxUnavailable != "" {
		ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType, RollingUpdate: &appsv1.RollingUpdateDaemonSet{}}
		if maxSurge != "" {
			ds.Spec.UpdateStrategy.RollingUpdate.MaxSurge = intOrStr(maxSurge)
		}
		if maxUnavailable != "" {
			ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = intOrStr(maxUnavailable)
		}
	}
	return ds
}

func dsImage(ds *appsv1.DaemonSet, image string) *appsv1.DaemonSet {
	ds = ds.DeepCopy()
	ds.Spec.Template.Spec.Containers[0].Image = image
	return ds
}

// perNode counts, for each node, its live pods and whether one of them is
// Ready (available, minReadySeconds being 0).
func perNode(c *Cluster) (live map[string]int, withReady int) {
	live = map[string]int{}
	for _, n := range c.Nodes() {
		ready := false
		for _, p := range c.PodsOnNode(n.Name) {
			if p.DeletionTimestamp == nil {
				live[n.Name]++
				ready = ready || podutils.IsPodReady(p)
			}
		}
		if ready {
			withReady++
		}
	}
	return live, withReady
}

// TestDaemonSetRollingUpdate: maxUnavailable (default 1, percentages of the
// nodes rounded up) bounds the nodes without an available pod; maxSurge
// bounds the nodes running two. Nodes are replaced in name order; each
// replacement takes the old pod's 5 s shutdown (without surge) and the new
// one's 5 s startup.
func TestDaemonSetRollingUpdate(t *testing.T) {
	cases := []struct {
		name                  string
		nodes                 int
		maxSurge, maxUnavail  string
		wantMinReadyNodes     int
		wantMaxPodsOnANode    int
		wantDuration          time.Duration
		wantFirstReplacements []string
	}{
		{"default: maxUnavailable 1, one node at a time", 4, "", "", 3, 1, 40 * time.Second, []string{"n1", "n2", "n3", "n4"}},
		{"maxUnavailable 50% of 3 nodes rounds up to 2", 3, "0", "50%", 1, 1, 20 * time.Second, []string{"n1", "n2", "n3"}},
		// The last node counts as updated once its old pod exited (the
		// status reads each node's oldest pod).
		{"maxSurge 1, maxUnavailable 0: a new pod beside the old", 4, "1", "0", 4, 2, 25 * time.Second, []string{"n1", "n2", "n3", "n4"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eng, c := nodesCluster(t, tc.nodes)
			ds := agent(tc.maxSurge, tc.maxUnavail)
			must(t, c.Apply(ds))
			run(eng, time.Minute)
			var replaced []string
			c.OnPodDeleted(func(p *corev1.Pod) { replaced = append(replaced, p.Spec.NodeName) })
			must(t, c.Apply(dsImage(ds, "agent:2")))
			start := eng.Now()
			minReady, maxPods := tc.nodes, 0
			var doneAt time.Time
			watch(eng, 5*time.Minute, func() {
				live, ready := perNode(c)
				minReady = min(minReady, ready)
				for _, n := range live {
					maxPods = max(maxPods, n)
				}
				if done, _, _ := c.RolloutStatus("DaemonSet", "default", "agent"); done && doneAt.IsZero() {
					doneAt = eng.Now()
				}
			})
			if minReady != tc.wantMinReadyNodes || maxPods != tc.wantMaxPodsOnANode {
				t.Errorf("nodes with a Ready pod fell to %d (want %d); a node ran up to %d pods (want %d)", minReady, tc.wantMinReadyNodes, maxPods, tc.wantMaxPodsOnANode)
			}
			if got := doneAt.Sub(start); got != tc.wantDuration {
				t.Errorf("rollout took %s, want %s", got, tc.wantDuration)
			}
			if strings.Join(replaced, ",") != strings.Join(tc.wantFirstReplacements, ",") {
				t.Errorf("old pods removed from %v, want %v", replaced, tc.wantFirstReplacements)
			}
			for _, p := range c.Pods() {
				if p.Spec.Containers[0].Image != "agent:2" || p.Labels[appsv1.ControllerRevisionHashLabelKey] == "" || p.Labels["pod-template-generation"] != "2" {
					t.Errorf("pod %s after the rollout: image %s, labels %v", p.Name, p.Spec.Containers[0].Image, p.Labels)
				}
			}
		})
	}
}

// TestDaemonSetOnDelete: OnDelete replaces nothing by itself; a pod deleted
// by hand comes back, once it is gone, from the new template.
func TestDaemonSetOnDelete(t *testing.T) {
	eng, c := nodesCluster(t, 2)
	ds := agent("", "")
	ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
	must(t, c.Apply(ds))
	run(eng, time.Minute)
	must(t, c.Apply(dsImage(ds, "agent:2")))
	run(eng, time.Minute)
	if s := take(c, "default"); s.ready["agent:1"] != 2 || s.stored["agent:2"] != 0 {
		t.Fatalf("OnDelete replaced pods: %v", s.stored)
	}
	if done, _, err := c.RolloutStatus("DaemonSet", "default", "agent"); !done || err == nil || err.Error() != "rollout status is only available for RollingUpdate strategy type" {
		t.Fatalf("RolloutStatus = %v, %v", done, err)
	}
	victim := c.PodsOnNode("n2")[0]
	must(t, c.DeletePod(victim.Namespace, victim.Name, nil, "kubectl delete pod"))
	advance(eng, 4*time.Second)
	if pods := c.PodsOnNode("n2"); len(pods) != 1 || pods[0].Name != victim.Name {
		t.Fatalf("a replacement came before the old pod exited: %d pods on n2", len(pods))
	}
	run(eng, time.Minute)
	if pods := c.PodsOnNode("n2"); len(pods) != 1 || pods[0].Spec.Containers[0].Image != "agent:2" || !podutils.IsPodReady(pods[0]) {
		t.Fatalf("n2 after the deletion: %v", pods)
	}
	if pods := c.PodsOnNode("n1"); pods[0].Spec.Containers[0].Image != "agent:1" {
		t.Fatal("n1's pod was replaced")
	}
}

// TestDaemonSetRolloutStatusAndOverhead: kubectl's messages along a
// DaemonSet rollout; the overhead Karpenter bills new nodes follows the new
// template.
func TestDaemonSetRolloutStatusAndOverhead(t *testing.T) {
	eng, c := nodesCluster(t, 4)
	ds := agent("", "")
	must(t, c.Apply(ds))
	run(eng, time.Minute)
	gen := c.DaemonSetGeneration()
	ds2 := dsImage(ds, "agent:2")
	ds2.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}
	must(t, c.Apply(ds2))
	if c.DaemonSetGeneration() == gen || c.DaemonSetOverhead(c.Node("n1")).MilliCPU != 250 {
		t.Fatalf("overhead %v, generation %d→%d; want 250m and a new generation", c.DaemonSetOverhead(c.Node("n1")), gen, c.DaemonSetGeneration())
	}
	status := func() string {
		done, msg, err := c.RolloutStatus("DaemonSet", "default", "agent")
		if err != nil {
			return "error: " + err.Error()
		}
		if done {
			return "done: " + msg
		}
		return msg
	}
	if got, want := status(), "Waiting for daemon set spec update to be observed..."; got != want {
		t.Fatalf("before the controller ran: %q, want %q", got, want)
	}
	for _, s := range []struct {
		after time.Duration
		want  string
	}{
		{time.Second, `Waiting for daemon set "agent" rollout to finish: 0 out of 4 new pods have been updated...`},
		{5 * time.Second, `Waiting for daemon set "agent" rollout to finish: 1 out of 4 new pods have been updated...`},
		{30 * time.Second, `Waiting for daemon set "agent" rollout to finish: 3 of 4 updated pods are available...`},
		{5 * time.Second, `done: daemon set "agent" successfully rolled out`},
	} {
		advance(eng, s.after)
		if got := status(); got != s.want {
			t.Fatalf("+%s: %q, want %q", eng.Now().Sub(t0), got, s.want)
		}
	}
}

// TestDaemonSetStrategyValidation: exactly one of maxUnavailable and
// maxSurge must be non-zero.
func TestDaemonSetStrategyValidation(t *testing.T) {
	for _, tc := range []struct{ surge, unavail, want string }{
		{"1", "1", "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "},
		{"0", "0", "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"},
		{"0", "101%", "must not be greater than 100%"},
	} {
		_, c := newCluster(t)
		err := c.Apply(agent(tc.surge, tc.unavail))
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("surge %s, unavailable %s: %v, want %q", tc.surge, tc.unavail, err, tc.want)
		}
	}
}

func statefulSet(name string, replicas int32) *appsv1.StatefulSet {
	labels := map[string]string{"app": name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &replicas,
			ServiceName: name,
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "db:1"}}},
			},
		},
	}
}

func stsImage(s *appsv1.StatefulSet, image string) *appsv1.StatefulSet {
	s = s.DeepCopy()
	s.Spec.Template.Spec.Containers[0].Image = image
	return s
}

// TestStatefulSetRollingUpdate: pods are replaced from the highest ordinal
// down to the partition, maxUnavailable (default 1) at a time, each waiting
// for the previous to be Ready again; ordinals below the partition keep the
// old template.
func TestStatefulSetRollingUpdate(t *testing.T) {
	cases := []struct {
		name           string
		replicas       int32
		parallel       bool
		partition      int32
		maxUnavailable string
		wantOrder      string // the order pods started terminating, "+" joining those that started together
		wantMinReady   int
		wantNew        int
		wantDuration   time.Duration
	}{
		{"OrderedReady: highest ordinal first, one at a time", 3, false, 0, "", "web-2,web-1,web-0", 2, 3, 30 * time.Second},
		{"partition 2 of 3: only web-2", 3, false, 2, "", "web-2", 2, 1, 10 * time.Second},
		{"Parallel with maxUnavailable 2: two at a time", 4, true, 0, "2", "web-3+web-2,web-1+web-0", 2, 4, 20 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eng, c := nodesCluster(t, 2)
			s := statefulSet("web", tc.replicas)
			if tc.parallel {
				s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
			}
			s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: &tc.partition}}
			if tc.maxUnavailable != "" {
				s.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = intOrStr(tc.maxUnavailable)
			}
			must(t, c.Apply(s))
			run(eng, time.Minute)
			must(t, c.Apply(stsImage(s, "db:2")))
			start := eng.Now()
			var order []string
			terminating := map[string]bool{}
			minReady := int(tc.replicas)
			var doneAt time.Time
			watch(eng, 5*time.Minute, func() {
				var batch []string
				for _, p := range c.Pods() {
					if p.DeletionTimestamp != nil && !terminating[p.Name] {
						terminating[p.Name] = true
						batch = append([]string{p.Name}, batch...) // highest ordinal first
					}
					if p.DeletionTimestamp == nil {
						delete(terminating, p.Name)
					}
				}
				if len(batch) > 0 {
					order = append(order, strings.Join(batch, "+"))
				}
				minReady = min(minReady, take(c, "default").total(take(c, "default").ready))
				if done, _, _ := c.RolloutStatus("StatefulSet", "default", "web"); done && doneAt.IsZero() {
					doneAt = eng.Now()
				}
			})
			if got := strings.Join(order, ","); got != tc.wantOrder {
				t.Errorf("pods went in the order %s, want %s", got, tc.wantOrder)
			}
			if minReady != tc.wantMinReady {
				t.Errorf("Ready pods fell to %d, want %d", minReady, tc.wantMinReady)
			}
			if got := doneAt.Sub(start); got != tc.wantDuration {
				t.Errorf("rollout done after %s, want %s", got, tc.wantDuration)
			}
			st := take(c, "default")
			if st.ready["db:2"] != tc.wantNew || st.ready["db:1"] != int(tc.replicas)-tc.wantNew {
				t.Errorf("after the rollout %v, want %d on db:2", st.ready, tc.wantNew)
			}
			for _, p := range c.Pods() {
				var ord int32
				fmt.Sscanf(p.Name, "web-%d", &ord)
				if wantNew := ord >= tc.partition; (p.Spec.Containers[0].Image == "db:2") != wantNew {
					t.Errorf("%s runs %s (partition %d)", p.Name, p.Spec.Containers[0].Image, tc.partition)
				}
			}
		})
	}
}

// TestStatefulSetPartitionKeepsOldRevisionBelow: a pod below the partition
// that is deleted comes back from the current (old) revision; the rollout
// status reads as kubectl's partitioned one.
func TestStatefulSetPartitionKeepsOldRevisionBelow(t *testing.T) {
	eng, c := nodesCluster(t, 2)
	s := statefulSet("web", 3)
	one := int32(1)
	s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: &one}
	must(t, c.Apply(s))
	run(eng, time.Minute)
	must(t, c.Apply(stsImage(s, "db:2")))
	if _, msg, _ := c.RolloutStatus("StatefulSet", "default", "web"); msg != "Waiting for statefulset spec update to be observed..." {
		t.Fatalf("before the controller ran: %q", msg)
	}
	advance(eng, 2*time.Second)
	if _, msg, _ := c.RolloutStatus("StatefulSet", "default", "web"); msg != "Waiting for 1 pods to be ready..." {
		t.Fatalf("+2s: %q", msg)
	}
	run(eng, time.Minute)
	if done, msg, _ := c.RolloutStatus("StatefulSet", "default", "web"); !done || msg != "partitioned roll out complete: 2 new pods have been updated..." {
		t.Fatalf("after the rollout: %v %q", done, msg)
	}
	must(t, c.DeletePod("default", "web-0", nil, "kubectl delete pod"))
	run(eng, time.Minute)
	if p := c.Pod("default", "web-0"); p == nil || p.Spec.Containers[0].Image != "db:1" || !podutils.IsPodReady(p) {
		t.Fatalf("web-0 after deletion: %v", p)
	}
}

// TestStatefulSetOnDeleteAndStatus: OnDelete replaces only deleted pods;
// without a rollingUpdate stanza the status reads by revision, which shows
// while a replaced pod is Ready but not yet available (minReadySeconds).
func TestStatefulSetOnDeleteAndStatus(t *testing.T) {
	eng, c := nodesCluster(t, 2)
	s := statefulSet("web", 2)
	s.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType
	must(t, c.Apply(s))
	run(eng, time.Minute)
	must(t, c.Apply(stsImage(s, "db:2")))
	run(eng, time.Minute)
	if st := take(c, "default"); st.ready["db:1"] != 2 {
		t.Fatalf("OnDelete replaced pods: %v", st.ready)
	}
	must(t, c.DeletePod("default", "web-1", nil, "kubectl delete pod"))
	run(eng, time.Minute)
	if p := c.Pod("default", "web-1"); p == nil || p.Spec.Containers[0].Image != "db:2" {
		t.Fatalf("web-1 after deletion: %v", p)
	}
	if done, _, err := c.RolloutStatus("StatefulSet", "default", "web"); !done || err == nil {
		t.Fatalf("OnDelete rollout status: %v %v", done, err)
	}

	r := statefulSet("r", 2)
	r.Spec.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType // no rollingUpdate stanza
	r.Spec.MinReadySeconds = 10
	must(t, c.Apply(r))
	run(eng, time.Minute)
	must(t, c.Apply(stsImage(r, "db:2")))
	advance(eng, 12*time.Second)
	_, msg, _ := c.RolloutStatus("StatefulSet", "default", "r")
	if !strings.HasPrefix(msg, "waiting for statefulset rolling update to complete 1 pods at revision r-") {
		t.Fatalf("+12s: %q", msg)
	}
	run(eng, time.Minute)
	done, msg, _ := c.RolloutStatus("StatefulSet", "default", "r")
	if tmplHash := c.Pod("default", "r-0").Labels[appsv1.ControllerRevisionHashLabelKey]; !done || msg != "statefulset rolling update complete 2 pods at revision "+tmplHash+"..." {
		t.Fatalf("done %v %q (pod revision %s)", done, msg, tmplHash)
	}
}

// TestStatefulSetValidation: maxUnavailable cannot be 0; only some spec
// fields may change.
func TestStatefulSetValidation(t *testing.T) {
	_, c := newCluster(t)
	s := statefulSet("web", 1)
	zero := intstr.FromInt32(0)
	s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{MaxUnavailable: &zero}
	if err := c.Apply(s); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "maxUnavailable: Invalid value: 0: cannot be 0") {
		t.Fatalf("maxUnavailable 0: %v", err)
	}
	s = statefulSet("web", 1)
	must(t, c.Apply(s))
	s2 := s.DeepCopy()
	s2.Spec.ServiceName = "other"
	if err := c.Apply(s2); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "updates to statefulset spec for fields other than") {
		t.Fatalf("serviceName change: %v", err)
	}
	s3 := stsImage(s, "db:2")
	s3.Spec.Replicas = ptrInt32(2)
	must(t, c.Apply(s3))
}
