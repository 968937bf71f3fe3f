package awsserve

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/smithy-go"
)

// TestQueryRefusalsThroughTheSDK: a call signed with the wrong secret is
// refused by the Server before the port, in the service's own envelope
// (awsQuery's ErrorResponse, ec2Query's Response/Errors), so that each
// SDK decodes the code and status aws-apis.md §1.7 gives for it, and the
// body's request id is the one in x-amzn-RequestId.
func TestQueryRefusalsThroughTheSDK(t *testing.T) {
	srv := httptest.NewServer(New(map[string]http.Handler{
		ServiceAutoScaling: NewAutoScaling(&recordingASG{out: &autoscaling.DescribeAutoScalingGroupsOutput{}}),
		ServiceEC2:         NewEC2(&recordingEC2{out: &ec2.DescribeImagesOutput{}}, nil),
	}, Options{AccessKeyID: "test", SecretAccessKey: "test", Region: "us-west-2", Now: time.Now}))
	t.Cleanup(srv.Close)
	// sdkConfig's key with another secret.
	wrong := sdkConfig()
	wrong.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "not-the-secret", Source: "test"}, nil
	})

	_, asgErr := autoscaling.NewFromConfig(wrong, func(o *autoscaling.Options) {
		o.BaseEndpoint = aws.String(srv.URL)
		o.RetryMaxAttempts = 1
	}).DescribeAutoScalingGroups(t.Context(), &autoscaling.DescribeAutoScalingGroupsInput{})
	_, ec2Err := ec2.NewFromConfig(wrong, func(o *ec2.Options) {
		o.BaseEndpoint = aws.String(srv.URL)
		o.RetryMaxAttempts = 1
	}).DescribeImages(t.Context(), &ec2.DescribeImagesInput{Owners: []string{"amazon"}})

	for _, c := range []struct {
		service string
		err     error
		status  int
		code    string
	}{
		{"autoscaling", asgErr, http.StatusForbidden, "SignatureDoesNotMatch"},
		{"ec2", ec2Err, http.StatusUnauthorized, "AuthFailure"},
	} {
		var ae smithy.APIError
		var re interface {
			HTTPStatusCode() int
			ServiceRequestID() string
		}
		if !errors.As(c.err, &ae) || !errors.As(c.err, &re) {
			t.Errorf("%s with the wrong secret: %v, want an API error", c.service, c.err)
			continue
		}
		if ae.ErrorCode() != c.code || re.HTTPStatusCode() != c.status || ae.ErrorMessage() == "" {
			t.Errorf("%s with the wrong secret: %d %s %q, want %d %s with a message",
				c.service, re.HTTPStatusCode(), ae.ErrorCode(), ae.ErrorMessage(), c.status, c.code)
		}
	}
}

// TestQueryRequestIDIsTheServers: behind the Server, the request id in the
// body is the one it gave the request and sent in x-amzn-RequestId, both
// in a response and in a refusal the Server writes through the handler.
func TestQueryRequestIDIsTheServers(t *testing.T) {
	const id = "00000000-0000-4000-8000-0000000000aa"
	for _, c := range []struct {
		service string
		h       http.Handler
		form    string
		tag     string
	}{
		{ServiceAutoScaling, NewAutoScaling(&recordingASG{out: &autoscaling.DescribeAutoScalingGroupsOutput{}}),
			"Action=DescribeAutoScalingGroups&Version=2011-01-01", "RequestId"},
		{ServiceEC2, NewEC2(&recordingEC2{out: &ec2.DescribeImagesOutput{}}, nil),
			"Action=DescribeImages&Version=2016-11-15", "RequestID"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(c.form))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
		ok := httptest.NewRecorder()
		c.h.ServeHTTP(ok, r)
		refused := httptest.NewRecorder()
		c.h.(ErrorWriter).WriteError(refused, r, http.StatusForbidden, "MissingAuthenticationToken", "Missing Authentication Token")
		for _, w := range []*httptest.ResponseRecorder{ok, refused} {
			body := w.Body.String()
			if !strings.Contains(strings.ToLower(body), strings.ToLower("<"+c.tag+">"+id+"</"+c.tag+">")) ||
				w.Header().Get("x-amzn-RequestId") != id {
				t.Errorf("%s: %d %s (x-amzn-RequestId %q), want request id %s in both",
					c.service, w.Code, body, w.Header().Get("x-amzn-RequestId"), id)
			}
		}
	}
}
