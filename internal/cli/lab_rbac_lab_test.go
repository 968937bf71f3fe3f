//go:build lab

package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
)

// TestLabLeastPrivilege: on the workshop's lab, an identity holding only
// deploy/ladder-upgrade-rbac.yaml's roles captures the cluster, plans its
// upgrade and runs the dry run of `ladder upgrade`; without list on
// persistentvolumes, capture stops with one line naming the verb and the
// resource.
func TestLabLeastPrivilege(t *testing.T) {
	_, st, _ := labWithAWS(t)
	admin, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(admin)
	ctx := context.Background()
	applyRBAC(t, ctx, cs)

	// A kubeconfig that impersonates user ladder in group ladder-upgrade,
	// the group the bindings name.
	raw, err := clientcmd.LoadFromFile(os.Getenv("KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range raw.AuthInfos {
		u.Impersonate, u.ImpersonateGroups = "ladder", []string{"ladder-upgrade"}
	}
	kubeconfig := filepath.Join(t.TempDir(), "ladder-upgrade.kubeconfig")
	if err := clientcmd.WriteToFile(*raw, kubeconfig); err != nil {
		t.Fatal(err)
	}
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

// applyRBAC creates the roles and bindings of deploy/ladder-upgrade-rbac.yaml,
// decoded with the upstream types.
func applyRBAC(t *testing.T, ctx context.Context, cs kubernetes.Interface) {
	t.Helper()
	data, err := os.ReadFile("../../deploy/ladder-upgrade-rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("deploy/ladder-upgrade-rbac.yaml: %v", err)
		}
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			_, err = cs.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.Role:
			_, err = cs.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("deploy/ladder-upgrade-rbac.yaml: unexpected %T", obj)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
