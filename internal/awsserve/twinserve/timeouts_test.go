package twinserve_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/ladder-eks/ladder/internal/awsserve"
	"github.com/ladder-eks/ladder/internal/awsserve/twinserve"
)

// A client that signs its request with the lab's key, declares a body and
// never sends it is cut off after the read timeout, and one that keeps a
// connection idle after the idle timeout: neither holds a connection (and
// its goroutine) for ever.
func TestSlowClientsAreCutOff(t *testing.T) {
	saved := twinserve.Timeouts
	t.Cleanup(func() { twinserve.Timeouts = saved })
	twinserve.Timeouts.Read, twinserve.Timeouts.Idle = 300*time.Millisecond, 300*time.Millisecond

	h := awsserve.New(map[string]http.Handler{awsserve.ServiceEKS: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "{}")
	})}, awsserve.Options{AccessKeyID: twinserve.AccessKeyID, SecretAccessKey: twinserve.SecretAccessKey, Region: "us-west-2"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- twinserve.Serve(ctx, ln, io.Discard, "us-west-2", "c", h, func(ctx context.Context, _ time.Duration) { <-ctx.Done() })
	}()
	t.Cleanup(func() { stop(); <-done })

	for _, c := range []struct {
		name string
		send func(t *testing.T, conn net.Conn)
	}{
		{"body never sent", func(t *testing.T, conn net.Conn) {
			r, err := http.NewRequest(http.MethodPost, "http://"+ln.Addr().String()+"/clusters/c/updates", strings.NewReader(""))
			if err != nil {
				t.Fatal(err)
			}
			r.ContentLength = 1000
			r.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
			creds := aws.Credentials{AccessKeyID: twinserve.AccessKeyID, SecretAccessKey: twinserve.SecretAccessKey}
			if err := v4.NewSigner().SignHTTP(t.Context(), creds, r, "UNSIGNED-PAYLOAD", "eks", "us-west-2", time.Now()); err != nil {
				t.Fatal(err)
			}
			// The headers as signed, a Content-Length of 1000, no body.
			var b strings.Builder
			b.WriteString("POST /clusters/c/updates HTTP/1.1\r\nHost: " + r.Host + "\r\nContent-Length: 1000\r\n")
			if err := r.Header.Write(&b); err != nil {
				t.Fatal(err)
			}
			b.WriteString("\r\n")
			io.WriteString(conn, b.String())
		}},
		{"idle", func(t *testing.T, conn net.Conn) {
			io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			c.send(t, conn)
			// The deadline is the test's limit, far above the timeouts: the
			// server must close the connection before it.
			conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			_, err = io.Copy(io.Discard, bufio.NewReader(conn))
			if err != nil {
				t.Errorf("the server kept the connection open: %v", err)
			}
		})
	}
}
