// Package awsserve is the AWS side of the wire: one http.Handler that
// answers EKS (restJson1), Auto Scaling (awsQuery), EC2 (ec2Query) and SSM
// (awsJson1_1) requests as AWS does, over any implementation of the AWS
// ports (internal/awsport) — the twins in tests, the lab's cluster behind
// its endpoints. aws-sdk-go-v2, boto3 and the AWS CLI pointed at it
// (aws-apis.md §1.8) get AWS's shapes, status codes and typed errors.
//
// Requests are signed with SigV4 as the SDKs sign them, and the server
// checks the signature against its own dummy credentials (aws-apis.md
// §1.7), so a client that forgot to sign, or signs for another account,
// fails here as it would against AWS.
package awsserve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The services' signing names (aws-apis.md §1.1), the keys of New's
// handlers.
const (
	ServiceEKS         = "eks"
	ServiceAutoScaling = "autoscaling"
	ServiceEC2         = "ec2"
	ServiceSSM         = "ssm"
)

// Options are a server's account and clock.
type Options struct {
	// AccessKeyID and SecretAccessKey are the only credentials the server
	// accepts.
	AccessKeyID, SecretAccessKey string
	// Region, if set, is the only region a request may be signed for.
	Region string
	// Now is the clock the signature's date is checked against; the wall
	// clock when nil. The twin's virtual clock has nothing to do with it:
	// clients sign with the wall clock.
	Now func() time.Time
	// Lock, if set, is held around every call into a service handler, for
	// ports that are not safe for concurrent use (the twins: one engine,
	// one goroutine at a time).
	Lock sync.Locker
	// Policy, if set, is the caller's IAM policy: a request for an action
	// it does not allow is refused as the service refuses it, after the
	// signature is checked, as AWS orders the two.
	Policy *Policy
}

// HealthPath answers GET with 200 "ok" and no signature: how a process
// supervisor (the lab) asks whether the endpoints are up without holding
// the dummy credentials. No AWS operation is served at it.
const HealthPath = "/healthz"

// maxSkew is how far a request's signing time may be from the server's
// clock: SigV4's 15 minutes, after which AWS answers "Signature expired".
const maxSkew = 15 * time.Minute

// maxBody bounds a request body the server reads to check its signature.
const maxBody = 8 << 20

// Server routes each request to its service's handler.
type Server struct {
	handlers map[string]http.Handler
	opts     Options
	requests atomic.Uint64
}

// An ErrorWriter is a service handler that writes an error in its own
// protocol: the server answers refused signatures and unknown services
// with it, so that the SDK of that service decodes them (Auto Scaling's
// XML ErrorResponse, EC2's Response/Errors, the JSON protocols'
// X-Amzn-ErrorType). A handler that is not one gets restJson1's shape.
type ErrorWriter interface {
	WriteError(w http.ResponseWriter, r *http.Request, status int, code, message string)
}

// New returns a server that answers each service named in handlers
// ("eks", "autoscaling", "ec2", "ssm") with its handler, once the request's
// signature holds.
func New(handlers map[string]http.Handler, opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Server{handlers: handlers, opts: opts}
}

// SetPolicy makes p the caller's IAM policy (Options.Policy); nil allows
// every action. Call it before the server answers its first request.
func (s *Server) SetPolicy(p *Policy) { s.opts.Policy = p }

type requestIDKey struct{}

// RequestID is the id the server gave the request, which it also sends as
// x-amzn-RequestId: a handler whose protocol puts it in the body (awsQuery's
// ResponseMetadata, ec2Query's requestId) uses the same.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// ServeHTTP checks the request's signature and hands it to its service.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == HealthPath && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		// Before the lock: a busy engine is still a running server.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok")
		return
	}
	// Request ids count requests: unique per server, and the same on every
	// run of a test.
	id := fmt.Sprintf("00000000-0000-4000-8000-%012x", s.requests.Add(1))
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
	w.Header().Set("x-amzn-RequestId", id)
	// Date is the server's clock, from which the SDKs correct their own
	// when a signature is refused for skew.
	w.Header().Set("Date", s.opts.Now().UTC().Format(http.TimeFormat))

	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		http.Error(w, "request body unreadable or larger than 8 MiB", http.StatusRequestEntityTooLarge)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))

	auth, err := parseAuthorization(r.Header.Get("Authorization"))
	service := auth.service
	if service == "" {
		service = serviceOf(r)
	}
	h, known := s.handlers[service]
	if !known {
		s.writeError(w, r, nil, http.StatusBadRequest, "UnknownServiceException",
			fmt.Sprintf("Credential should be scoped to a service this endpoint serves (%s), not %q.", strings.Join(s.services(), ", "), service))
		return
	}
	if refusal := s.verify(r, body, auth, err); refusal != nil {
		s.writeError(w, r, h, refusal.status(service), refusal.code(service), refusal.message)
		return
	}
	if s.opts.Policy != nil {
		if op, ok := h.(Operator); ok {
			if action := service + ":" + op.Operation(r, body); !s.opts.Policy.Allows(action) {
				status, code, message := accessDenied(service, action)
				s.writeError(w, r, h, status, code, message)
				return
			}
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if s.opts.Lock != nil {
		s.opts.Lock.Lock()
		defer s.opts.Lock.Unlock()
	}
	h.ServeHTTP(w, r)
}

// serviceOf routes a request that carries no credential scope as
// aws-apis.md §1.6 does: X-Amz-Target is awsJson (SSM), a form POST is a
// query protocol told apart by its Version, anything else is EKS's REST.
func serviceOf(r *http.Request) string {
	if r.Header.Get("X-Amz-Target") != "" {
		return ServiceSSM
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		if err := r.ParseForm(); err == nil && r.PostForm.Get("Version") == "2016-11-15" {
			return ServiceEC2
		}
		return ServiceAutoScaling
	}
	return ServiceEKS
}

func (s *Server) services() []string {
	var out []string
	for name := range s.handlers {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// writeError answers in h's protocol when h is an ErrorWriter, else in
// restJson1's.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, h http.Handler, status int, code, message string) {
	if ew, ok := h.(ErrorWriter); ok {
		ew.WriteError(w, r, status, code, message)
		return
	}
	restJSON1.writeErrorCode(w, status, code, message)
}
