package sdkaws

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
)

// An attempt that gets no answer is given up after the request timeout and
// retried by the SDK: the call succeeds on the second attempt instead of
// waiting for ever.
func TestAHungAttemptIsRetried(t *testing.T) {
	defer func(d time.Duration) { requestTimeout = d }(requestTimeout)
	requestTimeout = 300 * time.Millisecond
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if attempts.Add(1) == 1 {
			<-r.Context().Done() // hung: answers nothing until the client gives up
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"cluster":{"name":"lab","version":"1.31","status":"ACTIVE"}}`))
	}))
	defer srv.Close()
	t.Setenv("AWS_ENDPOINT_URL_EKS", srv.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDLADDERTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	ports, _, err := New(context.Background(), "us-west-2")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := ports.EKS.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("lab")})
	if err != nil {
		t.Fatalf("DescribeCluster after a hung attempt: %v", err)
	}
	if aws.ToString(out.Cluster.Version) != "1.31" || attempts.Load() != 2 {
		t.Fatalf("version %q after %d attempts, want 1.31 after 2", aws.ToString(out.Cluster.Version), attempts.Load())
	}
}
