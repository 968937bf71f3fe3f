//go:build lab

package e2e

import (
	"bytes"
	"encoding/pem"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ladder-eks/ladder/internal/awsport/sdkaws"
	"github.com/ladder-eks/ladder/internal/awsserve/faulty"
)

// kubeRequestTimeout is the upgrade's --request-timeout here: short, so
// that the held read costs seconds, and long enough for the lab's
// answers on a busy machine.
const kubeRequestTimeout = 5 * time.Second

// TestFaultsOnTheLab is the small scenario's `ladder upgrade --to 1.31
// --approve`, its journal in the cluster, with a proxy that breaks calls
// between Ladder and every endpoint it uses, on a fixed schedule:
//
//   - the lab's EKS, Auto Scaling, EC2 and SSM: throttling (429), server
//     errors (500), the answer to the first UpdateClusterVersion,
//     UpdateNodegroupVersion and UpdateAddon lost after EKS acted, and the
//     first UpdateAddon of aws-ebs-csi-driver held past Ladder's
//     per-attempt timeout (sdkaws.RequestTimeout: the SDK gives the
//     attempt up and retries);
//   - the kube-apiserver: throttling (429 with Retry-After), the server
//     unavailable (503 with Retry-After), the connection dropped after a
//     read, one read held past --request-timeout (Ladder gives the
//     attempt up and reads again: kubelive.BoundRequests), and writes of
//     the journal refused as stale (409) or their answer lost after the
//     server stored them.
//
// The upgrade ends as it ends without faults: the control plane, add-ons
// and nodes at 1.31, each original node replaced once, one EKS update per
// target (a lost answer's retry carries the client request token, and EKS
// answers with the update it made), the journal complete and its
// comparison with the rehearsal agreeing; and every kind of fault was
// injected.
func TestFaultsOnTheLab(t *testing.T) {
	l := startLab(t, smallScenario)
	settle(t, l)
	original := l.nodes(t)
	watch := watchBudgets(t, l)

	env, proxies := faultyEnv(t, l)
	began := time.Now()
	cmd := exec.Command(ladderBin, "upgrade", "--to", "1.31", "--approve", "--request-timeout", kubeRequestTimeout.String())
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("ladder upgrade through faults: %v in %s", err, time.Since(began).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("ladder upgrade through faults: %v\n%s", err, out.String())
	}
	assertUpgraded(t, l, original, watch)
	_, updates := l.eksLog.counts()
	assertOneUpdatePerTarget(t, l.cluster, updates)
	assertPredicted(t, l)

	for side, ps := range proxies {
		injected, requests := map[faulty.Fault]int{}, 0
		for _, p := range ps {
			for _, e := range p.Log() {
				injected[e.Fault]++
				requests++
			}
		}
		t.Logf("%s: %d requests, faults %v", side, requests, injected)
		want := []faulty.Fault{faulty.Throttle, faulty.ServerError, faulty.Drop, faulty.Slow}
		if side == "kubernetes" {
			want = append(want, faulty.Conflict)
		}
		for _, f := range want {
			if injected[f] == 0 {
				t.Errorf("%s: no %s injected: the test did not exercise it", side, f)
			}
		}
		// Ladder, not the proxy, ended each held request: its timeout
		// gave the attempt up before the hold would have.
		abandoned := 0
		for _, p := range ps {
			abandoned += p.Abandoned()
		}
		if abandoned != injected[faulty.Slow] {
			t.Errorf("%s: Ladder gave up %d of the %d held requests before the hold ended: it waited for the rest", side, abandoned, injected[faulty.Slow])
		}
	}
	if t.Failed() {
		t.Logf("ladder upgrade's output:\n%s", out.String())
	}
}

