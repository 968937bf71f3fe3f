//go:build lab

package labtest

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

func TestMain(m *testing.M) { Main(m) }

// Two tests share one lab, each in its own namespace.
func TestStartSharesOneLab(t *testing.T) {
	first := Start(t)
	second := Start(t)
	if first.Host != second.Host {
		t.Errorf("two labs in one test binary: %s and %s", first.Host, second.Host)
	}
	if Lab(t).Dir() == "" {
		t.Error("Lab has no directory")
	}
}

func TestNamespace(t *testing.T) {
	cfg := Start(t)
	ns := Namespace(t, cfg)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	// A pod needs the namespace's default ServiceAccount: Namespace waited for it.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "fake-image"}}},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a pod in %s: %v", ns, err)
	}
	if other := Namespace(t, cfg); other == ns {
		t.Errorf("Namespace returned %s twice", ns)
	}
}

// A User is refused until granted, then allowed what its rules say and no
// more; its ClusterRole goes when the test ends.
func TestUser(t *testing.T) {
	cfg := Start(t)
	ns := Namespace(t, cfg)
	ctx := context.Background()
	var role string
	t.Run("grant", func(t *testing.T) {
		u := NewUser(t, cfg, ns, "viewer")
		role = u.role
		if want := "system:serviceaccount:" + ns + ":viewer"; u.Name != want {
			t.Errorf("Name = %q, want %q", u.Name, want)
		}
		cs := kubernetes.NewForConfigOrDie(u.Config)
		if _, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), u.Name) {
			t.Fatalf("listing nodes before Grant: %v, want 403 naming %s", err, u.Name)
		}
		u.Grant(rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}})
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			return err == nil, nil
		})
		if err != nil {
			t.Fatalf("listing nodes after Grant: %v", err)
		}
		if _, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("listing pods, never granted: %v, want 403", err)
		}
		u.Grant(rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}})
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			return err == nil, nil
		})
		if err != nil {
			t.Fatalf("listing pods after the second Grant: %v", err)
		}
	})
	admin := kubernetes.NewForConfigOrDie(cfg)
	if _, err := admin.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ClusterRole %s after the test: %v, want NotFound", role, err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Get(ctx, role, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ClusterRoleBinding %s after the test: %v, want NotFound", role, err)
	}
}
