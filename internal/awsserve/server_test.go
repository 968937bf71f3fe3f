package awsserve_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/smithy-go"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/awsserve"
)

// endless is a body of n bytes that are produced as they are read, and
// counts them: what an attacker streams at the server.
type endless struct {
	left int64
	read atomic.Int64
}

func (e *endless) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n > e.left {
		n = e.left
	}
	clear(p[:n])
	e.left -= n
	e.read.Add(n)
	return int(n), nil
}

// signRequest signs r for service with the given key at now; declared, if
// not empty, is sent as X-Amz-Content-Sha256 and signed as the payload's
// hash, else the hash of body is.
func signRequest(t *testing.T, r *http.Request, service string, body []byte, id, secret, declared string, now time.Time) {
	t.Helper()
	hash := declared
	if declared != "" {
		r.Header.Set("X-Amz-Content-Sha256", declared)
	} else {
		sum := sha256.Sum256(body)
		hash = hex.EncodeToString(sum[:])
	}
	creds := aws.Credentials{AccessKeyID: id, SecretAccessKey: secret}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, r, hash, service, region, now); err != nil {
		t.Fatal(err)
	}
}

// A request the server refuses on its headers has none of its body read,
// however long: unsigned, another key, a session token with a long-term
// key, a wrong secret over a declared payload hash, a declared length
// over awsserve.MaxBody. One that only a full read can refuse — a
// correctly keyed request that declares no hash and no length — has at
// most MaxBody+1 bytes read. Each 100 MiB body is streamed, and the test
// counts the bytes the server pulls from it.
func TestBodyNotReadBeforeTheSignature(t *testing.T) {
	const hundredMiB = 100 << 20
	now := &clock{time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)}
	amisSrv := awsserve.New(map[string]http.Handler{
		awsserve.ServiceEKS:         http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "{}") }),
		awsserve.ServiceAutoScaling: awsserve.NewAutoScaling(noASG{}),
	}, awsserve.Options{AccessKeyID: accessKey, SecretAccessKey: secretKey, Region: region, Now: now.Now})
	for _, c := range []struct {
		name    string
		prepare func(r *http.Request)
		length  int64 // the declared Content-Length; -1 none
		status  int
		code    string
		maxRead int64
	}{
		{name: "unsigned", length: -1, status: 403, code: "MissingAuthenticationTokenException"},
		{name: "unsigned form", length: -1, status: 403, code: "MissingAuthenticationToken",
			prepare: func(r *http.Request) { r.Header.Set("Content-Type", "application/x-www-form-urlencoded") }},
		{name: "another key", length: -1, status: 403, code: "UnrecognizedClientException",
			prepare: func(r *http.Request) {
				signRequest(t, r, "eks", nil, "AKIDSOMEONEELSE00001", secretKey, unsignedPayloadHash, now.now)
			}},
		{name: "session token with a long-term key", length: -1, status: 403, code: "UnrecognizedClientException",
			prepare: func(r *http.Request) {
				r.Header.Set("X-Amz-Security-Token", "FwoGZXIvYXdzEBYaDH")
				signRequest(t, r, "eks", nil, accessKey, secretKey, unsignedPayloadHash, now.now)
			}},
		{name: "wrong secret, declared hash", length: -1, status: 403, code: "InvalidSignatureException",
			prepare: func(r *http.Request) {
				signRequest(t, r, "eks", nil, accessKey, "not-the-secret", strings.Repeat("ab", 32), now.now)
			}},
		{name: "declared length", length: hundredMiB, status: 413, code: "RequestEntityTooLarge",
			prepare: func(r *http.Request) {
				r.ContentLength = hundredMiB
				signRequest(t, r, "eks", nil, accessKey, secretKey, "", now.now)
			}},
		{name: "no length, no hash", length: -1, status: 413, code: "RequestEntityTooLarge", maxRead: awsserve.MaxBody + 1,
			prepare: func(r *http.Request) { signRequest(t, r, "eks", nil, accessKey, secretKey, "", now.now) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := &endless{left: hundredMiB}
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/clusters/wire/updates", body)
			r.ContentLength = c.length
			if c.prepare != nil {
				c.prepare(r)
			}
			w := httptest.NewRecorder()
			amisSrv.ServeHTTP(w, r)
			if w.Code != c.status || w.Header().Get("X-Amzn-ErrorType") != c.code && !strings.Contains(w.Body.String(), "<Code>"+c.code+"</Code>") {
				t.Errorf("%d %s %s, want %d %s", w.Code, w.Header().Get("X-Amzn-ErrorType"), w.Body, c.status, c.code)
			}
			if n := body.read.Load(); n > c.maxRead {
				t.Errorf("the server read %d bytes of the body, want at most %d", n, c.maxRead)
			}
		})
	}
}

// noASG is an Auto Scaling port that is never called: the server refuses
// the requests first.
type noASG struct{ awsport.AutoScaling }

const unsignedPayloadHash = "UNSIGNED-PAYLOAD"

