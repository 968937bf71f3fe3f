package journal

import (
	"context"
	"io"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ladder-eks/ladder/internal/executor"
)

// TestClusterJournalSurvivesTransientErrors: a write of the journal
// refused for a stale resourceVersion (409), throttled (429), refused while
// the API server is unavailable (503), or whose answer was lost after the
// server stored it (the connection closed) is made again, and the record
// ends written once, whole; a refusal that is not transient (403) is
// returned at once.
func TestClusterJournalSurvivesTransientErrors(t *testing.T) {
	gr := corev1.Resource("configmaps")
	saved := saveBackoff
	saveBackoff.Duration = time.Millisecond
	t.Cleanup(func() { saveBackoff = saved })
	for name, fault := range map[string]func(cs *fake.Clientset, action k8stesting.Action) error{
		"conflict":  func(*fake.Clientset, k8stesting.Action) error { return apierrors.NewConflict(gr, Name, nil) },
		"throttled": func(*fake.Clientset, k8stesting.Action) error { return apierrors.NewTooManyRequests("slow down", 1) },
		"unavailable": func(*fake.Clientset, k8stesting.Action) error {
			return apierrors.NewServiceUnavailable("etcd leader changed")
		},
		"answer-lost": func(cs *fake.Clientset, a k8stesting.Action) error {
			// The server stores the write; its answer never arrives.
			obj := a.(k8stesting.UpdateAction).GetObject()
			if err := cs.Tracker().Update(a.GetResource(), obj, Namespace); err != nil {
				t.Fatal(err)
			}
			return io.ErrUnexpectedEOF
		},
	} {
		t.Run(name, func(t *testing.T) {
			cs := fake.NewSimpleClientset()
			j, err := OpenCluster(context.Background(), cs, "prod", "1.31", ClusterOptions{Identity: "laptop/1", Renew: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			if err := j.Put("1.31/pre-checks", executor.Entry{State: executor.StepDone, At: t0}); err != nil {
				t.Fatal(err)
			}
			failures := 2
			cs.PrependReactor("update", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if failures == 0 {
					return false, nil, nil
				}
				failures--
				return true, nil, fault(cs, a)
			})
			if err := j.Put("1.31/control-plane", executor.Entry{State: executor.StepDone, At: t0}); err != nil {
				t.Fatalf("Put through two %s failures: %v", name, err)
			}
			rec, err := ReadCluster(context.Background(), cs)
			if err != nil || rec == nil {
				t.Fatal(rec, err)
			}
			if _, ok := rec.Entries["1.31/control-plane"]; !ok || len(rec.Entries) != 2 {
				t.Errorf("the ConfigMap holds %v, want both entries", rec.Keys())
			}
		})
	}

	cs := fake.NewSimpleClientset()
	j, err := OpenCluster(context.Background(), cs, "prod", "1.31", ClusterOptions{Identity: "laptop/1", Renew: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	calls := 0
	cs.PrependReactor("create", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		return true, nil, apierrors.NewForbidden(gr, Name, nil)
	})
	if err := j.Put("1.31/pre-checks", executor.Entry{State: executor.StepDone, At: t0}); err == nil || calls != 1 {
		t.Errorf("a forbidden write: %v after %d calls, want it returned after one", err, calls)
	}
}
