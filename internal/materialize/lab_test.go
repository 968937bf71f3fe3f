//go:build lab

package materialize

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/ladder-eks/ladder/internal/inventory"
	"github.com/ladder-eks/ladder/internal/lab/labtest"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// TestMain shares one lab among the package's lab tests and stops it after
// the last one.
func TestMain(m *testing.M) { labtest.Main(m) }

// The workshop materialized into a real API server: every node of the twin
// is there with its labels and kubelet, every pod Running where its
// constraints send it, and `ladder inventory` of the lab equals `ladder
// inventory --scenario workshop`.
func TestWorkshopOnTheLab(t *testing.T) {
	cfg := labtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sc, err := scenario.LoadBuiltin("workshop")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := twinbuild.Start(sc)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	began := time.Now()
	if err := Apply(ctx, cfg, sc, &out); err != nil {
		t.Fatalf("Apply: %v\n%s", err, out.String())
	}
	t.Logf("Apply took %s:\n%s", time.Since(began).Round(10*time.Millisecond), out.String())

	cs := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)

	// Nodes: the twin's, with its labels, taints and kubelet, Ready.
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]corev1.Node{}
	for _, n := range nodes.Items {
		live[n.Name] = n
	}
	for _, twin := range snap.Nodes {
		n, ok := live[twin.Name]
		if !ok {
			t.Errorf("node %s (%v) is not in the lab", twin.Name, snap.Groups[twin.Name])
			continue
		}
		for k, v := range twin.Labels {
			if n.Labels[k] != v {
				t.Errorf("%s: label %s=%q, the twin says %q", n.Name, k, n.Labels[k], v)
			}
		}
		if got, want := n.Status.NodeInfo.KubeletVersion, twin.Status.NodeInfo.KubeletVersion; got != want {
			t.Errorf("%s: kubelet %s, the twin's %s (did KWOK overwrite status.nodeInfo?)", n.Name, got, want)
		}
		if nodeNotReady(&n) != "" {
			t.Errorf("%s: %s", n.Name, nodeNotReady(&n))
		}
		for _, taint := range twin.Spec.Taints {
			found := false
			for _, lt := range n.Spec.Taints {
				found = found || (lt.Key == taint.Key && lt.Value == taint.Value && lt.Effect == taint.Effect)
			}
			if !found {
				t.Errorf("%s: taint %s lost; the lab has %v", n.Name, taint.ToString(), n.Spec.Taints)
			}
		}
	}

	// `kubectl get nodes -L karpenter.sh/nodepool`: the NodePool's node.
	karp, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "karpenter.sh/nodepool=default"})
	if err != nil || len(karp.Items) != 1 {
		t.Errorf("nodes of NodePool default: %v (err %v), want 1", len(karp.Items), err)
	}

	// The Karpenter node's NodeClaim, status included (the /status
	// subresource): what `kubectl get nodeclaims` and the inventory read.
	claims, err := dyn.Resource(schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing NodeClaims: %v", err)
	}
	if len(claims.Items) != len(snap.NodeClaims) || len(claims.Items) != 1 {
		t.Fatalf("%d NodeClaims in the lab, the twin has %d (want 1)", len(claims.Items), len(snap.NodeClaims))
	}
	nc, want := claims.Items[0], snap.NodeClaims[0]
	for field, w := range map[string]string{"nodeName": want.Node, "imageID": want.ImageID, "providerID": want.ProviderID} {
		if got, _, _ := unstructured.NestedString(nc.Object, "status", field); got != w {
			t.Errorf("NodeClaim %s: status.%s %q, want %q", nc.GetName(), field, got, w)
		}
	}
	conds, _, _ := unstructured.NestedSlice(nc.Object, "status", "conditions")
	readyCond := false
	for _, c := range conds {
		m := c.(map[string]any)
		readyCond = readyCond || (m["type"] == "Ready" && m["status"] == "True")
	}
	if !readyCond {
		t.Errorf("NodeClaim %s: conditions %v, want Ready True", nc.GetName(), conds)
	}

	// The inventories agree on every group, and the real scheduler sent
	// the pinned workloads where the twin did.
	fromLab, err := inventory.FromCluster(ctx, cs, dyn, inventory.Source{Kind: "cluster", Name: "lab"})
	if err != nil {
		t.Fatal(err)
	}
	fromTwin := inventory.FromSnapshot("workshop", snap)
	if len(fromLab.Groups) != len(fromTwin.Groups) {
		t.Fatalf("lab groups %d, twin groups %d", len(fromLab.Groups), len(fromTwin.Groups))
	}
	twinWorkloads, labWorkloads := map[inventory.Workload]string{}, map[inventory.Workload]string{}
	podsPerWorkload := func(inv *inventory.Inventory, where map[inventory.Workload]string) map[inventory.Workload]int {
		out := map[inventory.Workload]int{}
		for _, g := range inv.Groups {
			for _, w := range g.Workloads {
				out[w.Workload] += w.Pods
				where[w.Workload] += g.Name + " "
			}
		}
		return out
	}
	for i, lg := range fromLab.Groups {
		tg := fromTwin.Groups[i]
		type summary struct {
			Name                                                                          string
			Type                                                                          inventory.Type
			Nodes, Ready                                                                  int
			Zones, InstanceTypes, CapacityTypes, KubeletVersions, KubeProxyVersions, AMIs map[string]int
		}
		l := summary{lg.Name, lg.Type, lg.Nodes, lg.ReadyNodes, lg.Zones, lg.InstanceTypes, lg.CapacityTypes, lg.KubeletVersions, lg.KubeProxyVersions, lg.AMIs}
		w := summary{tg.Name, tg.Type, tg.Nodes, tg.ReadyNodes, tg.Zones, tg.InstanceTypes, tg.CapacityTypes, tg.KubeletVersions, tg.KubeProxyVersions, tg.AMIs}
		if !reflect.DeepEqual(l, w) {
			t.Errorf("group %d:\n lab  %+v\n twin %+v", i, l, w)
		}
	}
	if got, want := podsPerWorkload(fromLab, labWorkloads), podsPerWorkload(fromTwin, twinWorkloads); !reflect.DeepEqual(got, want) {
		t.Errorf("pods per workload:\n lab  %v\n twin %v", got, want)
	}
	for _, w := range []inventory.Workload{
		{Namespace: "orders", Kind: "Deployment", Name: "orders"},
		{Namespace: "orders", Kind: "Deployment", Name: "orders-mysql"},
		{Namespace: "checkout", Kind: "Deployment", Name: "checkout"},
		{Namespace: "checkout", Kind: "Deployment", Name: "checkout-redis"},
		{Namespace: "assets", Kind: "Deployment", Name: "assets"},
		{Namespace: "karpenter", Kind: "Deployment", Name: "karpenter"},
	} {
		if labWorkloads[w] != twinWorkloads[w] {
			t.Errorf("%v runs on %q in the lab, on %q in the twin", w, labWorkloads[w], twinWorkloads[w])
		}
	}
	// DaemonSets: one pod per EC2 node of each group, none on Fargate.
	for _, g := range fromLab.Groups {
		for _, w := range g.Workloads {
			if w.Kind == "DaemonSet" && (g.Type == inventory.Fargate || w.Pods != g.Nodes) {
				t.Errorf("%s (%s): %d pods of DaemonSet %s on %d nodes", g.Name, g.Type, w.Pods, w.Name, g.Nodes)
			}
		}
	}
	// orders-mysql's volume is in its node's zone: kube-scheduler honoured
	// the PV's node affinity.
	pods, err := cs.CoreV1().Pods("orders").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=mysql"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("orders-mysql pods: %d (err %v)", len(pods.Items), err)
	}
	var zone string
	for _, v := range snap.Volumes {
		if v.Claim.Name == "orders-mysql-data" {
			zone = v.Zone
		}
	}
	if got := live[pods.Items[0].Spec.NodeName].Labels[corev1.LabelTopologyZone]; got != zone {
		t.Errorf("orders-mysql runs in %s, its volume is in %s", got, zone)
	}

	// Applying again changes nothing and succeeds.
	out.Reset()
	if err := Apply(ctx, cfg, sc, &out); err != nil {
		t.Fatalf("second Apply: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "11 already existed") {
		t.Errorf("second Apply:\n%s", out.String())
	}
}