// faultyEnv is l's environment with every AWS endpoint and the
// kube-apiserver behind a faulty proxy, and the proxies by side.
func faultyEnv(t *testing.T, l *lab) ([]string, map[string][]*faulty.Proxy) {
	t.Helper()
	vars := map[string]string{}
	var env []string
	for _, kv := range l.env {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "AWS_ENDPOINT_URL_") || k == "KUBECONFIG" {
			vars[k] = v
			continue
		}
		env = append(env, kv)
	}
	// One schedule for the four AWS endpoints: it counts by operation.
	aws := awsFaults(l.cluster)
	proxies := map[string][]*faulty.Proxy{}
	for k, v := range vars {
		if k == "KUBECONFIG" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil {
			t.Fatal(err)
		}
		// The reverse proxy keeps the client's Host header, which its
		// SigV4 signature covers.
		p := faulty.New(httputil.NewSingleHostReverseProxy(u), aws)
		p.SlowFor = sdkaws.RequestTimeout + 15*time.Second
		srv := httptest.NewServer(p)
		t.Cleanup(srv.Close)
		env = append(env, k+"="+srv.URL)
		proxies["aws"] = append(proxies["aws"], p)
	}
	kube, kubeconfig := kubeFaults(t, vars["KUBECONFIG"])
	proxies["kubernetes"] = []*faulty.Proxy{kube}
	return append(env, "KUBECONFIG="+kubeconfig), proxies
}

// awsFaults throttles the 3rd of every 7 requests an operation makes and
// answers the 5th with a server error, loses the answer to the first
// request of each update after the service acted, and holds the first
// UpdateAddon of aws-ebs-csi-driver until the client gives it up.
func awsFaults(cluster string) func(n int, op string) faulty.Fault {
	var mu sync.Mutex
	seen := map[string]int{}
	dropped := map[string]bool{}
	updates := []string{
		"POST /clusters/" + cluster + "/updates",
		"POST /clusters/" + cluster + "/node-groups/initial/update-version",
		"POST /clusters/" + cluster + "/addons/kube-proxy/update",
	}
	slow := "POST /clusters/" + cluster + "/addons/aws-ebs-csi-driver/update"
	held := false
	return func(_ int, op string) faulty.Fault {
		mu.Lock()
		defer mu.Unlock()
		if op == slow && !held {
			held = true
			return faulty.Slow
		}
		for _, u := range updates {
			if op == u && !dropped[u] {
				dropped[u] = true
				return faulty.Drop
			}
		}
		n := seen[op]
		seen[op]++
		switch n % 7 {
		case 2:
			return faulty.Throttle
		case 4:
			return faulty.ServerError
		}
		return faulty.None
	}
}

// kubeFaults starts a TLS proxy in front of the API server of kubeconfig,
// forwarding with its credentials, and writes a kubeconfig that points at
// the proxy and trusts its certificate.
func kubeFaults(t *testing.T, kubeconfig string) (*faulty.Proxy, string) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	rp.FlushInterval = -1 // watches stream
	journalPut := "PUT /api/v1/namespaces/kube-system/configmaps/ladder-upgrade"
	var mu sync.Mutex
	seen := map[string]int{}
	held := false
	p := faulty.New(rp, func(_ int, op string) faulty.Fault {
		mu.Lock()
		defer mu.Unlock()
		n := seen[op]
		seen[op]++
		switch {
		case !held && n == 3 && strings.HasPrefix(op, "GET ") && !strings.HasSuffix(op, " watch"):
			held = true
			return faulty.Slow
		case op == journalPut && n%4 == 1:
			return faulty.Conflict
		case op == journalPut && n == 6:
			return faulty.Drop
		case strings.HasSuffix(op, " watch") || !strings.HasPrefix(op, "GET "):
			return faulty.None
		case n%9 == 2:
			return faulty.Throttle
		case n%9 == 5:
			return faulty.ServerError
		case n%9 == 7:
			return faulty.Drop
		}
		return faulty.None
	})
	p.Kubernetes = true
	p.SlowFor = 3 * kubeRequestTimeout
	srv := httptest.NewUnstartedServer(p)
	srv.StartTLS()
	t.Cleanup(srv.Close)

	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	for _, c := range raw.Clusters {
		c.Server, c.CertificateAuthority, c.CertificateAuthorityData = srv.URL, "", ca
	}
	for _, a := range raw.AuthInfos {
		// The proxy authenticates to the API server; Ladder to the proxy
		// with nothing.
		a.ClientCertificate, a.ClientKey, a.ClientCertificateData, a.ClientKeyData, a.Token, a.TokenFile = "", "", nil, nil, "", ""
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*raw, path); err != nil {
		t.Fatal(err)
	}
	return p, path
}
