//go:build lab

package labkarpenter

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/lab/labtest"
	"github.com/ladder-eks/ladder/internal/materialize"
	"github.com/ladder-eks/ladder/internal/rehearse"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twin/karpenter"
)

func TestMain(m *testing.M) { labtest.Main(m) }

var (
	nodePools      = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	ec2NodeClasses = schema.GroupVersionResource{Group: "karpenter.k8s.aws", Version: "v1", Resource: "ec2nodeclasses"}
)

// The karpenter-drift write-up on the lab, with Karpenter's own
// controllers, against the twin's rehearsal of the same scenario (issue
// 17's fidelity comparison, docs/fidelity.md): checkout scaled to 10
// makes Karpenter launch a node; the NodePool gets a nodes: "1" budget
// for Drifted and the EC2NodeClass the 1.31 AMI; Karpenter's disruption
// controller then replaces the nodes one at a time, and every node ends on
// the 1.31 AMI. Lab and twin must agree on the nodes before the drift, the
// most disrupting at once, the nodes replaced and the nodes after — but
// for one difference of timing: a loaded lab can bring checkout's pods to
// Karpenter's batcher in two batches, which then launch two nodes where
// the twin's one batch launches one, and the drift deletes the extra node
// without a replacement (its pods fit elsewhere, as Karpenter's drift
// simulates). The test then checks the lab against itself only.
func TestKarpenterDriftOnTheLab(t *testing.T) {
	cfg := labtest.Start(t)
	lb := labtest.Lab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	sc, err := scenario.LoadBuiltin("karpenter-drift")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := rehearse.Run(sc, rehearse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var twin *report.Group
	for i := range rep.Groups {
		if rep.Groups[i].Name == "default" {
			twin = &rep.Groups[i]
		}
	}
	if rep.Status != report.Succeeded || twin == nil {
		t.Fatalf("the twin's rehearsal: %s, group default %+v", rep.Status, twin)
	}
	// The twin's nodes before the drift: the scenario's one, and the ones
	// launched that no drift replaced.
	twinBefore := len(sc.Spec.NodeGroups[0].Karpenter.Nodes) + twin.Launched - twin.Replaced
	var out bytes.Buffer
	if err := materialize.Apply(ctx, cfg, sc, &out); err != nil {
		t.Fatalf("materialize: %v\n%s", err, out.String())
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)

	logs := lb.Dir() + "/logs/karpenter.log"
	t.Setenv("LOG_OUTPUT_PATHS", logs)
	t.Setenv("LOG_ERROR_OUTPUT_PATHS", logs)
	t.Setenv("BATCH_IDLE_DURATION", "1s")
	t.Setenv("BATCH_MAX_DURATION", "3s")
	karpCtx, stopKarpenter := context.WithCancel(ctx)
	done := make(chan error, 1)
	metricsPort, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	healthPort, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		done <- Run(karpCtx, Config{
			Kubeconfig: lb.Kubeconfig, Region: sc.Spec.Cluster.Region, Zones: sc.Spec.Cluster.Zones,
			Version: version(sc.Spec.Cluster.Version), LogLevel: "debug", Seed: 1,
			MetricsPort: metricsPort, HealthPort: healthPort,
		})
	}()
	t.Cleanup(func() {
		if t.Failed() {
			tail, _ := os.ReadFile(logs)
			lines := strings.Split(strings.TrimSpace(string(tail)), "\n")
			t.Logf("Karpenter's last log lines:\n%s", strings.Join(lines[max(0, len(lines)-40):], "\n"))
		}
		stopKarpenter()
		if err := <-done; err != nil {
			t.Errorf("Karpenter: %v", err)
		}
	})

	// The write-up's first step: checkout at 10 replicas needs a second node.
	scale := []byte(`{"spec":{"replicas":10}}`)
	if _, err := cs.AppsV1().Deployments("checkout").Patch(ctx, "checkout", types.MergePatchType, scale, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	before := waitFor(t, ctx, cs, "checkout at 10 running on Karpenter's nodes", func(nodes []corev1.Node) bool {
		// Settled: no node still being consolidated away (WhenEmpty).
		return runningPods(t, ctx, cs, "checkout", "app.kubernetes.io/name=checkout,app.kubernetes.io/component=service") == 10 && len(nodes) >= 2 && allReady(nodes) &&
			!slices.ContainsFunc(nodes, disruptedOrDeleting)
	})
	t.Logf("before the drift: %s (the twin: %d nodes)", describe(before), twinBefore)
	checkLoopbackOnly(t, metricsPort, "/metrics")
	checkLoopbackOnly(t, healthPort, "/healthz")
	asTwin := len(before) == twinBefore
	if !asTwin {
		t.Logf("FIDELITY: %d nodes before the drift, the twin %d: checkout's pods reached Karpenter's batcher in more than one batch", len(before), twinBefore)
	}
	for _, n := range before {
		if n.Annotations[karpenter.ImageIDAnnotation] != ami130 {
			t.Fatalf("node %s starts on %q, want %s", n.Name, n.Annotations[karpenter.ImageIDAnnotation], ami130)
		}
	}

	// Watch from now on: every change of the NodePool's nodes is seen.
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: karpv1.NodePoolLabelKey})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{LabelSelector: karpv1.NodePoolLabelKey, ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// Only drift disrupts: emptiness consolidation of a replacement node
	// would delete nodes without a replacement, which is not what is measured.
	budget := []byte(`{"spec":{"disruption":{"budgets":[{"nodes":"1","reasons":["Drifted"]},{"nodes":"0","reasons":["Empty","Underutilized"]}]}}}`)
	if _, err := dyn.Resource(nodePools).Patch(ctx, "default", types.MergePatchType, budget, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	ami := []byte(fmt.Sprintf(`{"spec":{"amiSelectorTerms":[{"id":%q}]}}`, ami131))
	if _, err := dyn.Resource(ec2NodeClasses).Patch(ctx, "default", types.MergePatchType, ami, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	nodes := map[string]corev1.Node{}
	for _, n := range list.Items {
		nodes[n.Name] = n
	}
	deleted := map[string]bool{} // old nodes Karpenter started deleting
	maxDisrupting := 0
	want := len(before)
	if asTwin {
		want = twin.Nodes
	}
	for !drifted(nodes, want) {
		select {
		case <-ctx.Done():
			t.Fatalf("the nodes were not replaced in time: %s", describe(sortedNodes(nodes)))
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the node watch closed")
			}
			n, isNode := ev.Object.(*corev1.Node)
			if !isNode {
				continue
			}
			if ev.Type == watch.Deleted {
				delete(nodes, n.Name)
			} else {
				nodes[n.Name] = *n
			}
		}
		disrupting := 0
		for _, n := range nodes {
			if disruptedOrDeleting(n) {
				disrupting++
			}
		}
		maxDisrupting = max(maxDisrupting, disrupting)
		if disrupting > 1 {
			t.Errorf("%d nodes disrupting at once under a nodes: \"1\" budget: %s", disrupting, describe(sortedNodes(nodes)))
		}
		// Replace before delete, where the twin replaced every node: when
		// an old node starts going, as many Ready replacements on the new
		// AMI run as old nodes have gone.
		for name, n := range nodes {
			if n.DeletionTimestamp == nil || deleted[name] || n.Annotations[karpenter.ImageIDAnnotation] != ami130 {
				continue
			}
			deleted[name] = true
			ready := 0
			for _, m := range nodes {
				if m.Annotations[karpenter.ImageIDAnnotation] == ami131 && isReady(m) && m.DeletionTimestamp == nil {
					ready++
				}
			}
			if asTwin && ready < len(deleted) {
				t.Errorf("node %s deleted with %d Ready replacements for %d deleted nodes", name, ready, len(deleted))
			}
		}
	}
	after := sortedNodes(nodes)
	t.Logf("after the drift: %s (at most %d disrupting at once)", describe(after), maxDisrupting)
	if maxDisrupting != twin.MaxConcurrentDisruptions {
		t.Errorf("at most %d nodes disrupting at once, the twin %d", maxDisrupting, twin.MaxConcurrentDisruptions)
	}
	if len(deleted) != len(before) {
		t.Errorf("%d of %d old nodes deleted", len(deleted), len(before))
	}
	if asTwin && (len(deleted) != twin.Replaced || len(after) != twin.Nodes) {
		t.Errorf("%d nodes replaced and %d after the drift; the twin: %d and %d", len(deleted), len(after), twin.Replaced, twin.Nodes)
	}
	for _, n := range after {
		if got := n.Status.NodeInfo.KubeletVersion; got != "v1.31.14-eks-ecaa3a6" {
			t.Errorf("node %s runs kubelet %s, want the 1.31 AMI's v1.31.14-eks-ecaa3a6", n.Name, got)
		}
	}
	if got := runningPods(t, ctx, cs, "checkout", "app.kubernetes.io/name=checkout,app.kubernetes.io/component=service"); got != 10 {
		t.Errorf("%d checkout pods running after the drift, want 10", got)
	}
}

// drifted reports whether the NodePool runs want nodes, all Ready, all on
// the 1.31 AMI, none going.
func drifted(nodes map[string]corev1.Node, want int) bool {
	if len(nodes) != want {
		return false
	}
	for _, n := range nodes {
		if n.Annotations[karpenter.ImageIDAnnotation] != ami131 || !isReady(n) || disruptedOrDeleting(n) {
			return false
		}
	}
	return true
}

func disruptedOrDeleting(n corev1.Node) bool {
	return n.DeletionTimestamp != nil || slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == karpv1.DisruptedTaintKey })
}

