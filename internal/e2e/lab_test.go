//go:build lab

// Package e2e runs Ladder as a user does, on the lab: the ladder binary
// starts a lab with a scenario and its AWS endpoints (`ladder lab up
// --scenario`), and `ladder upgrade --approve` upgrades it through
// aws-sdk-go-v2 and client-go, configured by `ladder lab env`'s exports
// alone. The tests read the outcome back from the API server and the
// lab's EKS, and watch the PodDisruptionBudgets while the upgrade runs.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ladder-eks/ladder/internal/lab/labtest"
)

// ladderBin is the ladder binary TestMain builds for the package's tests.
var ladderBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ladder-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ladderBin = filepath.Join(dir, "ladder")
	build := exec.Command("go", "build", "-o", ladderBin, "github.com/ladder-eks/ladder/cmd/ladder")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building ladder:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// ladder runs the ladder binary with env and returns its exit code and
// output.
func ladder(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(ladderBin, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errb.String()
	}
	if err != nil {
		t.Fatalf("ladder %s: %v", strings.Join(args, " "), err)
	}
	return 0, out.String(), errb.String()
}

// lab is a lab started by `ladder lab up --scenario`, with the exports of
// `ladder lab env` and clients configured by them.
type lab struct {
	dir     string
	cluster string
	// env is the environment a user's shell has after eval "$(ladder lab
	// env)": the AWS endpoints, region and key, and KUBECONFIG.
	env []string
	cs  kubernetes.Interface
	eks *eks.Client
	// eksLog is what ladder commands run with env asked the lab's EKS:
	// env's AWS_ENDPOINT_URL_EKS points at this recording proxy in front
	// of it.
	eksLog *eksRecorder
}

// startLab runs `ladder lab up --scenario scenario` in a new directory and
// stops the lab when t ends.
func startLab(t *testing.T, scenario string) *lab {
	t.Helper()
	dir, err := labtest.NewDir()
	if err != nil {
		t.Fatal(err)
	}
	// The test's environment without any AWS or Kubernetes configuration
	// of its own: lab env's exports are the whole of it.
	var base []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "KUBECONFIG=") {
			base = append(base, kv)
		}
	}
	t.Cleanup(func() {
		ladder(t, base, "lab", "down", "--dir", dir)
		os.RemoveAll(dir)
	})
	began := time.Now()
	if code, out, errs := ladder(t, base, "lab", "up", "--dir", dir, "--scenario", scenario); code != 0 {
		t.Fatalf("ladder lab up: exit %d\n%s\n%s", code, out, errs)
	}
	t.Logf("ladder lab up --scenario %s: %s", filepath.Base(scenario), time.Since(began).Round(time.Millisecond))
	code, exports, errs := ladder(t, base, "lab", "env", "--dir", dir)
	if code != 0 {
		t.Fatalf("ladder lab env: exit %d: %s", code, errs)
	}
	// The exports, evaluated by a shell, are the whole configuration.
	out, err := exec.Command("sh", "-c", `eval "$1"; env`, "sh", exports).Output()
	if err != nil {
		t.Fatalf("sh: %v\n%s", err, exports)
	}
	l := &lab{dir: dir, env: base}
	vars := map[string]string{}
	for line := range strings.Lines(string(out)) {
		k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
		if strings.HasPrefix(k, "AWS_") || k == "KUBECONFIG" {
			vars[k] = v
		}
	}
	endpoint, err := url.Parse(vars["AWS_ENDPOINT_URL_EKS"])
	if err != nil || endpoint.Host == "" {
		t.Fatalf("ladder lab env exports no EKS endpoint: %q", vars["AWS_ENDPOINT_URL_EKS"])
	}
	l.eksLog = recordEKS(t, endpoint)
	vars["AWS_ENDPOINT_URL_EKS"] = l.eksLog.url
	for k, v := range vars {
		l.env = append(l.env, k+"="+v)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", vars["KUBECONFIG"])
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	l.cs = kubernetes.NewForConfigOrDie(cfg)
	l.eks = eks.NewFromConfig(aws.Config{Region: vars["AWS_REGION"],
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: vars["AWS_ACCESS_KEY_ID"], SecretAccessKey: vars["AWS_SECRET_ACCESS_KEY"]}, nil
		})}, func(o *eks.Options) { o.BaseEndpoint = aws.String(endpoint.String()) })
	list, err := l.eks.ListClusters(t.Context(), &eks.ListClustersInput{})
	if err != nil || len(list.Clusters) != 1 {
		t.Fatalf("ListClusters on the lab: %v, %v", list, err)
	}
	l.cluster = list.Clusters[0]
	return l
}

// eksRecorder is a reverse proxy in front of the lab's EKS that counts
// the requests by operation as faulty.Entry names them ("POST
// /clusters/small/updates") and keeps the update ids EKS answered them
// with: two calls that EKS answers with one update (a retry with the same
// client request token) made one update.
type eksRecorder struct {
	url     string
	mu      sync.Mutex
	calls   map[string]int
	updates map[string]map[string]bool
}

