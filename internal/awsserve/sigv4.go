package awsserve

import (
	"crypto/hmac"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// SigV4 as AWS checks it (aws-apis.md §1.7): the Authorization header
//
//	AWS4-HMAC-SHA256 Credential=AKID/20260102/us-west-2/eks/aws4_request, SignedHeaders=host;x-amz-date, Signature=<hex>
//
// names the key, the credential scope (date, region, service) and the
// headers the client signed. The server rebuilds the request from exactly
// those headers, signs it again with the SDK's own signer and the secret of
// its one key, and compares.

const sigV4Algorithm = "AWS4-HMAC-SHA256"

// sigV4Time is X-Amz-Date's format; sigV4Date is the scope's date.
const (
	sigV4Time = "20060102T150405Z"
	sigV4Date = "20060102"
)

// sigV4Authorization is a parsed Authorization header.
type sigV4Authorization struct {
	accessKeyID, date, region, service string
	signedHeaders                      []string
	signature                          string
}

// parseAuthorization parses h. An empty h is no error: the request is
// unsigned, and verify refuses it.
func parseAuthorization(h string) (sigV4Authorization, error) {
	var a sigV4Authorization
	if h == "" {
		return a, nil
	}
	alg, rest, _ := strings.Cut(h, " ")
	if alg != sigV4Algorithm {
		return a, fmt.Errorf("Authorization header uses %q; only %s is supported", alg, sigV4Algorithm)
	}
	for part := range strings.SplitSeq(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			scope := strings.Split(v, "/")
			if len(scope) != 5 || scope[4] != "aws4_request" {
				return a, fmt.Errorf("Credential %q is not AKID/yyyymmdd/region/service/aws4_request", v)
			}
			a.accessKeyID, a.date, a.region, a.service = scope[0], scope[1], scope[2], scope[3]
		case "SignedHeaders":
			a.signedHeaders = strings.Split(v, ";")
		case "Signature":
			a.signature = v
		}
	}
	if a.accessKeyID == "" || len(a.signedHeaders) == 0 || a.signature == "" {
		return a, errors.New("Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters")
	}
	return a, nil
}

// sigV4RefusalKind is why a request's signature is refused.
type sigV4RefusalKind int

const (
	refusedMissing sigV4RefusalKind = iota
	refusedIncomplete
	refusedUnknownKey
	refusedSignature
	refusedExpired
)

// sigV4Refusal is a refused request: the kind picks the service's error
// code, the message is AWS's text.
type sigV4Refusal struct {
	kind    sigV4RefusalKind
	message string
}

// sigV4Errors are each service's codes for the refusals, as its protocol
// family spells them: the JSON services' exceptions, the query services'
// codes (Auto Scaling's SignatureDoesNotMatch, EC2's AuthFailure and
// RequestExpired), and the status each answers with.
var sigV4Errors = map[string]struct {
	status int
	codes  [5]string // indexed by sigV4RefusalKind
}{
	ServiceEKS: {http.StatusForbidden, [5]string{"MissingAuthenticationTokenException", "IncompleteSignatureException",
		"UnrecognizedClientException", "InvalidSignatureException", "InvalidSignatureException"}},
	ServiceSSM: {http.StatusBadRequest, [5]string{"MissingAuthenticationTokenException", "IncompleteSignatureException",
		"UnrecognizedClientException", "InvalidSignatureException", "InvalidSignatureException"}},
	ServiceAutoScaling: {http.StatusForbidden, [5]string{"MissingAuthenticationToken", "IncompleteSignature",
		"InvalidClientTokenId", "SignatureDoesNotMatch", "SignatureDoesNotMatch"}},
	ServiceEC2: {http.StatusUnauthorized, [5]string{"MissingAuthenticationToken", "IncompleteSignature",
		"AuthFailure", "AuthFailure", "RequestExpired"}},
}

func (f *sigV4Refusal) code(service string) string {
	if e, ok := sigV4Errors[service]; ok {
		return e.codes[f.kind]
	}
	return sigV4Errors[ServiceEKS].codes[f.kind]
}

func (f *sigV4Refusal) status(service string) int {
	if e, ok := sigV4Errors[service]; ok {
		return e.status
	}
	return http.StatusForbidden
}

const (
	sigV4UnknownKeyMessage = "The security token included in the request is invalid."
	sigV4SignatureMessage  = "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
)

