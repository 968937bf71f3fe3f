// Package probe is the availability check the seed's author kept running
// through an upgrade — `while true; do curl -s $UI_WEB; sleep 1; done` —
// as a gate: `ladder upgrade --probe-url URL` requests the URL every
// second while the upgrade runs, and before each step asks whether the
// application is still answering; if it is not, the upgrade pauses with
// the reason instead of taking down more nodes.
package probe

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Probe requests a URL at an interval and keeps count.
type Probe struct {
	URL string
	// Interval between requests (default 1 s) and each request's timeout
	// (default 2 s).
	Interval, Timeout time.Duration
	// FailAfter is how many failures in a row make the probe unhealthy
	// (default 5: a few seconds of errors, not one lost request).
	FailAfter int
	// Client is the HTTP client (default: a client with Timeout).
	Client *http.Client

	mu                   sync.Mutex
	ok, failed, inARow   int
	last                 string
	firstFail, lastCheck time.Time
}

// Run requests the URL until ctx ends.
func (p *Probe) Run(ctx context.Context) {
	p.defaults()
	t := time.NewTicker(p.Interval)
	defer t.Stop()
	for {
		p.check(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (p *Probe) defaults() {
	if p.Interval <= 0 {
		p.Interval = time.Second
	}
	if p.Timeout <= 0 {
		p.Timeout = 2 * time.Second
	}
	if p.FailAfter <= 0 {
		p.FailAfter = 5
	}
	if p.Client == nil {
		p.Client = &http.Client{Timeout: p.Timeout}
	}
}

// check makes one request: a 2xx or 3xx answer is success, anything else
// (an error, a timeout, a 4xx or 5xx) a failure.
func (p *Probe) check(ctx context.Context) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	why := ""
	if err == nil {
		var resp *http.Response
		resp, err = p.Client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode >= 400 {
				why = resp.Status
			}
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		why = err.Error()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	p.lastCheck = now
	if why == "" {
		p.ok++
		p.inARow = 0
		return
	}
	p.failed++
	if p.inARow == 0 {
		p.firstFail = now
	}
	p.inARow++
	p.last = why
}

// Healthy is nil while the URL answers; once FailAfter requests in a row
// have failed, an error saying since when and the last failure.
func (p *Probe) Healthy(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.FailAfter <= 0 || p.inARow < p.FailAfter {
		return nil
	}
	return fmt.Errorf("probe %s: %d requests in a row failed since %s (last: %s); %d of %d failed so far",
		p.URL, p.inARow, p.firstFail.UTC().Format(time.RFC3339), p.last, p.failed, p.ok+p.failed)
}

// Counts are the requests that succeeded and failed so far.
func (p *Probe) Counts() (ok, failed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ok, p.failed
}
