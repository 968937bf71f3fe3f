package lab

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// prober checks health endpoints with the lab's CA and admin token.
type prober struct {
	verified, insecure *http.Client
	token              string
}

func newProber(l layout) *prober {
	pool := x509.NewCertPool()
	if ca, err := os.ReadFile(l.caCert()); err == nil {
		pool.AppendCertsFromPEM(ca)
	}
	token, _ := os.ReadFile(l.adminToken())
	mk := func(cfg *tls.Config) *http.Client {
		return &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
	}
	return &prober{
		verified: mk(&tls.Config{RootCAs: pool}),
		// kube-controller-manager and kube-scheduler serve /healthz with a
		// certificate they sign themselves; nothing secret crosses it.
		insecure: mk(&tls.Config{InsecureSkipVerify: true}),
		token:    strings.TrimSpace(string(token)),
	}
}

// check is nil when the probe answers 200.
func (p *prober) check(ctx context.Context, pr probe) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pr.URL, nil)
	if err != nil {
		return err
	}
	if pr.Bearer && p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	client := p.verified
	if pr.TLS && !pr.Verify {
		client = p.insecure
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", pr.URL, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return fmt.Errorf("GET %s: %s: %s", pr.URL, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