// verifyHeaders checks what r's headers alone decide: a signature is
// there and well formed, for the server's key (a long-term key, so
// without a session token), region and a current date. nil when they
// hold; the signature itself is verifySignature's.
func (s *Server) verifyHeaders(r *http.Request, a sigV4Authorization, parseErr error) *sigV4Refusal {
	if r.Header.Get("Authorization") == "" {
		return &sigV4Refusal{refusedMissing, "Missing Authentication Token"}
	}
	if parseErr != nil {
		return &sigV4Refusal{refusedIncomplete, parseErr.Error()}
	}
	if a.accessKeyID != s.opts.AccessKeyID {
		return &sigV4Refusal{refusedUnknownKey, sigV4UnknownKeyMessage}
	}
	// A session token belongs to temporary credentials (ASIA… keys from
	// STS); with a long-term key (AKIA…) AWS refuses the token as it
	// refuses an unknown key.
	if _, ok := r.Header["X-Amz-Security-Token"]; ok && !strings.HasPrefix(a.accessKeyID, "ASIA") {
		return &sigV4Refusal{refusedUnknownKey, sigV4UnknownKeyMessage}
	}
	if s.opts.Region != "" && a.region != s.opts.Region {
		return &sigV4Refusal{refusedSignature, fmt.Sprintf("Credential should be scoped to a valid region, not '%s'.", a.region)}
	}
	signed, err := time.Parse(sigV4Time, r.Header.Get("X-Amz-Date"))
	if err != nil {
		return &sigV4Refusal{refusedIncomplete, "Authorization header requires existence of a valid 'X-Amz-Date' header."}
	}
	if a.date != signed.Format(sigV4Date) {
		return &sigV4Refusal{refusedSignature, "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '" +
			a.date + "' != '" + signed.Format(sigV4Date) + "'"}
	}
	return sigV4Skew(signed, s.opts.Now())
}

// verifySignature checks r's signature, r's headers having passed
// verifyHeaders, for a payload with the given hash and length; nil when
// it holds.
func (s *Server) verifySignature(r *http.Request, a sigV4Authorization, payloadHash string, length int64) *sigV4Refusal {
	signed, err := time.Parse(sigV4Time, r.Header.Get("X-Amz-Date"))
	if err != nil {
		return &sigV4Refusal{refusedIncomplete, "Authorization header requires existence of a valid 'X-Amz-Date' header."}
	}
	want, err := s.signature(r, payloadHash, length, a, signed)
	if err != nil || !hmac.Equal([]byte(want), []byte(a.signature)) {
		return &sigV4Refusal{refusedSignature, sigV4SignatureMessage}
	}
	return nil
}

// sigV4Skew refuses a signing time more than maxSkew from now, with AWS's
// messages.
func sigV4Skew(signed, now time.Time) *sigV4Refusal {
	now = now.UTC()
	switch {
	case signed.Before(now.Add(-maxSkew)):
		return &sigV4Refusal{refusedExpired, fmt.Sprintf("Signature expired: %s is now earlier than %s (%s - 15 min.)",
			signed.Format(sigV4Time), now.Add(-maxSkew).Format(sigV4Time), now.Format(sigV4Time))}
	case signed.After(now.Add(maxSkew)):
		return &sigV4Refusal{refusedExpired, fmt.Sprintf("Signature not yet current: %s is still later than %s (%s + 15 min.)",
			signed.Format(sigV4Time), now.Add(maxSkew).Format(sigV4Time), now.Format(sigV4Time))}
	}
	return nil
}

// signature signs, with the server's secret, the request the client
// signed: r's method, path and query, and only the headers a names —
// whatever a proxy or the transport added afterwards is not part of it.
func (s *Server) signature(r *http.Request, payloadHash string, length int64, a sigV4Authorization, signed time.Time) (string, error) {
	u := *r.URL
	req := &http.Request{Method: r.Method, URL: &u, Host: r.Host, Header: http.Header{}}
	for _, h := range a.signedHeaders {
		switch h {
		case "host":
		case "content-length":
			// The signer signs the length it is given, not a header.
			req.ContentLength = length
		default:
			if v, ok := r.Header[http.CanonicalHeaderKey(h)]; ok {
				req.Header[http.CanonicalHeaderKey(h)] = v
			}
		}
	}
	creds := aws.Credentials{AccessKeyID: a.accessKeyID, SecretAccessKey: s.opts.SecretAccessKey,
		SessionToken: r.Header.Get("X-Amz-Security-Token")}
	if err := v4.NewSigner().SignHTTP(r.Context(), creds, req, payloadHash, a.service, a.region, signed); err != nil {
		return "", err
	}
	got, err := parseAuthorization(req.Header.Get("Authorization"))
	return got.signature, err
}