func recordEKS(t *testing.T, endpoint *url.URL) *eksRecorder {
	r := &eksRecorder{calls: map[string]int{}, updates: map[string]map[string]bool{}}
	// The proxy keeps the client's Host header, which its SigV4
	// signature covers.
	proxy := httputil.NewSingleHostReverseProxy(endpoint)
	proxy.ModifyResponse = func(resp *http.Response) error {
		op := resp.Request.Method + " " + resp.Request.URL.Path
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			return err
		}
		var answer struct {
			Update struct {
				ID string `json:"id"`
			} `json:"update"`
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.calls[op]++
		// A POST that answers an update made it (DescribeUpdate's GET
		// answers one too).
		if resp.Request.Method == http.MethodPost && json.Unmarshal(body, &answer) == nil && answer.Update.ID != "" {
			if r.updates[op] == nil {
				r.updates[op] = map[string]bool{}
			}
			r.updates[op][answer.Update.ID] = true
		}
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

// counts are the calls and the distinct updates made, by operation.
func (r *eksRecorder) counts() (calls, updates map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	updates = map[string]int{}
	for op, ids := range r.updates {
		updates[op] = len(ids)
	}
	return maps.Clone(r.calls), updates
}

// nodes are the lab's nodes by name.
func (l *lab) nodes(t *testing.T) map[string]corev1.Node {
	t.Helper()
	list, err := l.cs.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]corev1.Node{}
	for _, n := range list.Items {
		out[n.Name] = n
	}
	return out
}

// budgetWatch watches every PodDisruptionBudget and every Node while an
// upgrade runs: a budget whose disruptionsAllowed goes negative, or whose
// healthy pods fall below what it demands (an eviction granted beyond it,
// or a node deleted under a pod it protects), is a violation; each Node
// deleted is counted.
type budgetWatch struct {
	mu         sync.Mutex
	violations []string
	lowest     map[string]int32
	created    []string
	deleted    map[string]int
}

func watchBudgets(t *testing.T, l *lab) *budgetWatch {
	t.Helper()
	w := &budgetWatch{lowest: map[string]int32{}, deleted: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f := informers.NewSharedInformerFactory(l.cs, 0)
	pdbs := f.Policy().V1().PodDisruptionBudgets().Informer()
	judge := func(obj any) {
		b, ok := obj.(*policyv1.PodDisruptionBudget)
		if !ok || b.Status.ObservedGeneration < b.Generation {
			return
		}
		key := b.Namespace + "/" + b.Name
		w.mu.Lock()
		defer w.mu.Unlock()
		if low, seen := w.lowest[key]; !seen || b.Status.DisruptionsAllowed < low {
			w.lowest[key] = b.Status.DisruptionsAllowed
		}
		if b.Status.DisruptionsAllowed < 0 || b.Status.CurrentHealthy < b.Status.DesiredHealthy {
			w.violations = append(w.violations, fmt.Sprintf("%s %s: disruptionsAllowed %d, healthy %d of %d desired",
				time.Now().UTC().Format("15:04:05"), key, b.Status.DisruptionsAllowed, b.Status.CurrentHealthy, b.Status.DesiredHealthy))
		}
	}
	if _, err := pdbs.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: judge, UpdateFunc: func(_, obj any) { judge(obj) }}); err != nil {
		t.Fatal(err)
	}
	nodes := f.Core().V1().Nodes().Informer()
	if _, err := nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if n, ok := obj.(*corev1.Node); ok {
				w.mu.Lock()
				w.created = append(w.created, n.Name)
				w.mu.Unlock()
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if n, ok := obj.(*corev1.Node); ok {
				w.mu.Lock()
				w.deleted[n.Name]++
				w.mu.Unlock()
			}
		},
	}); err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), pdbs.HasSynced, nodes.HasSynced) {
		t.Fatal("watching PDBs and nodes: the caches did not sync")
	}
	return w
}

// settle waits until every PDB allows what it demands: the scenario's
// pods Ready after `lab up`, before the upgrade is judged.
func settle(t *testing.T, l *lab) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := l.cs.PolicyV1().PodDisruptionBudgets("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, b := range list.Items {
			if b.Status.ObservedGeneration < b.Generation || b.Status.CurrentHealthy < b.Status.DesiredHealthy {
				last = fmt.Sprintf("%s/%s healthy %d of %d", b.Namespace, b.Name, b.Status.CurrentHealthy, b.Status.DesiredHealthy)
				return false, nil
			}
		}
		return len(list.Items) > 0, nil
	})
	if err != nil {
		t.Fatalf("the scenario's PDBs never all held after lab up: %v (%s)", err, last)
	}
}

// podsReady waits until every pod is Running and Ready, none terminating.
func podsReady(t *testing.T, l *lab) {
	t.Helper()
	var waiting []string
	err := wait.PollUntilContextTimeout(t.Context(), time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := l.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		waiting = nil
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || !podReady(&p) {
				waiting = append(waiting, fmt.Sprintf("%s/%s %s on %q", p.Namespace, p.Name, p.Status.Phase, p.Spec.NodeName))
			}
		}
		return len(waiting) == 0, nil
	})
	if err != nil {
		t.Errorf("pods not Running and Ready after the upgrade: %v", waiting)
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
