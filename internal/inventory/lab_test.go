//go:build lab

package inventory

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ladder-eks/ladder/internal/lab/labtest"
)

// TestMain shares one lab among the package's lab tests and stops it after
// the last one.
func TestMain(m *testing.M) { labtest.Main(m) }

// Against a real API server with RBAC: a user who may list nodes but not
// pods gets the one-line "forbidden" error naming the resource and the fix;
// granted list on nodes, pods and replicasets only — no nodeclaims, and no
// Karpenter CRD in the cluster — the inventory works; a token the server
// does not know is a 401 with what to do.
func TestRBACOnTheLab(t *testing.T) {
	cfg := labtest.Start(t)
	ns := labtest.Namespace(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := kubernetes.NewForConfigOrDie(cfg)

	viewer := labtest.NewUser(t, cfg, ns, "viewer")
	clients := func(c *rest.Config) (kubernetes.Interface, dynamic.Interface) {
		return kubernetes.NewForConfigOrDie(c), dynamic.NewForConfigOrDie(c)
	}
	viewer.Grant(rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}})

	// A pod owned by a ReplicaSet, so the inventory must list replicasets.
	if _, err := admin.AppsV1().Deployments(ns).Create(ctx, deployment("web", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	cs, dyn := clients(viewer.Config)
	user := viewer.Name
	// RBAC changes reach the authorizer through its informers: wait until
	// the binding lets nodes be listed.
	var lastErr error
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, lastErr = FromCluster(ctx, cs, dyn, Source{Kind: "cluster", Name: "lab"})
		return lastErr != nil && strings.Contains(lastErr.Error(), "list pods"), nil
	})
	want := `forbidden to list pods at the cluster scope: pods is forbidden: User "` + user + `" cannot list resource "pods" in API group "" at the cluster scope (grant the verb list on pods in every namespace; check with: kubectl auth can-i list pods --all-namespaces)`
	if lastErr == nil || lastErr.Error() != want {
		t.Errorf("with list on nodes only:\n got %v\nwant %s", lastErr, want)
	}

	viewer.Grant(
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: []string{"list"}},
		rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"replicasets"}, Verbs: []string{"list"}},
	)
	// Until the new rules reach the authorizer and the Deployment's pod
	// exists: then it is counted as the Deployment's, not its ReplicaSet's.
	web := Workload{Namespace: ns, Kind: "Deployment", Name: "web"}
	var inv *Inventory
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		inv, lastErr = FromCluster(ctx, cs, dyn, Source{Kind: "cluster", Name: "lab"})
		return lastErr == nil && podsOf(inv, web) > 0, nil
	})
	if lastErr != nil {
		t.Fatalf("with list on nodes, pods and replicasets: %v", lastErr)
	}
	if got := podsOf(inv, web); got != 1 {
		t.Errorf("Deployment %s/web has %d pods in the inventory, want 1: %+v", ns, got, inv)
	}

	bad := rest.CopyConfig(viewer.Config)
	bad.BearerToken = "not-a-token"
	cs, dyn = clients(bad)
	_, err := FromCluster(ctx, cs, dyn, Source{})
	if want := "listing nodes: the API server refused the credentials (401 Unauthorized): refresh them (for EKS: aws eks update-kubeconfig --name CLUSTER) or pick another --context"; err == nil || err.Error() != want {
		t.Errorf("unknown token: %v, want %s", err, want)
	}
}

// podsOf counts a workload's pods, on nodes or pending.
func podsOf(inv *Inventory, w Workload) int {
	n := 0
	for _, g := range inv.Groups {
		for _, wp := range g.Workloads {
			if wp.Workload == w {
				n += wp.Pods
			}
		}
	}
	for _, wp := range inv.Unscheduled {
		if wp.Workload == w {
			n += wp.Pods
		}
	}
	return n
}

func deployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "nginx:1.27"}}},
			},
		},
	}
}
