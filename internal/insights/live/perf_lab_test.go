//go:build lab

package live

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/ladder-eks/ladder/internal/insights"
	"github.com/ladder-eks/ladder/internal/lab/labtest"
)

// PodsEnv overrides how many pods TestScan10kPodsOnTheLab creates.
const PodsEnv = "LADDER_LIVE_BENCH_PODS"

// TestScan10kPodsOnTheLab measures `ladder check` on a live cluster of
// 10,000 pods: Read (version, /metrics, discovery, every list in pages of
// 500, Helm secrets, nodes) and then every check. The goal is 2 s.
//
// The pods are what a Deployment's ReplicaSets run — owned by one of 20
// ReplicaSets, one container with requests, probes, env and ports, the
// ServiceAccount token volume the admission adds — bound (spec.nodeName)
// to a node without a kubelet, so nothing rewrites them while the scan
// runs. Each ReplicaSet wants exactly its 500 pods, and its own template
// names a PriorityClass that does not exist, so its controller neither
// deletes the test's pods nor adds its own.
func TestScan10kPodsOnTheLab(t *testing.T) {
	total := 10000
	if s := os.Getenv(PodsEnv); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("%s=%q: %v", PodsEnv, s, err)
		}
		total = n
	}
	const perRS = 500
	cfg := labtest.Start(t)
	ns := labtest.Namespace(t, cfg)
	fast := *cfg
	fast.QPS, fast.Burst = -1, 0 // no client-side limit for the creates
	cs := kubernetes.NewForConfigOrDie(&fast)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	node := "bench-" + ns
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node,
		Labels: map[string]string{"eks.amazonaws.com/nodegroup": "bench", corev1.LabelTopologyZone: "us-west-2a"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Pods bound to a node without a kubelet never finish a graceful
		// deletion: remove them at once, then the node.
		zero := int64(0)
		c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		_ = cs.CoreV1().Pods(ns).DeleteCollection(c, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		_ = cs.CoreV1().Nodes().Delete(c, node, metav1.DeleteOptions{})
	})

	began := time.Now()
	var owners []metav1.OwnerReference
	for i := range (total + perRS - 1) / perRS {
		rs := benchReplicaSet(ns, i, int32(min(perRS, total-i*perRS)))
		got, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		owners = append(owners, *metav1.NewControllerRef(got, appsv1.SchemeGroupVersion.WithKind("ReplicaSet")))
	}
	var created atomic.Int64
	var firstErr error
	var mu sync.Mutex
	next := make(chan int)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for i := range next {
				p := benchPod(ns, node, i, owners[i/perRS])
				if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				created.Add(1)
			}
		})
	}
	for i := range total {
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("creating pods: %v (%d created)", firstErr, created.Load())
	}
	t.Logf("created %d pods in %d ReplicaSets in %s", created.Load(), len(owners), time.Since(began).Round(time.Millisecond))

	// Three scans; the report gives each and the best.
	var reads, checks, totals []time.Duration
	var objects, pods int
	for range 3 {
		t0 := time.Now()
		in, err := Read(ctx, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t1 := time.Now()
		in.Target, in.Now = in.Current.Next(), time.Now()
		rep := insights.Run(in, nil)
		t2 := time.Now()
		reads, checks, totals = append(reads, t1.Sub(t0)), append(checks, t2.Sub(t1)), append(totals, t2.Sub(t0))
		objects, pods = len(in.Objects), len(in.Kind("Pod"))
		_ = rep
	}
	best := slices.Min(totals)
	t.Logf("live scan of %d objects (%d pods): read %v, checks %v, total %v; best total %s (goal 2s)",
		objects, pods, round(reads), round(checks), round(totals), best.Round(time.Millisecond))
	if pods < total {
		t.Errorf("read %d pods, want at least %d", pods, total)
	}
	if best > 2*time.Second {
		// The shared 2-core machine runs the API server, etcd and the scan:
		// report, do not fail on, a slow run.
		t.Logf("best total %s is over the 2 s goal", best.Round(time.Millisecond))
	}
}

func round(ds []time.Duration) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond).String()
	}
	return out
}

func benchLabels(i int) map[string]string {
	return map[string]string{"app": fmt.Sprintf("bench-%d", i), "tier": "backend", "team": "payments",
		"app.kubernetes.io/name": fmt.Sprintf("bench-%d", i)}
}

func benchReplicaSet(ns string, i int, replicas int32) *appsv1.ReplicaSet {
	labels := benchLabels(i)
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("bench-%d", i), Labels: labels},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{PriorityClassName: "ladder-bench-does-not-exist",
					Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/app:1.0"}}},
			},
		},
	}
}

func benchPod(ns, node string, i int, owner metav1.OwnerReference) *corev1.Pod {
	rsIndex := i / 500
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("bench-%d-%05d", rsIndex, i), Labels: benchLabels(rsIndex),
			Annotations:     map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
			OwnerReferences: []metav1.OwnerReference{owner}},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{
				Name: "app", Image: "123456789012.dkr.ecr.us-west-2.amazonaws.com/payments/app:2026.12.03-1a2b3c4",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "metrics", ContainerPort: 9090}},
				Env: []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "REGION", Value: "us-west-2"},
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
				},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")}}, PeriodSeconds: 5},
				LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromString("http")}}, PeriodSeconds: 10},
			}},
			Tolerations: []corev1.Toleration{
				{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
				{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
			},
		},
	}
}
