package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/ladder-eks/ladder/internal/lab"
)

// writeLabState writes DIR/lab.json for a lab whose every component is
// this test process, healthy at health, and — with aws — whose AWS
// endpoints are the workshop's twins on 127.0.0.1.
func writeLabState(t *testing.T, dir string, pid int, aws bool) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(ok.Close)
	st := lab.State{Kubernetes: "v1.37.2", Dir: dir, Kubeconfig: filepath.Join(dir, "kube config"), Server: "https://127.0.0.1:1"}
	rec := func(c lab.Component, health string) lab.ProcessState {
		var ps lab.ProcessState
		data, _ := json.Marshal(map[string]any{"name": c, "pid": pid, "binary": exe, "health": map[string]string{"url": health},
			"log": filepath.Join(dir, "logs", string(c)+".log")})
		if err := json.Unmarshal(data, &ps); err != nil {
			t.Fatal(err)
		}
		return ps
	}
	for _, c := range lab.Components {
		st.Components = append(st.Components, rec(c, ok.URL))
	}
	if aws {
		url := serveWorkshopEKS(t)
		st.AWS = &lab.AWSState{Endpoint: url, Scenario: "workshop", Region: "us-west-2", Cluster: "eksworkshop-eksctl", TimeScale: 60}
		st.Components = append(st.Components, rec(lab.AWSEndpoints, url+"/healthz"))
	}
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lab.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// `ladder lab env` prints exports that a shell evaluates into the lab's
// endpoint, region, dummy credentials and kubeconfig (a path with a space
// survives), and aws-sdk-go-v2's default configuration built from them
// alone reaches the lab's EKS: DescribeCluster says the scenario's 1.30.
// `lab status` names the endpoint.
func TestLabEnv(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	writeLabState(t, dir, os.Getpid(), true)
	url := os.Getenv("AWS_ENDPOINT_URL_EKS")
	for _, k := range []string{"AWS_ENDPOINT_URL_EKS", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		t.Setenv(k, "") // from the exports only
	}
	code, stdout, stderr := runLab(t, "status", "--dir", dir)
	if want := "AWS endpoints: " + url + " (scenario workshop, cluster eksworkshop-eksctl in us-west-2;"; code != 0 || !strings.Contains(stdout, want) || !strings.Contains(stdout, "aws-serve") {
		t.Errorf("lab status: exit %d, %s%s; want the line %q and the aws-serve component", code, stdout, stderr, want)
	}
	code, stdout, stderr = runLab(t, "env", "--dir", dir)
	if code != 0 {
		t.Fatalf("lab env: exit %d: %s", code, stderr)
	}
	names := []string{"AWS_ENDPOINT_URL_EKS", "AWS_ENDPOINT_URL_AUTO_SCALING", "AWS_ENDPOINT_URL_EC2", "AWS_ENDPOINT_URL_SSM",
		"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "KUBECONFIG"}
	script := `eval "$1"; shift; for v; do eval "printf '%s=%s\n' \"\$v\" \"\$$v\""; done`
	out, err := exec.Command(sh, append([]string{"-c", script, "sh", stdout}, names...)...).Output()
	if err != nil {
		t.Fatalf("sh eval: %v\n%s", err, stdout)
	}
	env := map[string]string{}
	for line := range strings.Lines(string(out)) {
		k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
		env[k] = v
	}
	for _, k := range names[:4] {
		if env[k] != url {
			t.Errorf("%s=%q, want %s", k, env[k], url)
		}
	}
	if env["AWS_REGION"] != "us-west-2" || env["AWS_DEFAULT_REGION"] != "us-west-2" || env["KUBECONFIG"] != filepath.Join(dir, "kube config") {
		t.Errorf("exports evaluate to %v", env)
	}
	for _, k := range names {
		t.Setenv(k, env[k])
	}
	cfg, err := config.LoadDefaultConfig(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	desc, err := eks.NewFromConfig(cfg).DescribeCluster(t.Context(), &eks.DescribeClusterInput{Name: aws.String("eksworkshop-eksctl")})
	if err != nil {
		t.Fatalf("DescribeCluster with the exports: %v", err)
	}
	if v := aws.ToString(desc.Cluster.Version); v != "1.30" {
		t.Errorf("DescribeCluster: version %s, want 1.30", v)
	}
}

// Without a lab, without AWS endpoints, or with its processes gone, `lab
// env` prints nothing and says in one line what to run.
func TestLabEnvRefuses(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no `true` command:", err)
	}
	cases := []struct {
		name  string
		state func(dir string)
		want  string
	}{
		{"no lab", func(string) {}, "start one with `ladder lab up --dir DIR --scenario workshop`"},
		{"no AWS endpoints", func(dir string) { writeLabState(t, dir, os.Getpid(), false) }, "serves no AWS endpoints: it was started without --scenario"},
		{"stale", func(dir string) { writeLabState(t, dir, dead.Process.Pid, true) }, "does not run (its processes are gone): `ladder lab up --dir DIR --scenario workshop`"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.state(dir)
			code, stdout, stderr := runLab(t, "env", "--dir", dir)
			want := strings.ReplaceAll(tc.want, "DIR", dir)
			if code != 1 || stdout != "" || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stdout %q, stderr %q; want 1, nothing, and one line with %q", code, stdout, stderr, want)
			}
		})
	}
}
