//go:build lab

package live

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/lab/labtest"
)

// TestPermissionErrorsAreTheAPIServers: every method of the live port,
// called by an identity RBAC refuses, returns the API server's 403 itself
// (the *apierrors.StatusError client-go returns, not an error wrapping
// it); Drain keeps kubectl's message and still answers
// apierrors.IsForbidden when the refusal is an eviction.
func TestPermissionErrorsAreTheAPIServers(t *testing.T) {
	cfg := labtest.Start(t)
	ns := labtest.Namespace(t, cfg)
	admin, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	// A node of this test's with one Deployment pod on it.
	env := &labEnv{Port: New(admin, Options{}), ns: ns, t: t}
	node := ns + "-n0"
	if err := env.AddNode(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{"conformance.ladder.dev/node": node}}}); err != nil {
		t.Fatal(err)
	}
	one := int32(1)
	labels := map[string]string{"app": "web"}
	if err := env.Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"conformance.ladder.dev/node": node},
					Containers:   []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
				},
			},
		},
	}); err != nil {
		t.Fatal(err)
	}
	var pod string
	err = env.Wait(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := env.ListPods(ctx, kubeport.PodQuery{Namespace: ns, Node: node})
		if err != nil || len(pods) != 1 || pods[0].Status.Phase != corev1.PodRunning {
			return false, err
		}
		pod = pods[0].Name
		return true, nil
	})
	if err != nil {
		t.Fatalf("waiting for web's pod to run on %s: %v", node, err)
	}

	// as returns the port of a new ServiceAccount granted rules on the
	// whole cluster, once RBAC lets it make its first allowed call.
	as := func(name string, rules []rbacv1.PolicyRule, allowed func(*Port) error) *Port {
		t.Helper()
		u := labtest.NewUser(t, cfg, ns, name)
		if len(rules) > 0 {
			u.Grant(rules...)
		}
		cs, err := kubernetes.NewForConfig(u.Config)
		if err != nil {
			t.Fatal(err)
		}
		p := New(cs, Options{})
		if allowed != nil {
			var last error
			err := p.Wait(ctx, 30*time.Second, func(context.Context) (bool, error) {
				last = allowed(p)
				return last == nil, nil
			})
			if err != nil {
				t.Fatalf("%s: its granted rights do not take effect: %v (last: %v)", name, err, last)
			}
		}
		return p
	}
	user := func(name string) string { return fmt.Sprintf("User %q", "system:serviceaccount:"+ns+":"+name) }

	// forbidden checks that err is the API server's 403 itself, refusing
	// who the verb on the resource.
	forbidden := func(who, call string, err error, verb, resource string) {
		t.Helper()
		st, ok := err.(*apierrors.StatusError)
		if !ok {
			t.Errorf("%s %s: want the *apierrors.StatusError itself, got %T: %v", who, call, err, err)
			return
		}
		want := fmt.Sprintf("%s cannot %s resource %q", user(who), verb, resource)
		if st.ErrStatus.Code != 403 || st.ErrStatus.Reason != metav1.StatusReasonForbidden || !strings.Contains(st.ErrStatus.Message, want) {
			t.Errorf("%s %s: want 403 Forbidden %q, got %d %s %q", who, call, want, st.ErrStatus.Code, st.ErrStatus.Reason, st.ErrStatus.Message)
		}
	}

	nodeRead := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list"}}
	nodeWrite := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "patch"}}
	podRead := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}

	t.Run("no rights", func(t *testing.T) {
		p := as("nobody", nil, nil)
		_, err := p.GetNode(ctx, node)
		forbidden("nobody", "GetNode", err, "get", "nodes")
		_, err = p.ListNodes(ctx)
		forbidden("nobody", "ListNodes", err, "list", "nodes")
		_, err = p.GetPod(ctx, ns, pod)
		forbidden("nobody", "GetPod", err, "get", "pods")
		_, err = p.ListPods(ctx, kubeport.PodQuery{Node: node})
		forbidden("nobody", "ListPods", err, "list", "pods")
		_, err = p.ListPDBs(ctx, ns)
		forbidden("nobody", "ListPDBs", err, "list", "poddisruptionbudgets")
		_, err = p.ListDeployments(ctx, ns)
		forbidden("nobody", "ListDeployments", err, "list", "deployments")
		_, err = p.ListStatefulSets(ctx, "")
		forbidden("nobody", "ListStatefulSets", err, "list", "statefulsets")
		_, err = p.ListDaemonSets(ctx, ns)
		forbidden("nobody", "ListDaemonSets", err, "list", "daemonsets")
		forbidden("nobody", "Evict", p.Evict(ctx, ns, pod), "create", "pods/eviction")
		forbidden("nobody", "DeletePod", p.DeletePod(ctx, ns, pod, nil), "delete", "pods")
		forbidden("nobody", "Drain", p.Drain(ctx, node, kubeport.DrainOptions{}), "get", "nodes")
	})

	t.Run("read nodes and pods", func(t *testing.T) {
		p := as("reader", []rbacv1.PolicyRule{nodeRead, podRead}, func(p *Port) error { _, err := p.GetNode(ctx, node); return err })
		forbidden("reader", "Cordon", p.Cordon(ctx, node), "patch", "nodes")
		_, err := p.PatchNode(ctx, node, kubeport.NodePatch{Labels: map[string]*string{"example.com/x": nil}})
		forbidden("reader", "PatchNode", err, "update", "nodes")
		forbidden("reader", "Drain", p.Drain(ctx, node, kubeport.DrainOptions{}), "patch", "nodes")
		// Uncordon writes only when the node is cordoned (kubectl's
		// CordonHelper.UpdateIfRequired).
		if err := env.Cordon(ctx, node); err != nil {
			t.Fatal(err)
		}
		forbidden("reader", "Uncordon", p.Uncordon(ctx, node), "patch", "nodes")
	})

	t.Run("cordon but not list pods", func(t *testing.T) {
		p := as("cordoner", []rbacv1.PolicyRule{nodeWrite}, func(p *Port) error { _, err := p.GetNode(ctx, node); return err })
		// The node is cordoned already, so the drain goes on to kubectl's
		// GetPodsForDeletion, which lists the node's pods across
		// namespaces; RunNodeDrain aggregates its single error.
		forbidden("cordoner", "Drain", p.Drain(ctx, node, kubeport.DrainOptions{}), "list", "pods")
	})

	t.Run("drain but not evict", func(t *testing.T) {
		p := as("drainer", []rbacv1.PolicyRule{nodeWrite, podRead}, func(p *Port) error {
			_, err := p.ListPods(ctx, kubeport.PodQuery{Node: node})
			return err
		})
		err := p.Drain(ctx, node, kubeport.DrainOptions{})
		// kubectl's message, word for word...
		refusal := fmt.Sprintf(`pods %q is forbidden: %s cannot create resource "pods/eviction" in API group "" in the namespace %q`, pod, user("drainer"), ns)
		want := fmt.Sprintf("error when evicting pods/%q -n %q: %s", pod, ns, refusal)
		if err == nil || err.Error() != want {
			t.Fatalf("Drain without pods/eviction:\n  want %q\n  got  %v", want, err)
		}
		// ... that unwraps to the API server's 403.
		var st *apierrors.StatusError
		if !apierrors.IsForbidden(err) || !errors.As(err, &st) || st.ErrStatus.Message != refusal {
			t.Errorf("Drain without pods/eviction: apierrors.IsForbidden = %v, errors.As StatusError = %v; want true and the 403 %q",
				apierrors.IsForbidden(err), st, refusal)
		}
		if got, _ := env.GetPod(ctx, ns, pod); got == nil || got.DeletionTimestamp != nil {
			t.Errorf("pod %s should be untouched after a drain refused its eviction", pod)
		}
	})
}
