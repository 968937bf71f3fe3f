package labserve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ladder-eks/ladder/internal/awsserve"
	"github.com/ladder-eks/ladder/internal/materialize"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// materialized returns the workshop scenario and a fake API server holding
// its nodes as materialize creates them, but for those skip names.
func materialized(t *testing.T, skip map[string]bool) (*scenario.Scenario, *fake.Clientset, []string) {
	t.Helper()
	var snap *twinbuild.Snapshot
	sc, err := scenario.LoadBuiltin("workshop")
	if err == nil {
		snap, err = twinbuild.Start(sc)
	}
	if err != nil {
		t.Fatal(err)
	}
	cs := fake.NewSimpleClientset()
	var managed []string
	for _, n := range snap.Nodes {
		if snap.Groups[n.Name].Name == "initial" {
			managed = append(managed, n.Name)
		}
		if skip[n.Name] {
			continue
		}
		if _, err := cs.CoreV1().Nodes().Create(context.Background(), materialize.KWOKNode(n), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(managed) == 0 {
		t.Fatal("the workshop has no node in managed group initial")
	}
	return sc, cs, managed
}

// The endpoints adopt the nodes materialize created by the names the twin
// gives them, and answer the health check before adoption is done.
func TestRunAdoptsTheMaterializedNodes(t *testing.T) {
	sc, cs, managed := materialized(t, nil)
	l := newLab(sc, cs, 60, Options{AdoptPoll: time.Millisecond})
	rec := httptest.NewRecorder()
	l.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, awsserve.HealthPath, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("health check before adoption: %d", rec.Code)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go l.Run(ctx, time.Hour)
	if err := l.Err(); err != nil {
		t.Fatalf("adoption: %v", err)
	}
	l.twin.Locked(func() {
		vs := l.kube.Kubelets()
		for _, n := range managed {
			if vs[n] == "" {
				t.Errorf("node %s of group initial has no kubelet version in the lab", n)
			}
		}
	})
}

// A node the lab does not have keeps adoption waiting; when the wait ends,
// the error names it and the requests are refused with it.
func TestRunNamesTheNodeTheLabLacks(t *testing.T) {
	_, _, managed := materialized(t, nil)
	missing := managed[len(managed)-1]
	sc, cs, _ := materialized(t, map[string]bool{missing: true})
	l := newLab(sc, cs, 60, Options{AdoptPoll: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	go l.Run(ctx, time.Hour)
	err := l.Err()
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("adoption error = %v, want one naming %s", err, missing)
	}
	rec := httptest.NewRecorder()
	l.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("request after a failed adoption: %d, want 503", rec.Code)
	}
}
