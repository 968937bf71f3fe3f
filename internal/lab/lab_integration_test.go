//go:build lab && linux

package lab

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The real lab, end to end: built (or found in the cache), started in a
// temporary directory, checked the way a user would check a cluster, and
// stopped with nothing left running. Run with `go test -tags lab
// ./internal/lab/` (make test does); LADDER_LAB_KUBERNETES=1.36 picks the
// other release.
func TestRealLab(t *testing.T) {
	release, err := LookupRelease(os.Getenv("LADDER_LAB_KUBERNETES"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()

	began := time.Now()
	bins, err := Build(ctx, BuildOptions{Release: release, Out: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("binaries ready in %s: %s", roundDuration(time.Since(began)), bins.Dir)

	// Under LADDER_LABTEST_DIR when set (make lab-test stops every lab
	// there even if this test binary dies), else the system's temp dir.
	base := os.Getenv("LADDER_LABTEST_DIR")
	if base != "" {
		if err := os.MkdirAll(base, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := os.MkdirTemp(base, "lab-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	began = time.Now()
	lb, err := Up(ctx, Options{Dir: dir, Binaries: bins, Out: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("lab up in %s", roundDuration(time.Since(began)))
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			Down(context.Background(), DownOptions{Dir: dir})
		}
	})
	cfg, err := lb.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)

	t.Run("version", func(t *testing.T) {
		v, err := cs.Discovery().ServerVersion()
		if err != nil {
			t.Fatal(err)
		}
		if v.GitVersion != release.Kubernetes || v.GitTreeState != "clean" {
			t.Errorf("/version = %s (%s), want %s (clean)", v.GitVersion, v.GitTreeState, release.Kubernetes)
		}
	})

	t.Run("listens on loopback only", func(t *testing.T) {
		for _, p := range lb.Components {
			addrs := listening(t, p.PID)
			if len(addrs) == 0 {
				t.Errorf("%s (pid %d) listens nowhere", p.Name, p.PID)
			}
			for _, a := range addrs {
				if !strings.HasPrefix(a, "127.0.0.1:") {
					t.Errorf("%s (pid %d) listens on %s, beyond loopback", p.Name, p.PID, a)
				}
			}
			t.Logf("%s listens on %v", p.Name, addrs)
		}
	})

	ns := "lab-test"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the namespace's default ServiceAccount", func() (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})

	t.Run("authentication and RBAC", func(t *testing.T) {
		// No credentials: anonymous, which RBAC grants nothing here.
		anon := rest.AnonymousClientConfig(cfg)
		_, err := kubernetes.NewForConfigOrDie(anon).CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
		if !apierrors.IsUnauthorized(err) && !apierrors.IsForbidden(err) {
			t.Errorf("an unauthenticated list of secrets: %v, want 401 or 403", err)
		}
		// A token the apiserver does not know.
		bad := rest.AnonymousClientConfig(cfg)
		bad.BearerToken = "not-a-token"
		_, err = kubernetes.NewForConfigOrDie(bad).CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if !apierrors.IsUnauthorized(err) {
			t.Errorf("a list with an unknown token: %v, want 401", err)
		}
		// A real identity without rights: a ServiceAccount's token.
		sa, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "nobody"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("TokenRequest: %v", err)
		}
		nobody := rest.AnonymousClientConfig(cfg)
		nobody.BearerToken = tr.Status.Token
		_, err = kubernetes.NewForConfigOrDie(nobody).CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "system:serviceaccount:"+ns+":nobody") {
			t.Errorf("a list of pods as %s/nobody: %v, want 403 naming the ServiceAccount", ns, err)
		}
	})

	t.Run("KWOK node, Deployment, PDB, eviction", func(t *testing.T) {
		began := time.Now()
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        "kwok-node-0",
				Annotations: map[string]string{KwokNodeAnnotation: "fake"},
				Labels:      map[string]string{"type": "kwok", "kubernetes.io/hostname": "kwok-node-0"},
			},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: KwokNodeAnnotation, Value: "fake", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110"),
			}, Capacity: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110"),
			}},
		}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}) })
		poll(t, ctx, "node kwok-node-0 Ready", func() (bool, error) {
			n, err := cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady {
					return c.Status == corev1.ConditionTrue, nil
				}
			}
			return false, nil
		})
		t.Logf("node Ready after %s", roundDuration(time.Since(began)))

		labels := map[string]string{"app": "web"}
		replicas := int32(2)
		dep := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: appsv1.DeploymentSpec{
				Replicas: &replicas,
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						NodeSelector: map[string]string{"type": "kwok"},
						Tolerations:  []corev1.Toleration{{Key: KwokNodeAnnotation, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
						Containers:   []corev1.Container{{Name: "web", Image: "fake-image"}},
					},
				},
			},
		}
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		running := func(want int) []corev1.Pod {
			var pods []corev1.Pod
			poll(t, ctx, fmt.Sprintf("%d pods of web Running", want), func() (bool, error) {
				list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
				if err != nil {
					return false, err
				}
				pods = pods[:0]
				for _, p := range list.Items {
					if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName == node.Name && p.DeletionTimestamp == nil {
						pods = append(pods, p)
					}
				}
				return len(pods) == want, nil
			})
			return pods
		}
		pods := running(2)
		t.Logf("2 pods Running after %s", roundDuration(time.Since(began)))

		minAvailable := intstr.FromInt32(2)
		pdb := &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable, Selector: &metav1.LabelSelector{MatchLabels: labels}},
		}
		if _, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		allowed := func(want int32, healthy int32) {
			poll(t, ctx, fmt.Sprintf("PDB web: %d healthy, %d disruptions allowed", healthy, want), func() (bool, error) {
				p, err := cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "web", metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				s := p.Status
				return s.ObservedGeneration == p.Generation && s.CurrentHealthy == healthy && s.DisruptionsAllowed == want, nil
			})
		}
		allowed(0, 2) // computed by kube-controller-manager's disruption controller

		evict := func(pod string) error {
			return cs.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns}})
		}
		err := evict(pods[0].Name)
		if !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), "disruption budget") {
			t.Fatalf("evicting %s with the PDB exhausted: %v, want 429 naming the disruption budget", pods[0].Name, err)
		}

		// The positive control: one more replica, one disruption allowed,
		// and the eviction goes through.
		scale, err := cs.AppsV1().Deployments(ns).GetScale(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		scale.Spec.Replicas = 3
		if _, err := cs.AppsV1().Deployments(ns).UpdateScale(ctx, "web", scale, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		running(3)
		allowed(1, 3)
		if err := evict(pods[0].Name); err != nil {
			t.Fatalf("evicting %s with one disruption allowed: %v", pods[0].Name, err)
		}
		running(3) // the ReplicaSet replaces the evicted pod
	})

	// Memory of each process after the tests, for docs/lab.md.
	var total int
	for _, p := range lb.Components {
		rss, hwm := memory(p.PID)
		total += rss
		t.Logf("%-24s pid %-7d RSS %4d MB (peak %4d MB)", p.Name, p.PID, rss>>10, hwm>>10)
	}
	t.Logf("lab RSS total %d MB", total>>10)

	began = time.Now()
	if err := Down(context.Background(), DownOptions{Dir: dir, Out: testLog{t}}); err != nil {
		t.Fatal(err)
	}
	stopped = true
	t.Logf("lab down in %s", roundDuration(time.Since(began)))
	for _, p := range lb.Components {
		if ok, _ := ours(p); ok {
			t.Errorf("%s (pid %d) still runs after Down", p.Name, p.PID)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "lab.json")); !os.IsNotExist(err) {
		t.Errorf("lab.json left after Down: %v", err)
	}
}

