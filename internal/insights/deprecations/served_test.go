package deprecations

import (
	"slices"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// ServedAt is what a cluster of each version would tell Helm: the versions
// and kinds it serves, not every version client-go knows.
func TestServedAt(t *testing.T) {
	for _, tc := range []struct {
		v          string
		has, lacks []string
	}{
		{"1.32",
			[]string{"v1", "v1/Pod", "apps/v1/Deployment", "policy/v1", "policy/v1/PodDisruptionBudget", "autoscaling/v2",
				"apiregistration.k8s.io/v1/APIService", "apiextensions.k8s.io/v1/CustomResourceDefinition", "flowcontrol.apiserver.k8s.io/v1/FlowSchema"},
			[]string{"policy/v1beta1", "policy/v1beta1/PodSecurityPolicy", "extensions/v1beta1/Ingress", "autoscaling/v2beta2",
				"batch/v1beta1/CronJob", "resource.k8s.io/v1beta1/ResourceClaim", "admission.k8s.io/v1/AdmissionReview", "v1/ListOptions"}},
		{"1.24",
			[]string{"policy/v1beta1/PodSecurityPolicy", "policy/v1/PodDisruptionBudget", "batch/v1beta1/CronJob"},
			[]string{"extensions/v1beta1/Ingress", "flowcontrol.apiserver.k8s.io/v1/FlowSchema"}},
		{"1.20",
			[]string{"policy/v1beta1/PodDisruptionBudget", "networking.k8s.io/v1/Ingress"},
			[]string{"policy/v1/PodDisruptionBudget"}},
	} {
		got := ServedAt(kubeversion.MustParse(tc.v))
		if !slices.IsSorted(got) {
			t.Errorf("%s: not sorted", tc.v)
		}
		for _, s := range tc.has {
			if !slices.Contains(got, s) {
				t.Errorf("%s: lacks %s", tc.v, s)
			}
		}
		for _, s := range tc.lacks {
			if slices.Contains(got, s) {
				t.Errorf("%s: has %s, which it does not serve", tc.v, s)
			}
		}
		for _, s := range got {
			if strings.Contains(s, "alpha") {
				t.Errorf("%s: has alpha version %s", tc.v, s)
			}
		}
	}
}
