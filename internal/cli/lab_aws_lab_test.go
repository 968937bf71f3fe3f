//go:build lab

package cli

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/ladder-eks/ladder/internal/lab"
	"github.com/ladder-eks/ladder/internal/lab/labtest"
)

// asLadderEnv makes the test binary play ladder: `lab up` starts the AWS
// endpoints as a child of the running binary (os.Executable), which here
// is this test binary.
const asLadderEnv = "LADDER_CLI_TEST_AS_LADDER"

func TestMain(m *testing.M) {
	if os.Getenv(asLadderEnv) != "" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// `ladder lab up --scenario workshop` on real binaries: the AWS endpoints
// are a healthy component; `lab env`'s exports alone drive aws-sdk-go-v2's
// EKS client (DescribeCluster: 1.30) and `ladder check`, which judges the
// workshop's 1.30 nodes against EKS's 1.30, not the lab API server's own
// minor; `lab down` stops the endpoints with the rest.
func TestLabUpServesAWS(t *testing.T) {
	dir, st, awsPID := labWithAWS(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := eks.NewFromConfig(cfg).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(st.Lab.AWS.Cluster)})
	if err != nil {
		t.Fatalf("DescribeCluster with lab env's exports: %v", err)
	}
	if v := aws.ToString(desc.Cluster.Version); v != "1.30" {
		t.Errorf("DescribeCluster: %s, want the workshop's 1.30", v)
	}

	// ladder check on the lab, configured by the exports alone.
	var checkOut, checkErr strings.Builder
	Main([]string{"check"}, &checkOut, &checkErr)
	report := checkOut.String()
	if !strings.HasPrefix(report, "Control plane 1.30 (EKS DescribeCluster of cluster "+st.Lab.AWS.Cluster+").") ||
		!strings.Contains(report, "Upgrade 1.30 → 1.31") {
		t.Errorf("ladder check on the lab does not take 1.30 from EKS:\n%s\n%s", report, checkErr.String())
	}
	if minor := strings.TrimPrefix(st.Lab.Kubernetes, "v")[:4]; strings.Contains(report, "control plane's "+minor) {
		t.Errorf("ladder check judges nodes against the lab API server's %s:\n%s", minor, report)
	}

	if code, stdout, stderr := runLab(t, "down", "--dir", dir); code != 0 || !strings.Contains(stdout, "stopped "+string(lab.AWSEndpoints)) {
		t.Errorf("lab down: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Gone: signal 0 fails once the process is reaped (this process
	// started it, and reaps it).
	for deadline := time.Now().Add(5 * time.Second); syscall.Kill(awsPID, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) still runs after lab down", lab.AWSEndpoints, awsPID)
		}
	}
}

// labWithAWS starts a lab of the workshop with its AWS endpoints and puts
// `lab env`'s exports, as a shell evaluates them, into the test's
// environment; it returns the lab's directory, its status and the
// endpoints' pid. The lab is stopped when the test ends.
func labWithAWS(t *testing.T) (string, *lab.Status, int) {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	t.Setenv(asLadderEnv, "1")
	dir, err := labtest.NewDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		runLab(t, "down", "--dir", dir)
		os.RemoveAll(dir)
	})
	began := time.Now()
	if code, stdout, stderr := runLab(t, "up", "--dir", dir, "--scenario", "workshop"); code != 0 {
		t.Fatalf("lab up: exit %d\n%s\n%s", code, stdout, stderr)
	} else if !strings.Contains(stdout, `eval "$(ladder lab env --dir `+dir+`)"`) {
		t.Errorf("lab up does not print the lab env hint:\n%s", stdout)
	}
	t.Logf("lab up --scenario workshop: %s", time.Since(began).Round(time.Millisecond))

	st, err := lab.GetStatus(dir)
	if err != nil {
		t.Fatal(err)
	}
	var awsPID int
	for _, c := range st.Components {
		if c.Name == lab.AWSEndpoints {
			awsPID = c.PID
		}
		if !c.Healthy {
			t.Errorf("%s: %s", c.Name, c.Problem)
		}
	}
	if awsPID == 0 || st.Lab.AWS == nil {
		t.Fatalf("no %s component in the lab: %+v", lab.AWSEndpoints, st.Components)
	}

	// The exports, evaluated by a shell, are the whole configuration.
	code, exports, stderr := runLab(t, "env", "--dir", dir)
	if code != 0 {
		t.Fatalf("lab env: exit %d: %s", code, stderr)
	}
	out, err := exec.Command(sh, "-c", `eval "$1"; env`, "sh", exports).Output()
	if err != nil {
		t.Fatalf("sh: %v\n%s", err, exports)
	}
	for line := range strings.Lines(string(out)) {
		k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
		if strings.HasPrefix(k, "AWS_") || k == "KUBECONFIG" {
			t.Setenv(k, v)
		}
	}
	return dir, st, awsPID
}
