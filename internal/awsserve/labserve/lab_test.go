//go:build lab

package labserve

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/ladder-eks/ladder/internal/awsserve/twinserve"
	"github.com/ladder-eks/ladder/internal/lab/labtest"
	"github.com/ladder-eks/ladder/internal/materialize"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twin/mng"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// waitUpdate polls DescribeUpdate until the update leaves InProgress.
func waitUpdate(ctx context.Context, t *testing.T, c *eks.Client, in *eks.DescribeUpdateInput) *ekstypes.Update {
	t.Helper()
	var u *ekstypes.Update
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 100*time.Second, true, func(ctx context.Context) (bool, error) {
		out, err := c.DescribeUpdate(ctx, in)
		if err != nil {
			return false, err
		}
		u = out.Update
		return u.Status != ekstypes.UpdateStatusInProgress, nil
	})
	if err != nil {
		t.Fatalf("DescribeUpdate %s: %v (last: %+v)", aws.ToString(in.UpdateId), err, u)
	}
	return u
}

// The workshop materialized into the lab, its EKS endpoints served over
// the lab's API server, and an SDK client upgrading it: the control plane
// 1.30 → 1.31, then managed node group initial in place — new KWOK nodes
// with a 1.31 kubelet and EKS's labels, the old ones cordoned and deleted,
// their pods evicted through the real Eviction API and Running again.
func TestWorkshopUpgradeOnTheLab(t *testing.T) {
	cfg := labtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	began := time.Now()
	var out bytes.Buffer
	sc, err := scenario.LoadBuiltin("workshop")
	if err == nil {
		err = materialize.Apply(ctx, cfg, sc, &out)
	}
	if err != nil {
		t.Fatalf("materialize the workshop: %v\n%s", err, out.String())
	}
	t.Logf("materialized in %s", time.Since(began).Round(time.Millisecond))
	cs := kubernetes.NewForConfigOrDie(cfg)

	var mu sync.Mutex
	var upgraded []string
	l, err := New(sc, cfg, 60, Options{UpgradeControlPlane: func(_ context.Context, v string) error {
		mu.Lock()
		defer mu.Unlock()
		upgraded = append(upgraded, v)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- l.Serve(ctx, ln, io.Discard) }()
	c := eks.NewFromConfig(aws.Config{Region: sc.Spec.Cluster.Region,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: twinserve.AccessKeyID, SecretAccessKey: twinserve.SecretAccessKey}, nil
		})}, func(o *eks.Options) { o.BaseEndpoint = aws.String("http://" + ln.Addr().String()) })
	name := aws.String(sc.Spec.Cluster.Name)

	// The control plane.
	began = time.Now()
	up, err := c.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: name, Version: aws.String("1.31")})
	if err != nil {
		t.Fatalf("UpdateClusterVersion: %v", err)
	}
	if up.Update.Status != ekstypes.UpdateStatusInProgress {
		t.Fatalf("UpdateClusterVersion: status %s, want InProgress", up.Update.Status)
	}
	if u := waitUpdate(ctx, t, c, &eks.DescribeUpdateInput{Name: name, UpdateId: up.Update.Id}); u.Status != ekstypes.UpdateStatusSuccessful {
		t.Fatalf("control-plane update ended %s: %+v", u.Status, u.Errors)
	}
	desc, err := c.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: name})
	if err != nil || aws.ToString(desc.Cluster.Version) != "1.31" {
		t.Fatalf("DescribeCluster after the update: version %v, %v", desc, err)
	}
	mu.Lock()
	if strings.Join(upgraded, ",") != "1.31" {
		t.Errorf("UpgradeControlPlane was called with %v, want [1.31]", upgraded)
	}
	mu.Unlock()
	t.Logf("control plane 1.30 → 1.31 in %s", time.Since(began).Round(time.Millisecond))

	// Managed node group initial, in place.
	sel := metav1.ListOptions{LabelSelector: mng.LabelNodegroup + "=initial"}
	before, err := cs.CoreV1().Nodes().List(ctx, sel)
	if err != nil || len(before.Items) == 0 {
		t.Fatalf("the lab's nodes of initial: %d, %v", len(before.Items), err)
	}
	old := map[string]bool{}
	for _, n := range before.Items {
		old[n.Name] = true
	}
	evicted := map[string]bool{}
	for n := range old {
		pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if !isDaemon(&p) {
				evicted[string(p.UID)] = true
			}
		}
	}
	began = time.Now()
	ng, err := c.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: name, NodegroupName: aws.String("initial")})
	if err != nil {
		t.Fatalf("UpdateNodegroupVersion: %v", err)
	}
	if u := waitUpdate(ctx, t, c, &eks.DescribeUpdateInput{Name: name, NodegroupName: aws.String("initial"), UpdateId: ng.Update.Id}); u.Status != ekstypes.UpdateStatusSuccessful {
		t.Fatalf("node group update ended %s: %+v", u.Status, u.Errors)
	}
	t.Logf("node group initial updated in %s (%d nodes, %d pods drained)", time.Since(began).Round(time.Millisecond), len(old), len(evicted))

	after, err := cs.CoreV1().Nodes().List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Items) != len(old) {
		t.Errorf("initial has %d nodes after the update, %d before", len(after.Items), len(old))
	}
	for _, n := range after.Items {
		if old[n.Name] {
			t.Errorf("old node %s is still there", n.Name)
		}
		if v := n.Status.NodeInfo.KubeletVersion; !strings.HasPrefix(v, "v1.31.") {
			t.Errorf("new node %s: kubelet %s, want v1.31.x", n.Name, v)
		}
		for _, k := range []string{"eks.amazonaws.com/nodegroup-image", "eks.amazonaws.com/capacityType", "topology.kubernetes.io/zone"} {
			if n.Labels[k] == "" {
				t.Errorf("new node %s has no label %s", n.Name, k)
			}
		}
	}
	// Every drained pod went (a StatefulSet's comes back under its name,
	// with a new UID), and its workload's pods run again.
	var waiting []string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		waiting = nil
		for _, p := range pods.Items {
			if evicted[string(p.UID)] || (p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodSucceeded) {
				waiting = append(waiting, p.Namespace+"/"+p.Name+" "+string(p.Status.Phase)+" on "+p.Spec.NodeName)
			}
		}
		return len(waiting) == 0, nil
	})
	if err != nil {
		t.Errorf("pods after the node group update: %v: %v", err, waiting)
	}
	pdbs, err := cs.PolicyV1().PodDisruptionBudgets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range pdbs.Items {
		if b.Status.DisruptionsAllowed < 0 {
			t.Errorf("PDB %s/%s: disruptionsAllowed %d", b.Namespace, b.Name, b.Status.DisruptionsAllowed)
		}
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func isDaemon(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}
