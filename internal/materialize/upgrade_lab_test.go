//go:build lab && linux

package materialize

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/ladder-eks/ladder/internal/lab"
	"github.com/ladder-eks/ladder/internal/lab/labtest"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// A lab's control plane upgraded one minor under a materialized scenario,
// as an EKS control-plane update runs under a cluster: the server reports
// the new version, the nodes and Running pods are the same objects after
// the swap, and the new controllers and scheduler act (a Deployment scaled
// after the swap gets its pods).
func TestUpgradeControlPlaneOnTheLab(t *testing.T) {
	from, err := lab.LookupRelease("1.36")
	if err != nil {
		t.Fatal(err)
	}
	to, err := lab.LookupRelease("1.37")
	if err != nil {
		t.Fatal(err)
	}
	bins, missing, err := lab.Built(from, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Skipf("the Kubernetes %s lab binaries are not built (missing %s): run `ladder lab build --kubernetes %s` (make lab-build does)",
			from.Minor, strings.Join(missing, ", "), from.Minor)
	}
	if _, missing, _ := lab.Built(to, ""); len(missing) > 0 {
		t.Skipf("the Kubernetes %s lab binaries are not built: run `ladder lab build --kubernetes %s`", to.Minor, to.Minor)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir, err := labtest.NewDir()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	lb, err := lab.Up(ctx, lab.Options{Dir: dir, Binaries: bins, Out: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Cleanup(func() { lab.Down(context.Background(), lab.DownOptions{Dir: dir}) })
	cfg, err := lb.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.LoadBuiltin("workshop")
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(ctx, cfg, sc, &out); err != nil {
		t.Fatalf("Apply: %v\n%s", err, out.String())
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	deploy := scalable(t, ctx, cs)

	nodesBefore, podsBefore := uids(t, ctx, cs)
	if len(nodesBefore) == 0 || len(podsBefore) == 0 {
		t.Fatalf("the scenario materialized %d nodes and %d Running pods", len(nodesBefore), len(podsBefore))
	}
	began := time.Now()
	if err := lab.UpgradeControlPlane(ctx, dir, to.Minor, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Logf("control plane %s → %s in %s", from.Kubernetes, to.Kubernetes, time.Since(began).Round(100*time.Millisecond))

	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v.GitVersion, "v1.37.") {
		t.Errorf("/version says %s after the upgrade, want v1.37.x", v.GitVersion)
	}
	nodesAfter, podsAfter := uids(t, ctx, cs)
	for name, uid := range nodesBefore {
		if nodesAfter[name] != uid {
			t.Errorf("node %s: uid %s before the upgrade, %q after", name, uid, nodesAfter[name])
		}
	}
	for name, uid := range podsBefore {
		if podsAfter[name] != uid {
			t.Errorf("pod %s: Running with uid %s before the upgrade, %q Running after", name, uid, podsAfter[name])
		}
	}

	// The new kube-controller-manager and kube-scheduler act.
	if _, err := cs.AppsV1().Deployments(deploy.Namespace).Patch(ctx, deploy.Name, types.MergePatchType,
		[]byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, pollInterval, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(deploy.Namespace).Get(ctx, deploy.Name, metav1.GetOptions{})
		return err == nil && d.Status.ReadyReplicas == 3, nil
	})
	if err != nil {
		t.Errorf("the Deployment scaled to 3 after the upgrade did not get its pods: %v", err)
	}
}

// scalable creates a one-replica Deployment that fits any node of the lab.
func scalable(t *testing.T, ctx context.Context, cs kubernetes.Interface) *appsv1.Deployment {
	t.Helper()
	labels := map[string]string{"app": "after-upgrade"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "after-upgrade", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers:  []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
					Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
				},
			},
		},
	}
	d, err := cs.AppsV1().Deployments(d.Namespace).Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// uids are the nodes and the Running pods by name, with their UIDs.
func uids(t *testing.T, ctx context.Context, cs kubernetes.Interface) (nodes, pods map[string]types.UID) {
	t.Helper()
	nl, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodes, pods = map[string]types.UID{}, map[string]types.UID{}
	for _, n := range nl.Items {
		nodes[n.Name] = n.UID
	}
	for _, p := range pl.Items {
		if p.Status.Phase == corev1.PodRunning {
			pods[p.Namespace+"/"+p.Name] = p.UID
		}
	}
	return nodes, pods
}
