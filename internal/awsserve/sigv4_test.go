package awsserve_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/smithy-go"

	"github.com/ladder-eks/ladder/internal/awsport/twinaws"
	"github.com/ladder-eks/ladder/internal/awsserve"
)

// clock is a server clock a test sets.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// signingServer is a server for the twins' SSM parameters and EKS, on a
// clock the test holds.
func signingServer(t *testing.T, now *clock) *httptest.Server {
	t.Helper()
	amis := twinaws.NewAMIs(func() time.Time { return t0 })
	_, api := newTwinEKS(t)
	srv := httptest.NewServer(awsserve.New(map[string]http.Handler{
		awsserve.ServiceEKS: awsserve.NewEKS(api),
		awsserve.ServiceSSM: awsserve.NewSSM(amis),
	}, awsserve.Options{AccessKeyID: accessKey, SecretAccessKey: secretKey, Region: region, Now: now.Now}))
	t.Cleanup(srv.Close)
	return srv
}

// signed is a request to srv signed with the given key and secret at
// signedAt, for service, with body; tamper changes it after signing.
func signed(t *testing.T, srv *httptest.Server, service, target string, body []byte, id, secret string, signedAt time.Time, tamper func(*http.Request)) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", target)
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: id, SecretAccessKey: secret}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), service, region, signedAt); err != nil {
		t.Fatal(err)
	}
	if tamper != nil {
		tamper(req)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// awsJSONError is an awsJson1_1 error as botocore reads it: the body's
// __type and message.
func awsJSONError(t *testing.T, resp *http.Response) (status int, code, message string) {
	t.Helper()
	var body struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if h := resp.Header.Get("X-Amzn-ErrorType"); h != body.Type {
		t.Errorf("X-Amzn-ErrorType %q, body __type %q: want the same", h, body.Type)
	}
	return resp.StatusCode, body.Type, body.Message
}

const recommended = "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id"

// The server checks a request's SigV4 signature as AWS does: only its own
// key, only a signature of the request as it arrived, only within 15
// minutes of its clock — each refusal with the service's code and AWS's
// message.
func TestSigV4Refusals(t *testing.T) {
	now := &clock{time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)}
	srv := signingServer(t, now)
	body := []byte(`{"Name":"` + recommended + `"}`)
	for _, c := range []struct {
		name    string
		id, key string
		at      time.Duration // signing time minus the server's
		tamper  func(*http.Request)
		status  int
		code    string
		message string
	}{
		{name: "accepted", id: accessKey, key: secretKey, status: 200},
		{name: "accepted 14 minutes behind", id: accessKey, key: secretKey, at: -14 * time.Minute, status: 200},
		{name: "unknown key", id: "AKIDSOMEONEELSE00001", key: secretKey, status: 400,
			code: "UnrecognizedClientException", message: "The security token included in the request is invalid."},
		{name: "wrong secret", id: accessKey, key: "not-the-secret", status: 400,
			code: "InvalidSignatureException", message: "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."},
		{name: "tampered body", id: accessKey, key: secretKey, status: 400, code: "InvalidSignatureException",
			tamper: func(r *http.Request) {
				b := bytes.Replace(body, []byte("1.31"), []byte("1.30"), 1)
				r.Body = io.NopCloser(bytes.NewReader(b))
			}},
		{name: "tampered target", id: accessKey, key: secretKey, status: 400, code: "InvalidSignatureException",
			tamper: func(r *http.Request) { r.Header.Set("X-Amz-Target", "AmazonSSM.GetParameters") }},
		{name: "expired", id: accessKey, key: secretKey, at: -16 * time.Minute, status: 400, code: "InvalidSignatureException",
			message: "Signature expired: 20261204T114400Z is now earlier than 20261204T114500Z (20261204T120000Z - 15 min.)"},
		{name: "from the future", id: accessKey, key: secretKey, at: 16 * time.Minute, status: 400, code: "InvalidSignatureException",
			message: "Signature not yet current: 20261204T121600Z is still later than 20261204T121500Z (20261204T120000Z + 15 min.)"},
		{name: "unsigned", status: 400, code: "MissingAuthenticationTokenException", message: "Missing Authentication Token",
			tamper: func(r *http.Request) { r.Header.Del("Authorization") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := signed(t, srv, "ssm", "AmazonSSM.GetParameter", body, c.id, c.key, now.now.Add(c.at), c.tamper)
			if c.status == 200 {
				if resp.StatusCode != 200 {
					_, code, msg := awsJSONError(t, resp)
					t.Fatalf("status %d %s: %s, want 200", resp.StatusCode, code, msg)
				}
				return
			}
			status, code, msg := awsJSONError(t, resp)
			if status != c.status || code != c.code || (c.message != "" && msg != c.message) {
				t.Errorf("%d %s %q, want %d %s %q", status, code, msg, c.status, c.code, c.message)
			}
		})
	}
}

// Through the SDK: a client with another account's key gets EKS's 403
// UnrecognizedClientException, and one whose clock is 30 minutes behind
// the server's is refused once, reads the server's Date and signs again —
// the SDK's own clock-skew correction, which needs the server's clock in
// Date.
func TestSigV4ThroughTheSDK(t *testing.T) {
	now := &clock{time.Now().Add(30 * time.Minute)}
	srv := signingServer(t, now)
	_, err := eksClient(srv.URL, staticCredentials("AKIDSOMEONEELSE00001", secretKey)).
		DescribeCluster(t.Context(), &eks.DescribeClusterInput{Name: aws.String("wire")})
	var ae smithy.APIError
	var re interface{ HTTPStatusCode() int }
	if !errors.As(err, &ae) || ae.ErrorCode() != "UnrecognizedClientException" || !errors.As(err, &re) || re.HTTPStatusCode() != 403 {
		t.Errorf("DescribeCluster with another key: %v, want 403 UnrecognizedClientException", err)
	}
	out, err := ssmClient(srv.URL, staticCredentials(accessKey, secretKey)).
		GetParameter(t.Context(), &ssm.GetParameterInput{Name: aws.String(recommended)})
	if err != nil {
		t.Fatalf("GetParameter 30 minutes behind the server: %v, want the SDK to correct its clock", err)
	}
	if v := aws.ToString(out.Parameter.Value); !strings.HasPrefix(v, "ami-") {
		t.Errorf("GetParameter = %q, want an AMI id", v)
	}
}

// A credential scope for a service the endpoint does not serve is refused
// before any handler runs.
func TestUnknownService(t *testing.T) {
	now := &clock{time.Now()}
	srv := signingServer(t, now)
	resp := signed(t, srv, "sqs", "AmazonSQS.ListQueues", []byte(`{}`), accessKey, secretKey, now.now, nil)
	if resp.StatusCode != 400 || resp.Header.Get("X-Amzn-ErrorType") != "UnknownServiceException" {
		t.Errorf("status %d, %q; want 400 UnknownServiceException", resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"))
	}
}
