//go:build lab

package live

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/ladder-eks/ladder/internal/kubeport/conformance"
	"github.com/ladder-eks/ladder/internal/lab"
	"github.com/ladder-eks/ladder/internal/lab/labtest"
)

// The conformance suite against a real control plane: etcd,
// kube-apiserver, kube-controller-manager and kube-scheduler, with KWOK as
// every node's kubelet (internal/lab). Run with
//
//	go test -tags lab ./internal/kubeport/live/

func TestMain(m *testing.M) { labtest.Main(m) }

// labChunkSize is the page size of the port's lists in the suite: small,
// so that every list the suite makes, kubectl's drain's included, is
// paginated for real (Limit, then Continue) on the API server.
const labChunkSize = 2

// TestConformance runs the port's conformance suite on the lab.
func TestConformance(t *testing.T) {
	cfg := labtest.Start(t)
	pages := &pageCounter{continued: map[string]int{}}
	cfg.Wrap(pages.wrap)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run after the parallel cases have finished.
	began := time.Now()
	t.Cleanup(func() {
		t.Logf("%d cases in %s of wall time (-parallel %d)", len(conformance.CaseNames()), time.Since(began).Round(10*time.Millisecond), parallelism())
		pages.mu.Lock()
		defer pages.mu.Unlock()
		if len(pages.continued) == 0 {
			t.Errorf("no list of the suite was continued: the port's lists do not paginate (%d lists with limit=%d)", pages.limited, labChunkSize)
			return
		}
		t.Logf("lists with limit=%d: %d; continued, by resource: %v", labChunkSize, pages.limited, pages.continued)
	})
	conformance.Run(t, &labHarness{cs: cs, dyn: dyn, start: func(t *testing.T) string { return labtest.Namespace(t, cfg) }})
}

// pageCounter counts the list requests that carry a limit, and those that
// continue a list, by resource.
type pageCounter struct {
	mu        sync.Mutex
	limited   int
	continued map[string]int
}

func (c *pageCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		q := r.URL.Query()
		if r.Method == http.MethodGet && q.Get("limit") != "" {
			path := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
			c.mu.Lock()
			c.limited++
			if q.Get("continue") != "" {
				c.continued[path[len(path)-1]]++
			}
			c.mu.Unlock()
		}
		return rt.RoundTrip(r)
	})
}

// parallelism is go test's -parallel: how many cases run at once.
func parallelism() int {
	if f := flag.Lookup("test.parallel"); f != nil {
		if n, err := strconv.Atoi(f.Value.String()); err == nil {
			return n
		}
	}
	return runtime.GOMAXPROCS(0)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// labHarness gives each case a fresh namespace of the shared lab; the
// nodes a case adds are deleted when it ends.
type labHarness struct {
	cs kubernetes.Interface
	// dyn serves Patch by resource.
	dyn   dynamic.Interface
	start func(t *testing.T) string
}

// KnownDifferences: a real cluster is the reference, it has none.
func (*labHarness) KnownDifferences() map[string]string { return nil }

func (h *labHarness) NewEnv(t *testing.T) conformance.Env {
	return &labEnv{Port: New(h.cs, Options{ChunkSize: labChunkSize, Dynamic: h.dyn}), ns: h.start(t), t: t}
}

type labEnv struct {
	*Port
	ns string
	t  *testing.T
}

func (e *labEnv) Namespace() string { return e.ns }

// AddNode creates the node with KWOK's annotation, so that KWOK acts as
// its kubelet (it sets it Ready and runs its pods), and deletes it when
// the case ends.
func (e *labEnv) AddNode(ctx context.Context, node *corev1.Node) error {
	n := node.DeepCopy()
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[lab.KwokNodeAnnotation] = "fake"
	if _, err := e.cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
		return err
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := e.cs.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			e.t.Errorf("deleting node %s: %v", n.Name, err)
		}
	})
	return e.Wait(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		got, err := e.GetNode(ctx, n.Name)
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
}

func (e *labEnv) Create(ctx context.Context, obj metav1.Object) error {
	opts := metav1.CreateOptions{}
	var err error
	switch o := obj.(type) {
	case *appsv1.Deployment:
		_, err = e.cs.AppsV1().Deployments(o.Namespace).Create(ctx, o, opts)
	case *appsv1.StatefulSet:
		_, err = e.cs.AppsV1().StatefulSets(o.Namespace).Create(ctx, o, opts)
	case *appsv1.DaemonSet:
		_, err = e.cs.AppsV1().DaemonSets(o.Namespace).Create(ctx, o, opts)
	case *policyv1.PodDisruptionBudget:
		_, err = e.cs.PolicyV1().PodDisruptionBudgets(o.Namespace).Create(ctx, o, opts)
	case *corev1.Pod:
		_, err = e.cs.CoreV1().Pods(o.Namespace).Create(ctx, o, opts)
	default:
		err = fmt.Errorf("the lab harness does not create %T", obj)
	}
	return err
}

// SetPodReady writes the pod's Ready and ContainersReady conditions through
// the status subresource, as a kubelet does when a readiness probe flips.
// KWOK leaves the pod alone afterwards: its pod-ready stage only matches
// Pending pods, and the pod is Running.
func (e *labEnv) SetPodReady(ctx context.Context, namespace, name string, ready bool) error {
	p, err := e.GetPod(ctx, namespace, name)
	if err != nil {
		return err
	}
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return fmt.Errorf("pod %s/%s is %s (deleting=%v): only a Running pod that is not terminating has a readiness to set",
			namespace, name, p.Status.Phase, p.DeletionTimestamp != nil)
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	now := metav1.Now()
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{
		{Type: corev1.PodReady, Status: status, LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: status, LastTransitionTime: now},
	}}})
	if err != nil {
		return err
	}
	_, err = e.cs.CoreV1().Pods(namespace).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}
