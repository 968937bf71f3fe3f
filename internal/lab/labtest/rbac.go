package labtest

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// ApplyRBAC creates the roles and bindings of a file like deploy/*-rbac.yaml,
// decoded with the upstream types. With cleanup, they are deleted when the
// test ends (for a lab shared by a package's tests).
func ApplyRBAC(t testing.TB, ctx context.Context, cs kubernetes.Interface, path string, cleanup bool) {
	t.Helper()
	data, err := os.ReadFile(path)
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
			t.Fatalf("%s: %v", path, err)
		}
		var del func() error
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			_, err = cs.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
			del = func() error {
				return cs.RbacV1().ClusterRoles().Delete(context.Background(), o.Name, metav1.DeleteOptions{})
			}
		case *rbacv1.Role:
			_, err = cs.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			del = func() error {
				return cs.RbacV1().Roles(o.Namespace).Delete(context.Background(), o.Name, metav1.DeleteOptions{})
			}
		case *rbacv1.ClusterRoleBinding:
			_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
			del = func() error {
				return cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), o.Name, metav1.DeleteOptions{})
			}
		case *rbacv1.RoleBinding:
			_, err = cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			del = func() error {
				return cs.RbacV1().RoleBindings(o.Namespace).Delete(context.Background(), o.Name, metav1.DeleteOptions{})
			}
		default:
			t.Fatalf("%s: unexpected %T", path, obj)
		}
		if err != nil {
			t.Fatal(err)
		}
		if cleanup {
			t.Cleanup(func() {
				if err := del(); err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("deleting what %s made: %v", path, err)
				}
			})
		}
	}
}
