package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"k8s.io/client-go/rest"
)

// RequestAttempts is how many times a read the API server does not answer
// in time is made: client-go retries a 429 or 503 with Retry-After and a
// read whose connection dropped by itself, never one that timed out.
const RequestAttempts = 3

// errAttemptTimeout cancels an attempt that had no answer in time.
var errAttemptTimeout = errors.New("no answer in time")

// BoundRequests bounds each request of cfg's clients to the API server to
// timeout and makes a read (GET) that timed out again, up to
// RequestAttempts in all, a second and then two apart — as the AWS SDK
// retries an attempt past its timeout. A write that timed out is not
// made again here: it may have been stored, and only its caller knows
// whether repeating it is safe (the journal re-reads before it writes
// again; a cordon or an eviction is the same twice). A watch is not
// bounded: it streams until the server ends it, and its informer or
// caller watches again. timeout ≤ 0 leaves the requests unbounded.
//
// It replaces cfg.Timeout (http.Client.Timeout), which would bound the
// retries together and cut every watch.
func BoundRequests(cfg *rest.Config, timeout time.Duration) {
	cfg.Timeout = 0
	if timeout <= 0 {
		return
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &attemptTimeout{rt: rt, timeout: timeout, backoff: time.Second}
	})
}

type attemptTimeout struct {
	rt      http.RoundTripper
	timeout time.Duration
	backoff time.Duration
}

func (a *attemptTimeout) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1" {
		return a.rt.RoundTrip(req)
	}
	read := req.Method == http.MethodGet || req.Method == http.MethodHead
	wait := a.backoff
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithCancelCause(req.Context())
		timer := time.AfterFunc(a.timeout, func() { cancel(errAttemptTimeout) })
		resp, err := a.rt.RoundTrip(req.WithContext(ctx))
		if err == nil {
			// The bound goes on while the body is read, as
			// http.Client.Timeout's does.
			resp.Body = &boundBody{ReadCloser: resp.Body, stop: func() { timer.Stop(); cancel(nil) }}
			return resp, nil
		}
		timer.Stop()
		timedOut := errors.Is(context.Cause(ctx), errAttemptTimeout) && req.Context().Err() == nil
		cancel(nil)
		if !timedOut {
			return nil, err
		}
		if !read || attempt == RequestAttempts {
			what := "no answer"
			if attempt > 1 {
				what = fmt.Sprintf("no answer to any of %d attempts", attempt)
			}
			return nil, fmt.Errorf("%s %s: %s within %s each: the API server or the network is too slow (raise --request-timeout if it is only slow)", req.Method, req.URL.Redacted(), what, a.timeout)
		}
		select {
		case <-time.After(wait):
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
		wait *= 2
	}
}

// boundBody ends its attempt's bound when the body is closed.
type boundBody struct {
	io.ReadCloser
	stop func()
}

func (b *boundBody) Close() error {
	err := b.ReadCloser.Close()
	b.stop()
	return err
}
