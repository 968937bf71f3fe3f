package cli

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/awsserve/twinserve"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// serveWorkshopEKS serves the workshop scenario's AWS endpoints on
// 127.0.0.1 and points the environment at them as `ladder lab env` does,
// with no shared config or credentials file of the machine's in the way.
func serveWorkshopEKS(t *testing.T) string {
	t.Helper()
	sc, err := scenario.Resolve("workshop")
	if err != nil {
		t.Fatal(err)
	}
	tw, err := twinserve.New(sc, 1)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(tw)
	t.Cleanup(srv.Close)
	none := filepath.Join(t.TempDir(), "none")
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_EKS": srv.URL, "AWS_REGION": sc.Spec.Cluster.Region, "AWS_DEFAULT_REGION": "",
		"AWS_ACCESS_KEY_ID": twinserve.AccessKeyID, "AWS_SECRET_ACCESS_KEY": twinserve.SecretAccessKey, "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_CONFIG_FILE": none, "AWS_SHARED_CREDENTIALS_FILE": none, "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_MAX_ATTEMPTS": "1",
	} {
		t.Setenv(k, v)
	}
	return srv.URL
}

// The control plane's version comes from DescribeCluster, for the cluster
// --cluster names, else the kubeconfig's EKS-spelled cluster entry, else
// the only one ListClusters returns; each way it fails says what to do.
func TestDescribeEKSCluster(t *testing.T) {
	url := serveWorkshopEKS(t)
	cases := []struct {
		name, flag, entry string
		env               map[string]string
		want              string // the version, or a part of the error
	}{
		{name: "--cluster", flag: "eksworkshop-eksctl", entry: "ladder-lab", want: "1.30"},
		{name: "update-kubeconfig's ARN", entry: "arn:aws:eks:us-west-2:111122223333:cluster/eksworkshop-eksctl", want: "1.30"},
		{name: "eksctl's name", entry: "eksworkshop-eksctl.us-west-2.eksctl.io", want: "1.30"},
		{name: "the only cluster listed", entry: "ladder-lab", want: "1.30"},
		{name: "unknown cluster", flag: "shop", want: `EKS at ` + url + ` (AWS_ENDPOINT_URL_EKS, region us-west-2) has no cluster "shop": pass --cluster`},
		{name: "an ARN of another cluster", entry: "arn:aws:eks:us-west-2:111122223333:cluster/shop", want: `has no cluster "shop"`},
		{name: "no region", flag: "eksworkshop-eksctl", env: map[string]string{"AWS_REGION": ""}, want: "no AWS region: set AWS_REGION"},
		{name: "endpoint down", flag: "eksworkshop-eksctl", env: map[string]string{"AWS_ENDPOINT_URL_EKS": "http://127.0.0.1:1"},
			want: "`ladder lab status` for a lab — or unset AWS_ENDPOINT_URL_EKS"},
		{name: "other credentials", flag: "eksworkshop-eksctl", env: map[string]string{"AWS_SECRET_ACCESS_KEY": "not-the-labs-secret"},
			want: "InvalidSignatureException"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cp, err := describeEKSCluster(t.Context(), tc.flag, tc.entry)
			got := ""
			if err != nil {
				got = err.Error()
				if strings.Contains(got, "\n") || strings.Contains(got, "not-the-labs-secret") || strings.Contains(got, twinserve.SecretAccessKey) {
					t.Errorf("error %q: want one line without a secret", got)
				}
			} else {
				got = cp.Version.String()
				if cp.Name != "eksworkshop-eksctl" {
					t.Errorf("cluster %q, want eksworkshop-eksctl", cp.Name)
				}
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// ladder check and ladder inventory on a live cluster ask EKS first when
// an EKS endpoint is configured or --cluster is given: a cluster EKS does
// not have fails them before they read the API server (there is none
// here), and without either they never ask.
func TestLiveCommandsAskEKS(t *testing.T) {
	serveWorkshopEKS(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: arn:aws:eks:us-west-2:111122223333:cluster/shop
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: admin
  user: {token: t}
contexts:
- name: shop
  context: {cluster: "arn:aws:eks:us-west-2:111122223333:cluster/shop", user: admin}
current-context: shop
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"check", "--kubeconfig", kubeconfig},
		{"inventory", "--kubeconfig", kubeconfig},
		{"check", "--kubeconfig", kubeconfig, "--cluster", "orders"},
		{"inventory", "--kubeconfig", kubeconfig, "--cluster", "orders"},
	} {
		want := `has no cluster "shop"`
		if len(args) > 3 {
			want = `has no cluster "orders"`
		}
		var out, errb strings.Builder
		if code := Main(args, &out, &errb); code != 1 || !strings.Contains(errb.String(), want) {
			t.Errorf("%v: exit %d, %q; want 1 and %q", args, code, errb.String(), want)
		}
	}
	t.Setenv("AWS_ENDPOINT_URL_EKS", "")
	for _, args := range [][]string{{"check", "--kubeconfig", kubeconfig}, {"inventory", "--kubeconfig", kubeconfig}} {
		var out, errb strings.Builder
		if code := Main(args, &out, &errb); code != 1 || strings.Contains(errb.String(), "has no cluster") || !strings.Contains(errb.String(), "127.0.0.1:1") {
			t.Errorf("%v without an EKS endpoint: exit %d, %q; want the API server's error", args, code, errb.String())
		}
	}
}
