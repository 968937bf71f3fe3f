package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// `ladder inventory --scenario workshop` lists the workshop's six node
// groups, one row each, as the text table and as JSON.
func TestInventoryWorkshop(t *testing.T) {
	code, stdout, stderr := runLadder("inventory", "--scenario", "workshop")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr: %s", code, stderr)
	}
	lines := strings.Split(stdout, "\n")
	if want := "Scenario workshop (cluster eksworkshop-eksctl, the twin's starting cluster): 6 node groups, 11 nodes, 47 pods on them"; lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	if !regexp.MustCompile(`^GROUP +TYPE +NODES +READY +ZONES +INSTANCE-TYPES +CAPACITY +KUBELET +KUBE-PROXY +AMI$`).MatchString(lines[2]) {
		t.Errorf("header %q", lines[2])
	}
	rows := []string{
		`blue-mng +managed +2 +2 +us-west-2a,us-west-2b +m5\.large +on-demand +v1\.30\.14-eks-f69f56f +v1\.30\.14-minimal-eksbuild\.28 +ami-0f676a166352f02ab`,
		`initial +managed +3 +3 +us-west-2a,us-west-2b,us-west-2c +m5\.large +on-demand `,
		`custom-Y +managed-custom-ami +2 +2 +us-west-2a,us-west-2b +m5\.large +on-demand `,
		`default-selfmng +self-managed +2 +2 +us-west-2a,us-west-2b +m5\.large +- `,
		`default +karpenter +1 +1 +us-west-2a +m6i\.large +spot `,
		`fp-profile +fargate +1 +1 +us-west-2a +- +- +v1\.30\.14-eks-f69f56f +v1\.30\.14-eks-f69f56f +-$`,
	}
	for i, re := range rows {
		if !regexp.MustCompile("^" + re).MatchString(lines[3+i]) {
			t.Errorf("row %d %q, want /%s/", i, lines[3+i], re)
		}
	}
	for _, want := range []string{
		"\nblue-mng (managed, 2 nodes): eks.amazonaws.com/nodegroup=blue-mng\n",
		"\n  orders        Deployment   orders-mysql   1\n",
		"\nfp-profile (fargate, 1 node): eks.amazonaws.com/fargate-profile=fp-profile\n  NAMESPACE   KIND         NAME     PODS\n  assets      Deployment   assets   1\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}

	code, stdout, stderr = runLadder("inventory", "--scenario", "workshop", "-o", "json")
	if code != 0 || stderr != "" {
		t.Fatalf("-o json: exit %d, stderr: %s", code, stderr)
	}
	var inv struct {
		Source struct{ Kind, Name string }
		Groups []struct {
			Name, Type      string
			Nodes           int
			KubeletVersions map[string]int
			Workloads       []struct {
				Namespace, Kind, Name string
				Pods                  int
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &inv); err != nil {
		t.Fatalf("-o json: %v\n%s", err, stdout)
	}
	var got []string
	for _, g := range inv.Groups {
		got = append(got, fmt.Sprintf("%s/%s/%d/%v", g.Name, g.Type, g.Nodes, g.KubeletVersions))
	}
	want := []string{
		"blue-mng/managed/2/map[v1.30.14-eks-f69f56f:2]",
		"initial/managed/3/map[v1.30.14-eks-f69f56f:3]",
		"custom-Y/managed-custom-ami/2/map[v1.30.14-eks-f69f56f:2]",
		"default-selfmng/self-managed/2/map[v1.30.14-eks-f69f56f:2]",
		"default/karpenter/1/map[v1.30.14-eks-f69f56f:1]",
		"fp-profile/fargate/1/map[v1.30.14-eks-f69f56f:1]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("JSON groups:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if inv.Source.Kind != "scenario" || inv.Source.Name != "workshop" {
		t.Errorf("source %+v", inv.Source)
	}
}

// A scenario file is inventoried as the twin builds it: the minimal
// scenario's one Karpenter node, its AMI from the EC2NodeClass, and the
// Deployment it runs. A broken file is one line naming file, line and field.
func TestInventoryScenarioFile(t *testing.T) {
	path, _ := writeScenario(t)
	code, stdout, stderr := runLadder("inventory", "--scenario", path)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr: %s", code, stderr)
	}
	lines := strings.Split(stdout, "\n")
	if want := "Scenario minimal (cluster test, the twin's starting cluster): 1 node group, 1 node, 1 pod on them"; lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	row := `^default +karpenter +1 +1 +us-west-2a +m5\.large +on-demand +v1\.30\.14-eks-f69f56f +v1\.30\.14-eks-f69f56f +ami-0f676a166352f02ab$`
	if len(lines) < 4 || !regexp.MustCompile(row).MatchString(lines[3]) {
		t.Errorf("row %q, want /%s/:\n%s", lines[3], row, stdout)
	}
	if want := "\ndefault (karpenter, 1 node): karpenter.sh/nodepool=default\n  AMI ami-0f676a166352f02ab is amazon-eks-node-al2023-x86_64-standard-1.30-v20260220\n  NAMESPACE   KIND         NAME   PODS\n  app         Deployment   web    1\n"; !strings.Contains(stdout, want) {
		t.Errorf("output lacks %q:\n%s", want, stdout)
	}

	bad, files := writeScenario(t, edit{"scenario.yaml", "  nodeGroups:", "  nodeGrups:"})
	code, stdout, stderr = runLadder("inventory", "--scenario", bad)
	want := fmt.Sprintf("error: %s:%d: spec.nodeGrups: unknown field", bad, lineOf(t, files["scenario.yaml"], "nodeGrups:"))
	if code != 1 || stdout != "" || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("broken scenario: exit %d, stdout %q, stderr %q; want exit 1 and one line starting %q", code, stdout, stderr, want)
	}
}

// Bad input and unreachable clusters end with one line naming the problem
// and the fix, and exit 1.
func TestInventoryErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: lab
  cluster: {server: "http://`+closed+`"}
users:
- name: admin
  user: {token: secret}
contexts:
- name: lab
  context: {cluster: lab, user: admin}
current-context: lab
`), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := write("empty", "")
	malformed := write("malformed", "apiVersion: v1\nkind: Config\nclusters: [\n")
	noCluster := write("no-cluster", `apiVersion: v1
kind: Config
contexts:
- name: prod
  context: {cluster: prod-cluster, user: admin}
current-context: prod
`)
	noServer := write("no-server", `apiVersion: v1
kind: Config
clusters:
- name: prod-cluster
  cluster: {}
users:
- name: admin
  user: {token: secret}
contexts:
- name: prod
  context: {cluster: prod-cluster, user: admin}
current-context: prod
`)
	noUser := write("no-user", `apiVersion: v1
kind: Config
clusters:
- name: prod-cluster
  cluster: {server: "https://127.0.0.1:1"}
contexts:
- name: prod
  context: {cluster: prod-cluster, user: nobody}
current-context: prod
`)
	noCurrent := write("no-current", `apiVersion: v1
kind: Config
clusters:
- name: prod-cluster
  cluster: {server: "https://127.0.0.1:1"}
contexts:
- name: prod
  context: {cluster: prod-cluster}
- name: dev
  context: {cluster: prod-cluster}
`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", "yaml", "--scenario", "workshop"}, `error: -o "yaml": use text or json`},
		{[]string{"--scenario", "workshop", "--context", "lab"}, "error: --scenario inventories a scenario, --kubeconfig/--context/--cluster a cluster: give one or the other"},
		{[]string{"--scenario", "nope"}, `error: "nope" is neither a built-in scenario`},
		{[]string{"--kubeconfig", kubeconfig}, "error: cannot reach the API server at http://" + closed + ": "},
		{[]string{"--kubeconfig", kubeconfig, "--context", "prod"}, `error: --context "prod": no such context in the kubeconfig (known: lab)`},
		{[]string{"--kubeconfig", empty}, "error: no kubeconfig with a context found (looked at " + empty + "): pass --kubeconfig, set KUBECONFIG, or inventory a scenario with --scenario"},
		{[]string{"--kubeconfig", filepath.Join(dir, "missing")}, "error: reading the kubeconfig: stat " + filepath.Join(dir, "missing") + ": no such file or directory (fix the file or pass another with --kubeconfig)"},
		{[]string{"--kubeconfig", malformed}, `error: reading the kubeconfig: error loading config file "` + malformed + `": `},
		{[]string{"--kubeconfig", noCluster}, `error: kubeconfig context "prod" names cluster "prod-cluster", which the kubeconfig does not define (known clusters: none): fix the context or pick another with --context`},
		{[]string{"--kubeconfig", noServer}, `error: kubeconfig cluster "prod-cluster" (context "prod") has no server: set clusters[].cluster.server, or for EKS run aws eks update-kubeconfig --name CLUSTER`},
		{[]string{"--kubeconfig", noUser}, `error: kubeconfig context "prod" names user "nobody", which the kubeconfig does not define (known users: none): fix the context or pick another with --context`},
		{[]string{"--kubeconfig", noCurrent}, `error: the kubeconfig has no current context: pass --context (one of dev, prod)`},
		{[]string{"--kubeconfig", kubeconfig, "--request-timeout", "-5s"}, `error: invalid argument "-5s" for "--request-timeout" flag: give a duration such as 30s or 2m, or 0 to wait for ever`},
		{[]string{"--kubeconfig", kubeconfig, "--request-timeout", "soon"}, `error: invalid argument "soon" for "--request-timeout" flag: give a duration such as 30s or 2m, or 0 to wait for ever`},
	} {
		code, stdout, stderr := runLadder(append([]string{"inventory"}, tc.args...)...)
		if code != 1 || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q; want exit 1 and no output", tc.args, code, stdout)
		}
		if !strings.HasPrefix(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: stderr %q, want one line starting %q", tc.args, stderr, tc.want)
		}
	}
}
