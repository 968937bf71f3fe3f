package manifest

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestValidateMeta: each kind's name is held to the API server's rule for
// that kind, and namespace, labels and annotations to apimachinery's.
func TestValidateMeta(t *testing.T) {
	long := strings.Repeat("a", 64)
	cases := []struct {
		apiVersion, kind string
		meta             metav1.ObjectMeta
		field            string // the field refused; "" for none
	}{
		{"apps/v1", "Deployment", metav1.ObjectMeta{Name: "web.v2"}, ""},
		{"apps/v1", "Deployment", metav1.ObjectMeta{Name: "Web"}, "metadata.name"},
		{"apps/v1", "Deployment", metav1.ObjectMeta{Name: strings.Repeat("a", 254)}, "metadata.name"},
		{"v1", "Service", metav1.ObjectMeta{Name: "web.v2"}, "metadata.name"}, // a DNS-1035 label
		{"v1", "Service", metav1.ObjectMeta{Name: "1web"}, "metadata.name"},
		{"v1", "Service", metav1.ObjectMeta{Name: "web-1"}, ""},
		{"v1", "Namespace", metav1.ObjectMeta{Name: "team.a"}, "metadata.name"}, // a DNS-1123 label
		{"rbac.authorization.k8s.io/v1", "ClusterRole", metav1.ObjectMeta{Name: "system:controller:foo"}, ""},
		{"rbac.authorization.k8s.io/v1", "ClusterRole", metav1.ObjectMeta{Name: "a/b"}, "metadata.name"},
		{"batch/v1", "CronJob", metav1.ObjectMeta{Name: strings.Repeat("c", 53)}, "metadata.name"},
		{"batch/v1", "CronJob", metav1.ObjectMeta{Name: strings.Repeat("c", 52)}, ""},
		{"example.com/v1", "Widget", metav1.ObjectMeta{Name: "Big"}, "metadata.name"},                   // a custom resource
		{"example.k8s.io/v1", "Unknown", metav1.ObjectMeta{Name: "Big:One"}, ""},                        // a path segment
		{"apps/v1", "Deployment", metav1.ObjectMeta{GenerateName: "web-", Namespace: "a"}, ""},          // no name: said elsewhere
		{"apps/v1", "Deployment", metav1.ObjectMeta{Name: "web", Namespace: "A"}, "metadata.namespace"}, // a DNS-1123 label
		{"apps/v1", "Deployment", metav1.ObjectMeta{Name: "web", Labels: map[string]string{"a": long}}, "metadata.labels"},
		{"apps/v1", "Deployment", metav1.ObjectMeta{Name: "web", Labels: map[string]string{"bad key": "v"}}, "metadata.labels"},
		{"apps/v1", "Deployment", metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"/x": "v"}}, "metadata.annotations"},
		{"apps/v1", "Deployment", metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"a": "\x1b[2J any value"}}, ""},
	}
	for _, tc := range cases {
		errs := ValidateMeta(tc.apiVersion, tc.kind, &tc.meta)
		switch {
		case tc.field == "" && len(errs) > 0:
			t.Errorf("%s %q: refused: %v", tc.kind, tc.meta.Name, errs)
		case tc.field != "" && (len(errs) != 1 || errs[0].Field != tc.field):
			t.Errorf("%s %q: %v; want one error on %s", tc.kind, tc.meta.Name, errs, tc.field)
		case tc.field != "" && MetaFix(tc.kind, errs[0]) == "":
			t.Errorf("%s %q: no fix", tc.kind, tc.meta.Name)
		}
	}
}

// TestOutOfRange: an integer too large for its field is said out of range
// with the field's range; a fraction is still the wrong type, with its
// value.
func TestOutOfRange(t *testing.T) {
	for _, tc := range []struct{ err, want string }{
		{"json: cannot unmarshal number 3000000000 into Go struct field NodePoolSpec.spec.weight of type int32", "3000000000 is out of range (-2147483648 to 2147483647)"},
		{"json: cannot unmarshal number -1 into Go struct field X.spec.n of type uint8", "-1 is out of range (0 to 255)"},
		{"json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32", "expected an integer, got number 1.5"},
		{"json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32", "expected an integer, got string"},
	} {
		if got := CleanJSONError(errors.New(tc.err)); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.err, got, tc.want)
		}
	}
}
