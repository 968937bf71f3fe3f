package live

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// slowServer answers as an API server would, except that the first hold
// requests of each "METHOD path" get no answer until the client gives
// them up. It counts the requests it saw.
type slowServer struct {
	hold int

	mu   sync.Mutex
	seen map[string]int
}

func (s *slowServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Read the body first: the server notices a client that gave up
	// only once it has the whole request.
	io.Copy(io.Discard, r.Body)
	op := r.Method + " " + r.URL.Path
	if r.URL.Query().Get("watch") != "" {
		op += " watch"
	}
	s.mu.Lock()
	n := s.seen[op]
	s.seen[op]++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasSuffix(op, " watch"):
		// A watch that is quiet for longer than the bound, then sends an
		// event: the bound must not have cut it.
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-time.After(600 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		node := corev1.Node{TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "late", ResourceVersion: "2"}}
		raw, _ := json.Marshal(node)
		fmt.Fprintf(w, `{"type":"ADDED","object":%s}`+"\n", raw)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	case n < s.hold:
		<-r.Context().Done()
	case r.Method == http.MethodGet:
		fmt.Fprint(w, `{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"ip-10-0-0-1"}}]}`)
	default:
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"kind":"Node","apiVersion":"v1","metadata":{"name":"ip-10-0-0-2"}}`)
	}
}

func (s *slowServer) count(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[op]
}

func boundClient(t *testing.T, s *slowServer, timeout time.Duration) kubernetes.Interface {
	t.Helper()
	s.seen = map[string]int{}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg := &rest.Config{Host: srv.URL, Timeout: time.Hour}
	BoundRequests(cfg, timeout)
	if cfg.Timeout != 0 {
		t.Fatalf("cfg.Timeout = %s, want 0: the bound is per attempt, not per call", cfg.Timeout)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// A read the server does not answer in time is made again, and the
// answer to the next attempt is the call's.
func TestBoundRequestsRetriesASlowRead(t *testing.T) {
	s := &slowServer{hold: 1}
	cs := boundClient(t, s, 200*time.Millisecond)
	nodes, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list after one slow attempt: %v", err)
	}
	if len(nodes.Items) != 1 || nodes.Items[0].Name != "ip-10-0-0-1" {
		t.Errorf("nodes %+v", nodes.Items)
	}
	if n := s.count("GET /api/v1/nodes"); n != 2 {
		t.Errorf("the server saw %d lists, want 2: one given up, one answered", n)
	}
}

// A read that gets no answer in any attempt fails after RequestAttempts,
// saying what to do.
func TestBoundRequestsGivesUp(t *testing.T) {
	s := &slowServer{hold: 100}
	cs := boundClient(t, s, 100*time.Millisecond)
	_, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("no answer to any of %d attempts within 100ms each", RequestAttempts)) ||
		!strings.Contains(err.Error(), "--request-timeout") {
		t.Fatalf("error %v, want no answer to %d attempts naming --request-timeout", err, RequestAttempts)
	}
	if n := s.count("GET /api/v1/nodes"); n != RequestAttempts {
		t.Errorf("the server saw %d lists, want %d", n, RequestAttempts)
	}
}

// A write without an answer is not made again: it may have been stored.
func TestBoundRequestsDoesNotRepeatAWrite(t *testing.T) {
	s := &slowServer{hold: 1}
	cs := boundClient(t, s, 100*time.Millisecond)
	_, err := cs.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-2"}}, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "no answer within 100ms") {
		t.Fatalf("error %v, want no answer within 100ms", err)
	}
	if n := s.count("POST /api/v1/nodes"); n != 1 {
		t.Errorf("the server saw %d creates, want 1", n)
	}
}

// A watch is not bounded: an event after a quiet spell longer than the
// bound arrives.
func TestBoundRequestsLeavesWatchesAlone(t *testing.T) {
	s := &slowServer{}
	cs := boundClient(t, s, 100*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok || ev.Type != watch.Added || ev.Object.(*corev1.Node).Name != "late" {
			t.Fatalf("event %v %+v (open %v), want the late node added", ev.Type, ev.Object, ok)
		}
	case <-ctx.Done():
		t.Fatal("no event")
	}
}

// Zero leaves the requests unbounded and the transport as it was.
func TestBoundRequestsZero(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1", Timeout: time.Minute}
	BoundRequests(cfg, 0)
	if cfg.Timeout != 0 || cfg.WrapTransport != nil {
		t.Errorf("cfg.Timeout %s, WrapTransport set %v: want neither", cfg.Timeout, cfg.WrapTransport != nil)
	}
}
