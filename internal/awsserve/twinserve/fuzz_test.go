package twinserve_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/ladder-eks/ladder/internal/awsserve"
	"github.com/ladder-eks/ladder/internal/awsserve/twinserve"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// countingBody is a request body that counts the bytes the server reads.
type countingBody struct {
	r    io.Reader
	read int
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += n
	return n, err
}

// validToken is an HTTP token (RFC 9110 §5.6.2): what net/http accepts
// as a method or a header name from the wire.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// validValue is a header value net/http reads from the wire: no control
// characters but tab.
func validValue(s string) bool {
	for _, c := range []byte(s) {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// fuzzTwin is the workshop's endpoints, built once per fuzzing process:
// what `ladder lab aws-serve --scenario workshop` serves.
var fuzzTwin = sync.OnceValues(func() (*twinserve.Twin, error) {
	sc, err := scenario.LoadBuiltin("workshop")
	if err != nil {
		return nil, err
	}
	return twinserve.New(sc, 0)
})

// fuzzServices are the signing scopes a fuzzed request may be signed
// for: the four served and one that is not.
var fuzzServices = []string{awsserve.ServiceEKS, awsserve.ServiceSSM, awsserve.ServiceAutoScaling, awsserve.ServiceEC2, "sqs"}

// FuzzAWSServe sends aws-serve's handler requests built from fuzzed
// methods, paths, queries, headers and bodies, unsigned or validly signed
// with the lab's key (hashing the body, declaring its hash, or declaring
// UNSIGNED-PAYLOAD), and checks what an HTTP client of the endpoints can
// do to them: no panic; no 5xx but the services' own server faults the
// twins model (Auto Scaling's ResourceContention); an unsigned request's
// body never read, a signed one's at most MaxBody+1 bytes; an answer of
// bounded size.
func FuzzAWSServe(f *testing.F) {
	f.Add("GET", "/clusters/eksworkshop-eksctl", "", "", []byte(nil), uint8(1), uint8(0))
	f.Add("POST", "/clusters/eksworkshop-eksctl/updates", "", "Content-Type: application/json", []byte(`{"version":"1.31"}`), uint8(1), uint8(0))
	f.Add("POST", "/clusters/eksworkshop-eksctl/node-groups", "", "Content-Type: application/json",
		[]byte(`{"nodegroupName":"green","labels":{"a":"b"},"taints":[{"key":"k","value":"v","effect":"NO_SCHEDULE"}],"subnets":["s"],"nodeRole":"r"}`), uint8(1), uint8(1))
	f.Add("GET", "/clusters/eksworkshop-eksctl/updates/u", "nodegroupName=a&nodegroupName=b", "", []byte(nil), uint8(1), uint8(2))
	f.Add("POST", "/", "", "Content-Type: application/x-www-form-urlencoded\nX-Amz-Target: AmazonSSM.GetParameter",
		[]byte(`{"Name":"/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id"}`), uint8(2), uint8(0))
	f.Add("POST", "/", "", "Content-Type: application/x-www-form-urlencoded",
		[]byte("Action=DescribeAutoScalingGroups&Version=2011-01-01&AutoScalingGroupNames.member.1=default-selfmng"), uint8(3), uint8(0))
	f.Add("POST", "/", "", "Content-Type: application/x-www-form-urlencoded",
		[]byte("Action=StartInstanceRefresh&Version=2011-01-01&AutoScalingGroupName=default-selfmng&Preferences.CheckpointPercentages.member.2=50"), uint8(3), uint8(1))
	f.Add("POST", "/", "", "Content-Type: application/x-www-form-urlencoded",
		[]byte("Action=DescribeImages&Version=2016-11-15&Owner.1=amazon&Filter.1.Name=name&Filter.1.Value.1=amazon-eks-*"), uint8(4), uint8(0))
	f.Add("POST", "/", "Action=CreateLaunchTemplateVersion&Version=2016-11-15", "", []byte("LaunchTemplateName=default-selfmng&SourceVersion=1"), uint8(0), uint8(0))
	f.Add("PUT", "/healthz", "", "Content-Length: 5", []byte("hello"), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, method, path, query, headers string, body []byte, sign, declare uint8) {
		tw, err := fuzzTwin()
		if err != nil {
			t.Fatal(err)
		}
		if method == "" || !validToken(method) {
			return // net/http refuses it before any handler
		}
		u, err := url.Parse("http://127.0.0.1/" + strings.TrimPrefix(path, "/"))
		if err != nil {
			return
		}
		u.RawQuery = query
		in := &countingBody{r: bytes.NewReader(body)}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r = r.WithContext(context.Background())
		r.Method, r.URL, r.RequestURI, r.Body, r.ContentLength = method, u, u.RequestURI(), io.NopCloser(in), int64(len(body))
		for line := range strings.SplitSeq(headers, "\n") {
			k, v, ok := strings.Cut(line, ":")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if ok && validToken(k) && validValue(v) {
				r.Header.Add(k, v)
			}
		}
		signed := sign > 0
		if signed {
			service := fuzzServices[int(sign-1)%len(fuzzServices)]
			sum := sha256.Sum256(body)
			hash := hex.EncodeToString(sum[:])
			switch declare % 3 {
			case 1:
				r.Header.Set("X-Amz-Content-Sha256", hash)
			case 2:
				hash = "UNSIGNED-PAYLOAD"
				r.Header.Set("X-Amz-Content-Sha256", hash)
			}
			creds := aws.Credentials{AccessKeyID: twinserve.AccessKeyID, SecretAccessKey: twinserve.SecretAccessKey}
			if err := v4.NewSigner().SignHTTP(context.Background(), creds, r, hash, service, tw.Region, time.Now()); err != nil {
				return
			}
		}
		w := httptest.NewRecorder()
		tw.ServeHTTP(w, r)

		if w.Code >= 500 && !strings.Contains(w.Body.String(), "<Code>ResourceContention</Code>") {
			t.Errorf("%s %s signed=%v: %d %s %s", method, u, signed, w.Code, w.Header().Get("X-Amzn-ErrorType"), w.Body)
		}
		if r.Header.Get("Authorization") == "" && in.read > 0 && u.Path != awsserve.HealthPath {
			t.Errorf("%s %s unsigned: %d bytes of the body read", method, u, in.read)
		}
		if in.read > awsserve.MaxBody+1 {
			t.Errorf("%s %s: %d bytes of the body read", method, u, in.read)
		}
		if w.Body.Len() > 4<<20 {
			t.Errorf("%s %s: an answer of %d bytes", method, u, w.Body.Len())
		}
	})
}
