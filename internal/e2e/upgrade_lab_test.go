//go:build lab

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/ladder-eks/ladder/internal/executor"
	"github.com/ladder-eks/ladder/internal/journal"
)

// smallScenario is testdata/small: the control plane, the four add-ons and
// managed node group initial (3 nodes, in place) under Deployment web and
// its PDB (minAvailable 2 of 3).
const smallScenario = "testdata/small/scenario.yaml"

// The small scenario's add-ons after the hop to 1.31, as the embedded table
// (internal/catalog/addons.csv) and the scenario's pin give them: vpc-cni
// and coredns have no newer build for 1.31 and stay.
var smallAddonsAt131 = map[string]string{
	"vpc-cni":            "v1.20.1-eksbuild.3",
	"coredns":            "v1.11.4-eksbuild.40",
	"kube-proxy":         "v1.31.14-eksbuild.20",
	"aws-ebs-csi-driver": "v1.36.0-eksbuild.1",
}

// The lab's EKS operations, as the recording proxy names them.
func updateClusterVersion(cluster string) string {
	return "POST /clusters/" + cluster + "/updates"
}

func updateNodegroupVersion(cluster, group string) string {
	return "POST /clusters/" + cluster + "/node-groups/" + group + "/update-version"
}

func updateAddon(cluster, addon string) string {
	return "POST /clusters/" + cluster + "/addons/" + addon + "/update"
}

// TestUpgradeOnTheLab is the user's run: `ladder lab up --scenario`, the
// exports of `ladder lab env`, `ladder upgrade --to 1.31 --approve
// --journal FILE`. At the end the lab's EKS says 1.31 for the cluster and
// each add-on its 1.31 version, every node runs a v1.31 kubelet, each
// original node was deleted once and none is left, one update was asked
// per target, every pod is Ready, and no PDB was ever exceeded while it
// ran. While it runs, a second `ladder upgrade` is refused, naming it, and
// `ladder view --journal FILE` open in headless Chromium shows a step under
// way and a node cordoned or draining; at the end, every node at 1.31 and
// every step done.
func TestUpgradeOnTheLab(t *testing.T) {
	l := startLab(t, smallScenario)
	settle(t, l)
	original := l.nodes(t)
	watch := watchBudgets(t, l)

	journalFile := filepath.Join(t.TempDir(), "journal.json")
	page := filepath.Join(t.TempDir(), "upgrade.html")
	view := startView(t, l, journalFile)
	began := time.Now()
	cmd := exec.Command(ladderBin, "upgrade", "--to", "1.31", "--approve", "--journal", journalFile, "--report", page)
	cmd.Env = l.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// While it runs — it holds the Lease, though its journal is a file —
	// a second upgrade of the cluster is refused, naming it.
	holder := fmt.Sprintf("/%d", cmd.Process.Pid)
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		lease, err := l.cs.CoordinationV1().Leases(journal.Namespace).Get(ctx, journal.Name, metav1.GetOptions{})
		return err == nil && strings.HasSuffix(ptr.Deref(lease.Spec.HolderIdentity, ""), holder), nil
	})
	if err != nil {
		t.Errorf("the upgrade never held the Lease %s/%s: %v", journal.Namespace, journal.Name, err)
	} else if code, out, errs := ladder(t, l.env, "upgrade", "--to", "1.31", "--approve"); code == 0 ||
		!strings.Contains(errs, "another ladder upgrade holds lease kube-system/ladder-upgrade (holder ") || !strings.Contains(errs, holder+",") {
		t.Errorf("a second upgrade while the first runs: exit %d\n%s\n%s", code, out, errs)
	}
	view.await(t, "a step under way and a node cordoned or draining", viewUpgrading, 3*time.Minute)
	view.screenshot(t, "upgrade")
	err = cmd.Wait()
	out, errs := stdout.String(), stderr.String()
	t.Logf("ladder upgrade --to 1.31 --approve: %v in %s", err, time.Since(began).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("ladder upgrade: %v\n%s\n%s", err, out, errs)
	}
	if !strings.Contains(out, "upgrade of "+l.cluster+" to 1.31 done") {
		t.Errorf("ladder upgrade does not say it is done:\n%s", out)
	}
	assertUpgraded(t, l, original, watch)
	assertJournalDone(t, journalFile)
	view.await(t, "every node at 1.31 and every step done", viewUpgraded, time.Minute)
	assertPredicted(t, l, "--journal", journalFile)
	if !strings.Contains(out, "prediction vs reality: agreed") {
		t.Errorf("ladder upgrade does not end with the comparison:\n%s", out)
	}
	if html, err := os.ReadFile(page); err != nil || !strings.Contains(string(html), "prediction vs reality: agreed") || !strings.Contains(string(html), "<td>node-group/initial</td><td>done</td><td>3/3</td>") {
		t.Errorf("ladder upgrade --report %s: %v\n%.2000s", page, err, html)
	}

	calls, updates := l.eksLog.counts()
	assertOneUpdatePerTarget(t, l.cluster, updates)
	for op, n := range calls {
		if strings.HasPrefix(op, "POST ") && n != 1 {
			t.Errorf("%s: %d calls, want 1 (the run was not interrupted)", op, n)
		}
	}
	if t.Failed() {
		t.Logf("ladder upgrade's output:\n%s\n%s", out, errs)
	}
}

