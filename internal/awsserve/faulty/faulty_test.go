package faulty_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/awsport/sdkaws"
	"github.com/ladder-eks/ladder/internal/awsserve/faulty"
	"github.com/ladder-eks/ladder/internal/awsserve/twinserve"
	"github.com/ladder-eks/ladder/internal/capture"
	"github.com/ladder-eks/ladder/internal/executor"
	"github.com/ladder-eks/ladder/internal/kubeport/live"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/plan"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// sdkPorts are aws-sdk-go-v2's clients for every service at url, with the
// lab's key, configured as Ladder configures them (the default chain).
func sdkPorts(t *testing.T, url, region string) awsport.Ports {
	t.Helper()
	for _, svc := range []string{"EKS", "AUTO_SCALING", "EC2", "SSM"} {
		t.Setenv("AWS_ENDPOINT_URL_"+svc, url)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", twinserve.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", twinserve.SecretAccessKey)
	t.Setenv("AWS_REGION", region)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	ports, _, err := sdkaws.New(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return ports
}

type quiet struct{}

func (quiet) HopStarted(plan.Hop)                 {}
func (quiet) StepStarted(plan.Hop, plan.Step)     {}
func (quiet) StepEnded(plan.Step, error)          {}
func (quiet) AddonVersion(string, string, string) {}
func (quiet) Event(string, string, string)        {}

// TestRetriesLoseNothing: with every fourth call throttled or failed by
// the service, and the first UpdateClusterVersion's answer lost after EKS
// acted on it, Ladder's SDK clients retry: a capture reads exactly what it
// reads without faults, and the control-plane step upgrades the workshop
// to 1.31 with one update — the retry carries the same client request
// token, so EKS answers with the update it made rather than refusing a
// second (ResourceInUseException).
func TestRetriesLoseNothing(t *testing.T) {
	sc, err := scenario.LoadBuiltin("workshop")
	if err != nil {
		t.Fatal(err)
	}
	tw, err := twinserve.New(sc, 3000) // 10 minutes of control-plane update in 0.2 s
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tw.Run(ctx, 5*time.Millisecond)

	updates := "POST /clusters/" + tw.Cluster + "/updates"
	dropped := false
	proxy := faulty.New(tw, func(n int, op string) faulty.Fault {
		switch {
		case op == updates && !dropped:
			dropped = true
			return faulty.Drop
		case n%8 == 3:
			return faulty.Throttle
		case n%8 == 7:
			return faulty.ServerError
		}
		return faulty.None
	})
	direct := httptest.NewServer(tw)
	defer direct.Close()
	faults := httptest.NewServer(proxy)
	defer faults.Close()

	read := func(url string) string {
		ports := sdkPorts(t, url, tw.Region)
		c, err := capture.Read(ctx, capture.Source{Kube: fake.NewSimpleClientset(), AWS: ports, Cluster: tw.Cluster, Now: sc.Spec.Start.Time})
		if err != nil {
			t.Fatalf("capture through %s: %v", url, err)
		}
		y, err := c.ScenarioYAML()
		if err != nil {
			t.Fatal(err)
		}
		return string(y)
	}
	if want, got := read(direct.URL), read(faults.URL); got != want {
		t.Errorf("the capture through faults differs:\n%s\nwant\n%s", got, want)
	}

	ports := sdkPorts(t, faults.URL, tw.Region)
	ex := &executor.Executor{Cluster: tw.Cluster, Observer: quiet{}, Deadline: time.Now().Add(time.Minute),
		Ports: executor.Ports{Kube: live.New(fake.NewSimpleClientset(), live.Options{PollInterval: 20 * time.Millisecond}), EKS: ports.EKS.(executor.EKS)}}
	if err := ex.UpgradeControlPlane(ctx, kubeversion.MustParse("1.31")); err != nil {
		t.Fatalf("UpgradeControlPlane through faults: %v", err)
	}
	out, err := ports.EKS.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(tw.Cluster)})
	if err != nil || aws.ToString(out.Cluster.Version) != "1.31" {
		t.Fatalf("after the step: %v %v", out, err)
	}
	count := map[faulty.Fault]int{}
	posts := 0
	for _, e := range proxy.Log() {
		count[e.Fault]++
		if e.Operation == updates {
			posts++
		}
	}
	if !dropped || posts < 2 || count[faulty.Throttle] == 0 || count[faulty.ServerError] == 0 {
		t.Errorf("faults injected %v, UpdateClusterVersion sent %d times: the test did not exercise every fault", count, posts)
	}
	if t.Failed() {
		var ops []string
		for _, e := range proxy.Log() {
			ops = append(ops, e.Operation+" "+e.Fault.String())
		}
		t.Log(strings.Join(ops, "\n"))
	}
}

// Abandoned counts the held requests whose client gave up first, and
// only those.
func TestAbandonedCountsTheClientsThatGaveUp(t *testing.T) {
	backend := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	for _, tc := range []struct {
		name    string
		slowFor time.Duration
		timeout time.Duration
		want    int
	}{
		{"the client's timeout ends the hold", time.Minute, 100 * time.Millisecond, 1},
		{"the hold ends first", 50 * time.Millisecond, time.Minute, 0},
	} {
		p := faulty.New(backend, func(int, string) faulty.Fault { return faulty.Slow })
		p.SlowFor = tc.slowFor
		srv := httptest.NewServer(p)
		resp, err := (&http.Client{Timeout: tc.timeout}).Get(srv.URL + "/x")
		if err == nil {
			resp.Body.Close()
		}
		srv.Close() // waits for the handler to return
		if got := p.Abandoned(); got != tc.want {
			t.Errorf("%s: Abandoned() = %d, want %d (client error %v)", tc.name, got, tc.want, err)
		}
	}
}
