package labtest

import (
	"context"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// User is a ServiceAccount of the lab seen as a client: a token of its own
// and no rights until Grant gives it some. Tests of "forbidden" errors use
// it to be a real identity that RBAC refuses.
type User struct {
	// Config authenticates as the ServiceAccount with its token only.
	Config *rest.Config
	// Name is the user the API server sees and names in a 403,
	// system:serviceaccount:NAMESPACE:NAME.
	Name string

	t       testing.TB
	admin   kubernetes.Interface
	ns, sa  string
	role    string
	granted bool
}

// NewUser creates the ServiceAccount name in ns (a Namespace of t, which
// deletes it) and a token for it.
func NewUser(t testing.TB, cfg *rest.Config, ns, name string) *User {
	t.Helper()
	admin, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("labtest: creating ServiceAccount %s/%s: %v", ns, name, err)
	}
	tr, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("labtest: TokenRequest for %s/%s: %v", ns, name, err)
	}
	c := rest.AnonymousClientConfig(cfg)
	c.BearerToken = tr.Status.Token
	return &User{
		Config: c,
		Name:   "system:serviceaccount:" + ns + ":" + name,
		t:      t, admin: admin, ns: ns, sa: name,
		role: "labtest-" + ns + "-" + name,
	}
}

// Grant replaces the user's rights with rules, on the whole cluster: one
// ClusterRole bound to the ServiceAccount, both deleted when t ends. RBAC
// reaches the authorizer through its informers, so a call the rules allow
// may still be refused for a moment: poll for the first allowed call.
func (u *User) Grant(rules ...rbacv1.PolicyRule) {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	roles := u.admin.RbacV1().ClusterRoles()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: u.role}, Rules: rules}
	if u.granted {
		if _, err := roles.Update(ctx, role, metav1.UpdateOptions{}); err != nil {
			u.t.Fatalf("labtest: updating ClusterRole %s: %v", u.role, err)
		}
		return
	}
	if _, err := roles.Create(ctx, role, metav1.CreateOptions{}); err != nil {
		u.t.Fatalf("labtest: creating ClusterRole %s: %v", u.role, err)
	}
	u.granted = true
	u.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := u.admin.RbacV1().ClusterRoleBindings().Delete(ctx, u.role, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			u.t.Errorf("labtest: deleting ClusterRoleBinding %s: %v", u.role, err)
		}
		if err := roles.Delete(ctx, u.role, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			u.t.Errorf("labtest: deleting ClusterRole %s: %v", u.role, err)
		}
	})
	if _, err := u.admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: u.role},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: u.role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: u.ns, Name: u.sa}},
	}, metav1.CreateOptions{}); err != nil {
		u.t.Fatalf("labtest: binding ClusterRole %s: %v", u.role, err)
	}
}