// A client that declares its payload's hash is accepted when the body
// has it (or with UNSIGNED-PAYLOAD), and refused with the service's
// signature error when the body was changed after signing.
func TestDeclaredPayloadHash(t *testing.T) {
	now := &clock{time.Now()}
	srv := signingServer(t, now)
	body := []byte(`{"Name":"` + recommended + `"}`)
	sum := sha256.Sum256(body)
	for _, c := range []struct {
		name     string
		declared string
		sent     []byte
		status   int
		code     string
	}{
		{"hash", hex.EncodeToString(sum[:]), body, 200, ""},
		{"unsigned payload", unsignedPayloadHash, body, 200, ""},
		{"changed body", hex.EncodeToString(sum[:]), bytes.Replace(body, []byte("1.31"), []byte("1.30"), 1), 400, "InvalidSignatureException"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := http.NewRequest(http.MethodPost, srv.URL+"/", bytes.NewReader(c.sent))
			if err != nil {
				t.Fatal(err)
			}
			r.Header.Set("Content-Type", "application/x-amz-json-1.1")
			r.Header.Set("X-Amz-Target", "AmazonSSM.GetParameter")
			signRequest(t, r, "ssm", nil, accessKey, secretKey, c.declared, now.now)
			resp, err := srv.Client().Do(r)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if c.status == 200 {
				if resp.StatusCode != 200 {
					_, code, msg := awsJSONError(t, resp)
					t.Fatalf("%d %s %s, want 200", resp.StatusCode, code, msg)
				}
				return
			}
			if status, code, msg := awsJSONError(t, resp); status != c.status || code != c.code {
				t.Errorf("%d %s %s, want %d %s", status, code, msg, c.status, c.code)
			}
		})
	}
}

// Through the SDKs: long-term credentials with a session token are
// refused as AWS refuses them, in each service's spelling.
func TestSessionTokenWithLongTermKey(t *testing.T) {
	now := &clock{time.Now()}
	srv := signingServer(t, now)
	withToken := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey, SessionToken: "FwoGZXIvYXdzEBYaDH", Source: "test"}, nil
	})
	_, err := eksClient(srv.URL, withToken).DescribeCluster(t.Context(), &eks.DescribeClusterInput{Name: aws.String("wire")})
	var ae smithy.APIError
	var re interface{ HTTPStatusCode() int }
	if !errors.As(err, &ae) || ae.ErrorCode() != "UnrecognizedClientException" || !errors.As(err, &re) || re.HTTPStatusCode() != 403 {
		t.Errorf("DescribeCluster with a session token and a long-term key: %v, want 403 UnrecognizedClientException", err)
	}
	asg := httptest.NewServer(awsserve.New(map[string]http.Handler{awsserve.ServiceAutoScaling: awsserve.NewAutoScaling(noASG{})},
		awsserve.Options{AccessKeyID: accessKey, SecretAccessKey: secretKey, Region: region}))
	t.Cleanup(asg.Close)
	_, err = autoscaling.New(autoscaling.Options{Region: region, BaseEndpoint: aws.String(asg.URL), Credentials: withToken, RetryMaxAttempts: 1}).
		DescribeAutoScalingGroups(t.Context(), &autoscaling.DescribeAutoScalingGroupsInput{})
	if !errors.As(err, &ae) || ae.ErrorCode() != "InvalidClientTokenId" || !errors.As(err, &re) || re.HTTPStatusCode() != 403 {
		t.Errorf("DescribeAutoScalingGroups with a session token and a long-term key: %v, want 403 InvalidClientTokenId", err)
	}
}

// A client that sends requests for large answers and never reads them
// holds up its own connection only: another client's calls complete, and
// the lock the twins' engine takes to advance its clock is free — the
// server answers into a buffer under the lock and writes after it.
func TestClientThatNeverReadsFreezesNothing(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 16<<20)
	var entered sync.Once
	started := make(chan struct{})
	var mu sync.Mutex
	srv := serve(t, map[string]http.Handler{awsserve.ServiceEKS: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/big" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"clusters":["wire"]}`)
			return
		}
		entered.Do(func() { close(started) })
		w.Write(big)
	})}, &mu)

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	// A receive window of a few KiB: the server's writes block as soon as
	// its own send buffer is full.
	if err := conn.(*net.TCPConn).SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		r, err := http.NewRequest(http.MethodGet, srv.URL+"/big", nil)
		if err != nil {
			t.Fatal(err)
		}
		signRequest(t, r, "eks", nil, accessKey, secretKey, "", time.Now())
		if err := r.Write(conn); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not start answering the client that never reads")
	}

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	out, err := eksClient(srv.URL, staticCredentials(accessKey, secretKey)).ListClusters(ctx, &eks.ListClustersInput{})
	if err != nil {
		t.Fatalf("ListClusters while another client does not read: %v", err)
	}
	if got, _ := json.Marshal(out.Clusters); string(got) != `["wire"]` {
		t.Errorf("ListClusters = %s", got)
	}
	locked := make(chan struct{})
	go func() { mu.Lock(); mu.Unlock(); close(locked) }()
	select {
	case <-locked:
	case <-ctx.Done():
		t.Fatal("the twins' lock is held while an answer waits for a client that does not read")
	}
}