func isReady(n corev1.Node) bool {
	return slices.ContainsFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool {
		return c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
	})
}

func allReady(nodes []corev1.Node) bool {
	for _, n := range nodes {
		if !isReady(n) {
			return false
		}
	}
	return true
}

// waitFor watches the NodePool's nodes until ok holds for them.
func waitFor(t *testing.T, ctx context.Context, cs kubernetes.Interface, what string, ok func([]corev1.Node) bool) []corev1.Node {
	t.Helper()
	for {
		list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: karpv1.NodePoolLabelKey})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok(list.Items) {
			return list.Items
		}
		w, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		// Any node or pod change may satisfy ok; a pod's is seen within the
		// watch's timeout.
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		select {
		case <-w.ResultChan():
		case <-wctx.Done():
			if ctx.Err() != nil {
				cancel()
				w.Stop()
				t.Fatalf("%s: not reached: %s; %d checkout pods running; pods not running: %s", what, describe(list.Items),
					runningPods(t, context.Background(), cs, "checkout", "app.kubernetes.io/name=checkout,app.kubernetes.io/component=service"), describePods(cs))
			}
		}
		cancel()
		w.Stop()
	}
}

func runningPods(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns, selector string) int {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

func describe(nodes []corev1.Node) string {
	var out []string
	for _, n := range nodes {
		s := fmt.Sprintf("%s %s %s", n.Name, n.Labels[corev1.LabelInstanceTypeStable], n.Annotations[karpenter.ImageIDAnnotation])
		if !isReady(n) {
			s += " NotReady"
		}
		if disruptedOrDeleting(n) {
			s += " disrupting"
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// sortedNodes is the nodes in name order.
func sortedNodes(m map[string]corev1.Node) []corev1.Node {
	out := make([]corev1.Node, 0, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[name])
	}
	return out
}

// describePods is every pod that is not Running, with where it is and why.
func describePods(cs kubernetes.Interface) string {
	pods, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning {
			continue
		}
		s := fmt.Sprintf("%s/%s %s on %q", p.Namespace, p.Name, p.Status.Phase, p.Spec.NodeName)
		for _, c := range p.Status.Conditions {
			if c.Status != corev1.ConditionTrue {
				s += fmt.Sprintf(" %s=%s %s", c.Type, c.Reason, c.Message)
			}
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

// checkLoopbackOnly: Karpenter's server on port listens on 127.0.0.1 and on
// no other address (the kernel's own table of listening sockets,
// /proc/net/tcp and tcp6), and answers path with 200 there.
func checkLoopbackOnly(t *testing.T, port int, path string) {
	t.Helper()
	var addrs []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			// sl local_address rem_address st ...; st 0A is LISTEN.
			if len(f) < 4 || f[3] != "0A" {
				continue
			}
			addr, p, _ := strings.Cut(f[1], ":")
			if p == fmt.Sprintf("%04X", port) {
				addrs = append(addrs, addr)
			}
		}
	}
	if len(addrs) != 1 || addrs[0] != "0100007F" {
		t.Fatalf("port %d listens on %q (hex, as /proc/net/tcp has them), want only 127.0.0.1 (0100007F)", port, addrs)
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", port, path))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s on port %d: %s", path, port, resp.Status)
	}
}
