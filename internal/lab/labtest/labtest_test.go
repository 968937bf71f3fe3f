//go:build lab

package labtest

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
