package probe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestProbe: a URL that answers keeps the probe healthy; FailAfter
// failures in a row (5xx, then a closed server) make it unhealthy, naming
// the URL and the last failure; one success resets the run.
func TestProbe(t *testing.T) {
	var status atomic.Int32
	status.Store(http.StatusOK)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(int(status.Load())) }))
	defer srv.Close()
	p := &Probe{URL: srv.URL, FailAfter: 3}
	p.defaults()
	ctx := context.Background()
	for range 2 {
		p.check(ctx)
	}
	if err := p.Healthy(ctx); err != nil {
		t.Fatalf("answering: %v", err)
	}
	status.Store(http.StatusServiceUnavailable)
	p.check(ctx)
	p.check(ctx)
	if err := p.Healthy(ctx); err != nil {
		t.Fatalf("two failures of three: %v", err)
	}
	p.check(ctx)
	err := p.Healthy(ctx)
	if err == nil || !strings.Contains(err.Error(), "3 requests in a row failed") || !strings.Contains(err.Error(), "503 Service Unavailable") || !strings.Contains(err.Error(), "3 of 5 failed") {
		t.Fatalf("three failures: %v", err)
	}
	status.Store(http.StatusOK)
	p.check(ctx)
	if err := p.Healthy(ctx); err != nil {
		t.Fatalf("answering again: %v", err)
	}
	srv.Close()
	for range 3 {
		p.check(ctx)
	}
	if err := p.Healthy(ctx); err == nil || !strings.Contains(err.Error(), "connect") {
		t.Fatalf("server gone: %v", err)
	}
}