// assertOneUpdatePerTarget checks that EKS made one update of each target
// the small scenario's hop changes, and none of the add-ons that stay.
func assertOneUpdatePerTarget(t *testing.T, cluster string, updates map[string]int) {
	t.Helper()
	want := map[string]int{
		updateClusterVersion(cluster):              1,
		updateNodegroupVersion(cluster, "initial"): 1,
		updateAddon(cluster, "kube-proxy"):         1,
		updateAddon(cluster, "aws-ebs-csi-driver"): 1,
	}
	if !maps.Equal(updates, want) {
		t.Errorf("updates EKS made: %v, want %v", updates, want)
	}
}

// assertUpgraded checks the lab after an upgrade of the small scenario to
// 1.31: EKS's cluster and add-on versions, the nodes, the pods and what
// watch saw of the PDBs and nodes.
func assertUpgraded(t *testing.T, l *lab, original map[string]corev1.Node, watch *budgetWatch) {
	t.Helper()
	ctx := t.Context()
	desc, err := l.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(l.cluster)})
	if err != nil {
		t.Fatal(err)
	}
	if v := aws.ToString(desc.Cluster.Version); v != "1.31" {
		t.Errorf("DescribeCluster: version %s, want 1.31", v)
	}
	if sv, err := l.cs.Discovery().ServerVersion(); err == nil {
		// The lab runs one release's binaries (1.37 by default); the EKS
		// endpoint carries the scenario's version.
		t.Logf("the lab API server's /version: %s", sv.GitVersion)
	}
	for name, want := range smallAddonsAt131 {
		a, err := l.eks.DescribeAddon(ctx, &eks.DescribeAddonInput{ClusterName: aws.String(l.cluster), AddonName: aws.String(name)})
		if err != nil {
			t.Errorf("DescribeAddon %s: %v", name, err)
			continue
		}
		if got := aws.ToString(a.Addon.AddonVersion); got != want {
			t.Errorf("add-on %s: %s, want %s", name, got, want)
		}
	}

	nodes := l.nodes(t)
	if len(nodes) != len(original) {
		t.Errorf("%d nodes after the upgrade, %d before", len(nodes), len(original))
	}
	for name, n := range nodes {
		if _, old := original[name]; old {
			t.Errorf("original node %s is still there (kubelet %s)", name, n.Status.NodeInfo.KubeletVersion)
		}
		if v := n.Status.NodeInfo.KubeletVersion; !strings.HasPrefix(v, "v1.31.") {
			t.Errorf("node %s: kubelet %s, want v1.31.x", name, v)
		}
	}
	podsReady(t, l)

	watch.mu.Lock()
	defer watch.mu.Unlock()
	for name := range original {
		if n := watch.deleted[name]; n != 1 {
			t.Errorf("original node %s deleted %d times, want once", name, n)
		}
	}
	for _, v := range watch.violations {
		t.Errorf("PDB exceeded: %s", v)
	}
	// As the rehearsal says: 3 nodes replaced, 9 launched (EKS surges up
	// to the group's zones and scales the surplus down).
	if launched := len(watch.created) - len(original); launched != 9 {
		t.Errorf("%d nodes launched, want 9 as rehearsed: %v", launched, watch.created)
	}
	t.Logf("lowest disruptionsAllowed: %v", watch.lowest)
}

// assertJournalDone checks that the journal holds every step as done.
func assertJournalDone(t *testing.T, file string) {
	t.Helper()
	rec, err := journal.ReadFile(file)
	if err != nil || rec == nil {
		t.Fatalf("the journal %s: %v, %v", file, rec, err)
	}
	steps := 0
	for _, k := range rec.Keys() {
		switch e := rec.Entries[k]; e.State {
		case executor.Calling:
			t.Errorf("journal: operation %s is recorded calling, never called", k)
		case executor.StepStarted, executor.StepFailed:
			t.Errorf("journal: step %s is %s, want done (%s)", k, e.State, e.Message)
		case executor.StepDone:
			steps++
		}
	}
	if steps == 0 {
		t.Errorf("the journal %s holds no step done", file)
	}
}
