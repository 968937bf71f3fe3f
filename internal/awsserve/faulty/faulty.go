// Package faulty is a proxy that breaks AWS calls the way networks and
// services do — throttling (429), server errors (500), a response lost
// after the service acted (the connection dropped), a slow answer past the
// client's timeout — on a fixed schedule, so that a test can show a client
// retries each with backoff and loses nothing (no update made twice, no
// item missing from a list).
package faulty

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Fault is what the proxy does to one request.
type Fault int

// Faults.
const (
	None Fault = iota
	// Throttle answers 429 with the service's throttling error; the
	// service never sees the request.
	Throttle
	// ServerError answers 500; the service never sees the request.
	ServerError
	// Drop forwards the request — the service acts on it — and closes the
	// connection without the response.
	Drop
	// Slow holds the answer past the client's timeout, then forwards.
	Slow
	// Conflict answers 409 as the Kubernetes API server answers a write
	// whose resourceVersion is stale; the server never sees the request.
	Conflict
)

func (f Fault) String() string {
	return [...]string{"none", "throttle", "server-error", "drop", "slow", "conflict"}[f]
}

// Proxy forwards to a backend handler and injects faults.
type Proxy struct {
	backend http.Handler
	// Schedule is the fault of the n-th request (counting from 0) for
	// operation op (as Entry.Operation names it).
	Schedule func(n int, op string) Fault
	// SlowFor is how long a Slow fault holds the answer.
	SlowFor time.Duration
	// Kubernetes makes the faults the Kubernetes API server's: a
	// metav1.Status body, and Retry-After on 429 and 503 as the API
	// server's priority and fairness and its unavailable answers carry it
	// (client-go retries those, and only those, by itself).
	Kubernetes bool

	mu        sync.Mutex
	n         int
	log       []Entry
	abandoned int
}

// Entry is one request the proxy saw: its operation and its fault.
type Entry struct {
	Operation string
	Fault     Fault
}

// New returns a proxy in front of backend.
func New(backend http.Handler, schedule func(n int, op string) Fault) *Proxy {
	return &Proxy{backend: backend, Schedule: schedule, SlowFor: 3 * time.Second}
}

// Log is what the proxy saw, in order.
func (p *Proxy) Log() []Entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Entry(nil), p.log...)
}

// Abandoned is how many Slow requests the client gave up before SlowFor
// ended: a client without a timeout of its own waits the hold out.
func (p *Proxy) Abandoned() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.abandoned
}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	op := operation(r, body)
	p.mu.Lock()
	f := p.Schedule(p.n, op)
	p.n++
	p.log = append(p.log, Entry{Operation: op, Fault: f})
	p.mu.Unlock()
	if p.Kubernetes {
		switch f {
		case Throttle:
			kubeStatus(w, http.StatusTooManyRequests, "TooManyRequests", "too many requests, please try again later")
			return
		case ServerError:
			kubeStatus(w, http.StatusServiceUnavailable, "ServiceUnavailable", "the server is currently unable to handle the request")
			return
		case Conflict:
			kubeStatus(w, http.StatusConflict, "Conflict", "Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again")
			return
		}
	}
	switch f {
	case Throttle:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-Errortype", "ThrottlingException")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"message":"Rate exceeded"}`)
	case ServerError:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-Errortype", "ServerException")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"message":"We encountered an internal error. Please try again."}`)
	case Drop:
		rec := httptest.NewRecorder()
		p.backend.ServeHTTP(rec, r) // the service acts
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	case Slow:
		select {
		case <-time.After(p.SlowFor):
		case <-r.Context().Done():
			p.mu.Lock()
			p.abandoned++
			p.mu.Unlock()
			return
		}
		p.backend.ServeHTTP(w, r)
	default:
		p.backend.ServeHTTP(w, r)
	}
}

// kubeStatus answers as the API server answers a refused request.
func kubeStatus(w http.ResponseWriter, code int, reason, message string) {
	w.Header().Set("Content-Type", "application/json")
	if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":%q,"code":%d}`, message, reason, code)
}

// operation names a request for the log: the X-Amz-Target (JSON
// protocols), the Action (query protocols) or the method and path
// (REST-JSON, and Kubernetes: " watch" after a watch's).
func operation(r *http.Request, body []byte) string {
	if t := r.Header.Get("X-Amz-Target"); t != "" {
		return t
	}
	if strings.Contains(r.Header.Get("Content-Type"), "x-www-form-urlencoded") {
		for _, kv := range strings.Split(string(body), "&") {
			if v, ok := strings.CutPrefix(kv, "Action="); ok {
				return v
			}
		}
	}
	if r.URL.Query().Get("watch") == "true" {
		return r.Method + " " + r.URL.Path + " watch"
	}
	return r.Method + " " + r.URL.Path
}
