//go:build lab

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/awsserve"
	"github.com/ladder-eks/ladder/internal/awsserve/twinserve"
	"github.com/ladder-eks/ladder/internal/lab"
	"github.com/ladder-eks/ladder/internal/lab/labtest"
	"github.com/ladder-eks/ladder/internal/scenario"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestLabLeastPrivilege: on the workshop's lab, an identity holding only
// deploy/ladder-upgrade-rbac.yaml's roles captures the cluster, plans its
// upgrade and runs the dry run of `ladder upgrade`; without list on
// persistentvolumes, capture stops with one line naming the verb and the
// resource.
func TestLabLeastPrivilege(t *testing.T) {
	st, cs := labWithRBAC(t, "ladder-upgrade-rbac.yaml")
	ctx := context.Background()

	// The bindings name the group ladder-upgrade.
	kubeconfig := impersonating(t, "ladder-upgrade")
	cluster := st.Lab.AWS.Cluster
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Main(append(args, "--kubeconfig", kubeconfig, "--cluster", cluster), &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, out, errs := run("capture", "--to", filepath.Join(t.TempDir(), "c")); code != 0 {
		t.Fatalf("capture with the role: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := run("plan", "--to", "1.31"); code != 0 || !strings.HasPrefix(out, "# Upgrade runbook: "+cluster+" 1.30 → 1.31") {
		t.Fatalf("plan with the role: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := run("upgrade", "--to", "1.31"); code != 0 || !strings.Contains(out, "Dry run: nothing was changed.") {
		t.Fatalf("upgrade's dry run with the role: exit %d\n%s\n%s", code, out, errs)
	}

	// Take list on persistentvolumes away.
	cr, err := cs.RbacV1().ClusterRoles().Get(ctx, "ladder-upgrade", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range cr.Rules {
		var kept []string
		for _, res := range r.Resources {
			if res != "persistentvolumes" {
				kept = append(kept, res)
			}
		}
		cr.Rules[i].Resources = kept
	}
	if _, err := cs.RbacV1().ClusterRoles().Update(ctx, cr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	code, _, errs := run("capture", "--to", filepath.Join(t.TempDir(), "d"))
	if code == 0 || strings.Count(strings.TrimSpace(errs), "\n") > 0 ||
		!strings.Contains(errs, `cannot list resource "persistentvolumes"`) || !strings.Contains(errs, `User "ladder"`) {
		t.Errorf("capture without list on persistentvolumes: exit %d, stderr %q", code, errs)
	}
}

// labWithRBAC is the workshop's lab with its AWS endpoints (labWithAWS)
// and the roles and bindings of each deploy/FILE applied, and an admin
// client of it.
func labWithRBAC(t *testing.T, files ...string) (*lab.Status, kubernetes.Interface) {
	t.Helper()
	_, st, _ := labWithAWS(t)
	admin, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(admin)
	for _, f := range files {
		applyRBAC(t, context.Background(), cs, f)
	}
	return st, cs
}

// impersonating is the lab's admin kubeconfig ($KUBECONFIG) made to
// impersonate user ladder in group: an identity with only the rights the
// group's bindings give.
func impersonating(t *testing.T, group string) string {
	t.Helper()
	raw, err := clientcmd.LoadFromFile(os.Getenv("KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range raw.AuthInfos {
		u.Impersonate, u.ImpersonateGroups = "ladder", []string{group}
	}
	path := filepath.Join(t.TempDir(), group+".kubeconfig")
	if err := clientcmd.WriteToFile(*raw, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// applyRBAC creates the roles and bindings of deploy/FILE.
func applyRBAC(t *testing.T, ctx context.Context, cs kubernetes.Interface, file string) {
	t.Helper()
	labtest.ApplyRBAC(t, ctx, cs, "../../deploy/"+file, false)
}

// TestLabLeastPrivilegePerCommand: `ladder check`, `ladder capture` and
// `ladder plan` each work on the workshop's lab holding only their own
// role (deploy/ladder-check-rbac.yaml, deploy/ladder-capture-rbac.yaml)
// and IAM policy (deploy/ladder-check-iam-policy.json,
// deploy/ladder-capture-iam-policy.json), the lab's AWS endpoints
// evaluating the policy; capture without any one of its policy's actions
// stops with one line naming that action (but ec2:DescribeImages, asked
// only of images the catalog does not know), and check without list on
// pods with one line naming the verb and the resource. So the capture
// policy misses no action and holds none the workshop does not need.
func TestLabLeastPrivilegePerCommand(t *testing.T) {
	st, cs := labWithRBAC(t, "ladder-check-rbac.yaml", "ladder-capture-rbac.yaml")
	ctx := context.Background()
	cluster := st.Lab.AWS.Cluster
	sc, err := scenario.LoadBuiltin("workshop")
	if err != nil {
		t.Fatal(err)
	}

	// iam points the AWS endpoints at the workshop's twins evaluating
	// deploy/FILE without the actions in drop.
	iam := func(file string, drop ...string) []string {
		t.Helper()
		data, err := os.ReadFile("../../deploy/" + file)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Version   string
			Statement []struct {
				Sid, Effect string
				Action      []string
				Resource    any
			}
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("deploy/%s: %v", file, err)
		}
		var actions []string
		for i := range doc.Statement {
			kept := doc.Statement[i].Action[:0]
			for _, a := range doc.Statement[i].Action {
				if !slices.Contains(drop, a) {
					kept = append(kept, a)
				}
			}
			doc.Statement[i].Action = kept
			actions = append(actions, kept...)
		}
		data, _ = json.Marshal(doc)
		policy, err := awsserve.ParsePolicy(data)
		if err != nil {
			t.Fatalf("deploy/%s: %v", file, err)
		}
		tw, err := twinserve.New(sc, 0)
		if err != nil {
			t.Fatal(err)
		}
		tw.SetPolicy(policy)
		srv := httptest.NewServer(tw)
		t.Cleanup(srv.Close)
		for _, k := range []string{"AWS_ENDPOINT_URL_EKS", "AWS_ENDPOINT_URL_SSM", "AWS_ENDPOINT_URL_AUTO_SCALING", "AWS_ENDPOINT_URL_EC2"} {
			t.Setenv(k, srv.URL)
		}
		return actions
	}
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Main(args, &out, &errb)
		return code, out.String(), errb.String()
	}

	checkAs := impersonating(t, "ladder-check")
	iam("ladder-check-iam-policy.json")
	code, out, errs := run("check", "--kubeconfig", checkAs, "--cluster", cluster, "-o", "json")
	if code == 1 || strings.Contains(out+errs, "forbidden") || !strings.Contains(out, `"`+cluster+`"`) {
		t.Errorf("check with its role and policy: exit %d\n%s\n%s", code, out, errs)
	}
	iam("ladder-check-iam-policy.json", "eks:DescribeCluster")
	if code, _, errs := run("check", "--kubeconfig", checkAs, "--cluster", cluster); code == 0 || !strings.Contains(errs, "not authorized to perform: eks:DescribeCluster") {
		t.Errorf("check without eks:DescribeCluster: exit %d, stderr %q", code, errs)
	}

	captureAs := impersonating(t, "ladder-capture")
	actions := iam("ladder-capture-iam-policy.json")
	// Without --cluster: the cluster is the only one ListClusters returns.
	if code, out, errs := run("capture", "--kubeconfig", captureAs, "--to", filepath.Join(t.TempDir(), "c")); code != 0 {
		t.Fatalf("capture with its role and policy: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := run("plan", "--kubeconfig", captureAs, "--to", "1.31"); code != 0 || !strings.HasPrefix(out, "# Upgrade runbook: "+cluster+" 1.30 → 1.31") {
		t.Fatalf("plan with capture's role and policy: exit %d\n%s\n%s", code, out, errs)
	}
	for _, action := range actions {
		iam("ladder-capture-iam-policy.json", action)
		code, _, errs := run("capture", "--kubeconfig", captureAs, "--to", filepath.Join(t.TempDir(), "d"))
		if action == "ec2:DescribeImages" {
			// Asked only of an image the catalog does not know (a golden
			// AMI): the workshop's are all EKS-optimized ones it knows.
			if code != 0 {
				t.Errorf("capture without %s, all images known: exit %d, stderr %q", action, code, errs)
			}
			continue
		}
		if code == 0 || strings.Count(strings.TrimSpace(errs), "\n") > 0 || !strings.Contains(errs, "not authorized to perform: "+action) {
			t.Errorf("capture without %s: exit %d, stderr %q", action, code, errs)
		}
	}

	// check without list on pods.
	cr, err := cs.RbacV1().ClusterRoles().Get(ctx, "ladder-check", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range cr.Rules {
		cr.Rules[i].Resources = slices.DeleteFunc(r.Resources, func(s string) bool { return s == "pods" })
	}
	if _, err := cs.RbacV1().ClusterRoles().Update(ctx, cr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	iam("ladder-check-iam-policy.json")
	code, _, errs = run("check", "--kubeconfig", checkAs, "--cluster", cluster)
	if code == 0 || strings.Count(strings.TrimSpace(errs), "\n") > 0 || !strings.Contains(errs, "cannot list pods") {
		t.Errorf("check without list on pods: exit %d, stderr %q", code, errs)
	}
}