// poll waits for cond, failing the test with what it waited for after a
// minute.
func poll(t *testing.T, ctx context.Context, what string, cond func() (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		ok, err := cond()
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last error: %v)", what, err, last)
	}
}

// listening lists the TCP addresses pid listens on, from /proc: the
// socket inodes among its descriptors, looked up in /proc/PID/net/tcp{,6}.
func listening(t *testing.T, pid int) []string {
	t.Helper()
	inodes := map[string]bool{}
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if link, err := os.Readlink(fd); err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"tcp", "tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// local_address rem_address st ... inode (fields 1, 3, 9)
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] {
				continue
			}
			out = append(out, decodeAddr(fields[1]))
		}
		f.Close()
	}
	return out
}

// decodeAddr turns /proc/net/tcp's "0100007F:1F90" into "127.0.0.1:8080"
// (IPv6 addresses are printed as their hex).
func decodeAddr(s string) string {
	hexIP, hexPort, _ := strings.Cut(s, ":")
	port, _ := strconv.ParseUint(hexPort, 16, 16)
	if len(hexIP) != 8 {
		return "[" + hexIP + "]:" + strconv.Itoa(int(port))
	}
	b, _ := strconv.ParseUint(hexIP, 16, 32)
	return fmt.Sprintf("%d.%d.%d.%d:%d", b&0xff, b>>8&0xff, b>>16&0xff, b>>24, port)
}

// memory is a process's resident and peak resident memory in KiB.
func memory(pid int) (rss, hwm int) {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(line, ":")
		n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			hwm = n
		}
	}
	return rss, hwm
}

// testLog sends progress lines to the test log.
type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
