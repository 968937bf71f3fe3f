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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
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

// MaxBody bounds a request body: 1 MiB, far above the largest input of
// the operations served (a launch template's user data, 16 KiB encoded;
// an SSM parameter, 8 KiB), and the bound the server reads at most. A
// body declared longer is refused before a byte of it is read, with 413.
const MaxBody = 1 << 20

// unsignedPayload is the payload hash a client declares in
// X-Amz-Content-Sha256 when it signs the headers only (SigV4's
// UNSIGNED-PAYLOAD).
const unsignedPayload = "UNSIGNED-PAYLOAD"

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
	// Everything the headers decide is decided before a byte of the body
	// is read: a client without the key cannot make the server read it.
	if refusal := s.verifyHeaders(r, auth, err); refusal != nil {
		s.writeError(w, r, h, refusal.status(service), refusal.code(service), refusal.message)
		return
	}
	if r.ContentLength > MaxBody {
		s.writeError(w, r, h, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", tooLarge(r.ContentLength))
		return
	}
	// A client that declares its payload's hash (X-Amz-Content-Sha256, or
	// UNSIGNED-PAYLOAD) has its signature checked over the headers and that
	// hash first, and only then its body read; the body must then have the
	// declared hash.
	declared := r.Header.Get("X-Amz-Content-Sha256")
	if declared != "" {
		if refusal := s.verifySignature(r, auth, declared, r.ContentLength); refusal != nil {
			s.writeError(w, r, h, refusal.status(service), refusal.code(service), refusal.message)
			return
		}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		s.writeError(w, r, h, http.StatusBadRequest, "IncompleteBody", "The request body could not be read: "+err.Error())
		return
	}
	if len(body) > MaxBody {
		s.writeError(w, r, h, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", tooLarge(-1))
		return
	}
	sum := sha256.Sum256(body)
	switch hash := hex.EncodeToString(sum[:]); declared {
	case "":
		if refusal := s.verifySignature(r, auth, hash, int64(len(body))); refusal != nil {
			s.writeError(w, r, h, refusal.status(service), refusal.code(service), refusal.message)
			return
		}
	case unsignedPayload:
	default:
		if !strings.EqualFold(declared, hash) {
			s.writeError(w, r, h, sigV4Errors[service].status, (&sigV4Refusal{kind: refusedSignature}).code(service),
				"The provided 'x-amz-content-sha256' header does not match what was computed.")
			return
		}
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
	// The handler answers into a buffer under the lock; the answer is
	// written after the lock is released, so a client that never reads
	// its response holds up its own connection, not the twins' engine and
	// the other clients.
	out := &bufferedResponse{header: w.Header()}
	if s.opts.Lock != nil {
		s.opts.Lock.Lock()
	}
	func() {
		if s.opts.Lock != nil {
			defer s.opts.Lock.Unlock()
		}
		h.ServeHTTP(out, r)
	}()
	out.writeTo(w)
}

// tooLarge is the refusal of a body longer than MaxBody; n is its declared
// length, or -1 when it was found reading.
func tooLarge(n int64) string {
	if n < 0 {
		return fmt.Sprintf("The request body is larger than %d bytes, the most this endpoint accepts.", MaxBody)
	}
	return fmt.Sprintf("The request body of %d bytes is larger than %d bytes, the most this endpoint accepts.", n, MaxBody)
}

// bufferedResponse is an answer written in memory, to be sent once the
// lock is released. Its header is the real response's: setting a header
// is no I/O.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}

// writeTo sends the answer to w.
func (b *bufferedResponse) writeTo(w http.ResponseWriter) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	w.Header().Set("Content-Length", strconv.Itoa(b.body.Len()))
	w.WriteHeader(b.status)
	_, _ = w.Write(b.body.Bytes())
}

// serviceOf routes a request that carries no credential scope as
// aws-apis.md §1.6 does: X-Amz-Target is awsJson (SSM), a form POST is a
// query protocol told apart by a Version in its URL (Auto Scaling without
// one: its body is not read), anything else is EKS's REST.
func serviceOf(r *http.Request) string {
	if r.Header.Get("X-Amz-Target") != "" {
		return ServiceSSM
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") || r.URL.Query().Has("Action") {
		// The body is not read for an unsigned request: only a Version in
		// the URL tells EC2 from Auto Scaling.
		if r.URL.Query().Get("Version") == ec2Version {
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
